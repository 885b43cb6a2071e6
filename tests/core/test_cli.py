"""The CLI's contract: exit codes, one-line errors, output formats."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from inprocess import run_cli


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """The entry point's ``main`` in this process (tests/inprocess.py): exit code and output."""
    return run_cli(*args)


def test_failures_found_exit_1_and_json_is_report_v1(handmade: Path) -> None:
    proc = run("diagnose", "--from", str(handmade), "-o", "json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert report["schema"] == "gpunode.report/v1"
    node = report["nodes"][0]
    assert node["root_causes"][0]["cause"] == "kernel_headers_missing"
    assert {"component", "layer", "status", "blocked_by", "summary"} <= set(node["components"][0])
    assert report["groups"] == [
        {
            "cause": "kernel_headers_missing",
            "component": "driver",
            "title": node["root_causes"][0]["title"],
            "nodes": ["gpu-a1"],
        }
    ]


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "cluster").mkdir()
    (tmp_path / "cluster/nodes.json").write_text("not json")
    proc = run("diagnose", "--from", str(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "cluster/nodes.json" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_unknown_node_is_usage_error(handmade: Path) -> None:
    proc = run("diagnose", "--from", str(handmade), "no-such-node")
    assert proc.returncode == 2 and "no-such-node" in proc.stderr


def test_unknown_option_exit_2() -> None:
    proc = run("diagnose", "--bogus")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_markdown_and_stack_render(handmade: Path) -> None:
    md = run("diagnose", "--from", str(handmade), "-o", "markdown")
    assert "## gpu-a1: `kernel_headers_missing`" in md.stdout
    stack = run("stack", "--from", str(handmade))
    assert stack.returncode == 1
    assert "L1 hardware enablement" in stack.stdout and "container-toolkit" in stack.stdout
