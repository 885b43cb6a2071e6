"""``diagnose --component`` and ``--layer`` change only what is shown, through the command
line (its ``main`` in this process, tests/inprocess.py): the exit code stays the whole
report's and stderr says in one line what was hidden; with ``--watch`` the same filters
apply to each refreshed report."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from inprocess import run_cli


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("filters") / "bundle"
    assert run_cli("sim", "falcon-ai-broken", "-o", str(out)).returncode == 0
    return out


def _run(bundle: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli("diagnose", "--from", str(bundle), *args)


def _causes(report: dict) -> list[tuple[str, int]]:
    return [(rc["component"], rc["layer"]) for n in report["nodes"] for rc in n["root_causes"]] + [
        (rc["component"], rc["layer"]) for rc in report["cluster"]["root_causes"]]


def test_component_filter_keeps_the_exit_code_and_says_what_it_hid(broken: Path) -> None:
    whole = _run(broken, "-o", "json")
    assert whole.returncode == 1 and ("driver", 1) in _causes(json.loads(whole.stdout))
    shown = _run(broken, "--component", "device-plugin,gfd", "-o", "json")
    assert shown.returncode == 1  # the driver failure still fails the run
    report = json.loads(shown.stdout)
    assert _causes(report) == []
    for node in report["nodes"]:
        assert {c["component"] for c in node["components"]} <= {"device-plugin", "gfd"}
    assert shown.stderr.strip().splitlines() == [
        "diagnose: 1 root cause on components not shown (the exit code counts them)"]


def test_layer_filter_shows_the_layer_and_hides_nothing_of_it(broken: Path) -> None:
    shown = _run(broken, "--layer", "1", "--layer", "0")
    assert shown.returncode == 1
    assert "kernel_headers_missing" in shown.stdout
    assert "root cause" not in shown.stderr  # the only root cause is on layer 1: nothing hidden
    hidden = _run(broken, "--layer", "3")
    assert hidden.returncode == 1
    assert "No root cause shown on 2 GPU nodes (--component/--layer)." in hidden.stdout
    assert "No root cause found" not in hidden.stdout
    upper = _run(broken, "--layer", "3,4", "-o", "markdown")
    assert upper.returncode == 1 and "kernel_headers_missing" not in upper.stdout
    assert "1 root cause on layers not shown" in upper.stderr


def test_both_filters_must_hold(broken: Path) -> None:
    shown = _run(broken, "--component", "driver", "--layer", "3", "-o", "json")
    assert shown.returncode == 1 and _causes(json.loads(shown.stdout)) == []
    assert "on components or layers not shown" in shown.stderr


def test_a_healthy_cluster_filtered_exits_0(tmp_path: Path) -> None:
    out = tmp_path / "ok"
    assert run_cli("sim", "falcon-ai", "-o", str(out)).returncode == 0
    shown = _run(out, "--layer", "1")
    assert shown.returncode == 0 and "not shown" not in shown.stderr


@pytest.mark.parametrize(("args", "said"), [
    (("--component", "drivr"), "--component: unknown component drivr"),
    (("--layer", "7"), "--layer '7': layers are 0 to 5"),
    (("--layer", "one"), "--layer 'one'"),
])
def test_bad_filters_are_one_line_exit_2(broken: Path, args: tuple[str, ...], said: str) -> None:
    done = _run(broken, *args)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0]


def test_watch_applies_the_filters_to_each_evaluation(broken: Path) -> None:
    lines = _run(broken, "--watch", "--count", "2", "--interval", "0", "--component",
                 "device-plugin,gfd", "-o", "json")
    assert lines.returncode == 1  # the hidden driver failure still fails the run
    documents = [json.loads(line) for line in lines.stdout.splitlines()]
    assert len(documents) == 2
    for report in documents:
        assert _causes(report) == []
        for node in report["nodes"]:
            assert {c["component"] for c in node["components"]} <= {"device-plugin", "gfd"}
    # said once: the hidden root cause did not change between the evaluations
    assert lines.stderr.strip().splitlines() == [
        "diagnose: 1 root cause on components not shown (the exit code counts them)"]


def test_watch_table_shows_and_compares_the_filtered_report(broken: Path) -> None:
    shown = _run(broken, "--watch", "--count", "2", "--interval", "0", "--layer", "1")
    assert shown.returncode == 1
    assert "kernel_headers_missing" in shown.stdout
    assert shown.stdout.rstrip().endswith("no change (1 root causes shown)")
    hidden = _run(broken, "--watch", "--count", "2", "--interval", "0", "--layer", "3")
    assert hidden.returncode == 1
    assert "No root cause shown on 2 GPU nodes (--component/--layer)." in hidden.stdout
    assert hidden.stdout.rstrip().endswith("no change (0 root causes shown)")
    assert "1 root cause on layers not shown" in hidden.stderr
