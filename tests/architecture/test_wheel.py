"""The wheel ships the product only: every module under src/gpunode is reached from something a
user runs (the console scripts, a ``python -m`` entry, a command or reporter loaded by name),
so a module that only tests import (a test aid) is caught here and belongs under tests/.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import importgraph

from gpunode import cli

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "gpunode"


def _entry_points() -> set[str]:
    """Console scripts, ``python -m`` modules, and modules loaded by name at run time."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    roots = {"gpunode", *(target.split(":")[0] for target in project["scripts"].values())}
    for name, path in importgraph.modules().items():
        text = path.read_text(encoding="utf-8")
        if path.name == "__main__.py" or 'if __name__ == "__main__":' in text:
            roots.add(name)
    roots.update(f"gpunode.commands.{name}" for name in cli.COMMAND_MODULES)
    registry = (PACKAGE / "report" / "__init__.py").read_text(encoding="utf-8")
    roots.update(f"gpunode.report.{name}" for name in re.findall(r'_lazy\w*\("(\w+)"', registry))
    return roots


def _reached(graph: importgraph.Graph, roots: set[str]) -> set[str]:
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph.get(module, ()))
    return seen


def test_every_module_of_the_wheel_is_reached_from_what_a_user_runs() -> None:
    graph = importgraph.graph()
    unreached = sorted(set(graph) - _reached(graph, _entry_points()))
    assert unreached == [], f"imported by nothing the product runs (tests only?): {unreached}"


def test_a_test_aid_in_the_package_would_be_found(tmp_path: Path) -> None:
    """The check itself: a module nothing imports is reported."""
    graph = {**importgraph.graph(), "gpunode.validate.test_aid": set()}
    assert "gpunode.validate.test_aid" not in _reached(graph, _entry_points())
