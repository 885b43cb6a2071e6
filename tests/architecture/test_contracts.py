"""The package's import contracts (import-linter, contracts.toml) and its import graph.

docs/architecture.md draws the layers; these tests keep the code to the drawing: a wrong-way
import fails with import-linter's message naming the rule, the two modules and the line.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import importgraph as imports
import pytest

HERE = Path(__file__).parent
CONTRACTS = HERE / "contracts.toml"
SRC = HERE.parents[1] / "src"
LINT = Path(sys.executable).with_name("lint-imports")

# Module-level floors (longest import chain) today; a change may lower it, never raise it.
MODULE_FLOORS_MAX = 12


def lint(src: Path = SRC) -> subprocess.CompletedProcess[str]:
    """lint-imports on the package found under ``src``, without its cache (a fresh read)."""
    env = {**os.environ, "PYTHONPATH": str(src), "NO_COLOR": "1"}
    return subprocess.run(
        [str(LINT), "--config", str(CONTRACTS), "--no-cache"],
        capture_output=True, text=True, env=env, check=False, timeout=120,
    )


@pytest.fixture(scope="module")
def wrong_way(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    """The package copied, with one reporter importing the validate runner."""
    src = tmp_path_factory.mktemp("src")
    shutil.copytree(SRC / "gpunode", src / "gpunode", ignore=shutil.ignore_patterns("__pycache__"))
    style = src / "gpunode" / "report" / "style.py"
    style.write_text(style.read_text(encoding="utf-8") + "\nfrom gpunode.validate import runner  # noqa\n")
    return lint(src)


def test_the_contracts_are_kept() -> None:
    result = lint()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "broken" not in result.stdout.lower().replace("0 broken", "")


def test_a_wrong_way_import_breaks_the_layers_with_a_readable_message(
        wrong_way: subprocess.CompletedProcess[str]) -> None:
    out = wrong_way.stdout
    assert wrong_way.returncode == 1, out
    assert "gpunode.report is not allowed to import gpunode.validate" in out
    assert "gpunode.report.style -> gpunode.validate.runner" in out
    assert "Move the shared" in out  # the guidance: what to do instead


def test_a_wrong_way_import_breaks_the_reporters_rule(wrong_way: subprocess.CompletedProcess[str]) -> None:
    assert "Reporters render what they are given" in wrong_way.stdout
    assert "BROKEN" in wrong_way.stdout


def test_no_module_imports_itself_round_a_circle() -> None:
    """Every import counts, those inside functions too (as import-linter reads them)."""
    assert imports.circles(imports.graph(parents=False)) == []


def test_the_floors_do_not_grow() -> None:
    g = imports.graph(parents=False)
    floors = imports.floors(g)
    assert floors <= MODULE_FLOORS_MAX, " -> ".join(imports.longest_chain(g))


def test_the_counter_sees_a_circle_and_a_floor(tmp_path: Path) -> None:
    """The counter itself: a package whose b and c import each other, under a."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg import b\n")
    (pkg / "b.py").write_text("def f():\n    from pkg.c import g\n")
    (pkg / "c.py").write_text("import pkg.b\nfrom pkg import d\n")
    (pkg / "d.py").write_text("if False:\n    import os\n")
    g = imports.graph(parents=False, src=tmp_path, package="pkg")
    assert imports.circles(g) == [["pkg.b", "pkg.c"]]
    assert imports.floors(g) == 3  # a -> (b, c) -> d
    assert imports.circles(imports.graph(deferred=False, parents=False, src=tmp_path, package="pkg")) == []
