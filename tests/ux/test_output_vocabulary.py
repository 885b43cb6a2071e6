"""One ``-o`` vocabulary across commands, through the command line (its ``main`` in this process,
tests/inprocess.py): validate's wide and yaml; explain, causes and probe in yaml; kubectl-style
ages in tables; broken nodes before healthy ones in every view."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from gpunode.report.fleet import age, human_duration
from inprocess import run_cli


def _run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, stdin=stdin, env={"COLUMNS": "100", "PATH": "/usr/bin:/bin"})


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("vocab") / "bundle"
    assert run_cli("sim", "falcon-ai-broken", "-o", str(out)).returncode == 0
    return out


def test_validate_yaml_is_its_json(broken: Path) -> None:
    as_json = _run("validate", "--from", str(broken), "-o", "json")
    as_yaml = _run("validate", "--from", str(broken), "-o", "yaml")
    assert as_json.returncode == as_yaml.returncode == 1
    assert yaml.safe_load(as_yaml.stdout) == json.loads(as_json.stdout)


def test_validate_wide_has_more_columns(broken: Path) -> None:
    table = _run("validate", "--from", str(broken))
    wide = _run("validate", "--from", str(broken), "-o", "wide")
    assert table.returncode == wide.returncode == 1
    assert "title" in wide.stdout and "nodes" in wide.stdout
    assert "Every node is Ready" in wide.stdout and "Every node is Ready" not in table.stdout


@pytest.mark.parametrize("args", [("causes", "--layer", "1"), ("explain", "-")])
def test_explain_and_causes_yaml_are_their_json(args: tuple[str, ...]) -> None:
    text = "modprobe: ERROR: could not insert 'nvidia': Key was rejected by service\n"
    as_json = _run(*args, "-o", "json", stdin=text)
    as_yaml = _run(*args, "-o", "yaml", stdin=text)
    assert as_json.returncode == as_yaml.returncode
    assert yaml.safe_load(as_yaml.stdout) == json.loads(as_json.stdout)


def test_probe_yaml_on_a_host_without_gpu(tmp_path: Path) -> None:
    device = tmp_path / "sys" / "bus" / "pci" / "devices" / "0000:00:02.0"
    device.mkdir(parents=True)
    (device / "vendor").write_text("0x8086\n")
    done = _run("probe", "--host-root", str(tmp_path), "-o", "yaml")
    assert done.returncode == 0, done.stderr
    doc = yaml.safe_load(done.stdout)
    assert doc["gpu_node"] is False and "not a GPU node" in doc["reason"]


def test_tables_show_kubectl_ages_and_wide_the_time(broken: Path) -> None:
    table = _run("diagnose", "--from", str(broken))
    head = next(line for line in table.stdout.splitlines() if line.startswith("NODE"))
    assert head.split() == ["NODE", "GPUS", "COMPONENT", "CAUSE", "AGE", "BLOCKED"]
    row = next(line for line in table.stdout.splitlines() if "kernel_headers_missing" in line)
    assert row.split()[-2:] == ["52m", "7"]  # failing since 08:23, collected 09:15
    wide = _run("diagnose", "--from", str(broken), "-o", "wide")
    row = next(line for line in wide.stdout.splitlines() if "kernel_headers_missing" in line)
    assert "52m" in row and "2025-05-20 08:23" in row and " L1 " in row


@pytest.mark.parametrize(("seconds", "shown"), [
    (45, "45s"), (119, "119s"), (330, "5m30s"), (300, "5m"), (3 * 3600, "3h"), (5 * 3600 + 60, "5h1m"),
    (47 * 3600, "47h"), (2 * 86400, "2d"), (2 * 86400 + 4 * 3600, "2d4h"), (30 * 86400, "30d"),
    (3 * 365 * 86400, "3y"), (-5, "<invalid>"),
])
def test_human_duration_is_kubectls(seconds: int, shown: str) -> None:
    assert human_duration(seconds) == shown


def test_age_counts_to_the_collection_time() -> None:
    assert age("2025-05-20T08:23:00Z", "2025-05-20T09:15:00Z") == "52m"
    assert age(None, "2025-05-20T09:15:00Z") == "-"
    assert age("not a time") == "-"


@pytest.mark.parametrize("output", ["table", "wide", "markdown", "html"])
def test_stack_puts_the_broken_node_first(broken: Path, output: str) -> None:
    done = _run("stack", "--from", str(broken), "-o", output)
    assert done.returncode == 1
    text = done.stdout
    healthy = text.find("gpu-wk-01") if output != "html" else text.find('data-node="gpu-wk-01"')
    sick = text.find("gpu-wk-02") if output != "html" else text.find('data-node="gpu-wk-02"')
    assert -1 < sick < healthy, output
