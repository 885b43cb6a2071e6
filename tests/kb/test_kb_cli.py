# ruff: noqa: E501  (real log lines are long)
"""``gpunode explain`` and ``gpunode causes`` through the entry point's ``main``: exit
codes, output formats, stdin and gzip input, one-line errors."""

from __future__ import annotations

import gzip
import json
import subprocess
from pathlib import Path

from kb_noise import bury

from gpunode.catalog import load_catalog
from gpunode.kb import load_kb
from inprocess import run_cli

SIGNATURE = "modprobe: ERROR: could not insert 'nvidia': Key was rejected by service"


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """The entry point's ``main`` in this process (tests/inprocess.py): exit code and output."""
    return run_cli(*args, stdin=stdin)


def test_explain_match_exits_1_and_json_names_the_cause_and_line(tmp_path: Path) -> None:
    lines, line_no = bury(SIGNATURE, 10_000, seed=4)
    log = tmp_path / "driver.log"
    log.write_text("\n".join(lines) + "\n")
    proc = run("explain", str(log), "-o", "json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert report["schema"] == "gpunode.explain/v1" and report["matched"] is True
    assert report["lines_read"] == 10_001
    best = report["matches"][0]
    assert best["cause"] == "secure_boot_enabled"
    assert best["lines"] == [{"line_no": line_no, "text": SIGNATURE}]
    assert best["fix"] and best["next_steps"]


def test_explain_nothing_found_exits_0(tmp_path: Path) -> None:
    log = tmp_path / "healthy.log"
    log.write_text("Loading NVIDIA driver kernel modules...\nDone, now waiting for signal\n")
    proc = run("explain", str(log))
    assert proc.returncode == 0, proc.stderr
    assert "no known cause recognised" in " ".join(proc.stdout.split())


def test_explain_reads_stdin_and_markdown() -> None:
    text = 'Warning: FailedCreatePodSandBox  Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for "nvidia" is configured\n'
    proc = run("explain", "-", "-o", "markdown", stdin=text)
    assert proc.returncode == 1, proc.stderr
    assert "## `runtime_handler_missing` (best match)" in proc.stdout


def test_explain_reads_gzip(tmp_path: Path) -> None:
    dump = tmp_path / "dmesg.txt.gz"
    with gzip.open(dump, "wt") as f:
        f.write(
            "[ 9123.442180] NVRM: Xid (PCI:0000:9a:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"
        )
    proc = run("explain", str(dump), "-o", "json")
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["matches"][0]["cause"] == "gpu_fallen_off_bus"
    assert report["xids"][0]["code"] == 79 and report["xids"][0]["action"] == "reboot_node"


def test_explain_component_scope(tmp_path: Path) -> None:
    log = tmp_path / "mixed.log"
    log.write_text(SIGNATURE + "\nNo devices found. Waiting indefinitely.\n")
    proc = run("explain", str(log), "--component", "device-plugin", "-o", "json")
    assert [m["cause"] for m in json.loads(proc.stdout)["matches"]] == ["device_plugin_zero_gpus"]


def test_explain_unreadable_input_is_one_line_exit_2(tmp_path: Path) -> None:
    for target in (str(tmp_path / "missing.log"), str(tmp_path)):
        proc = run("explain", target)
        assert proc.returncode == 2, (target, proc.stdout)
        assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_explain_unknown_component_is_usage_error(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_text(SIGNATURE + "\n")
    proc = run("explain", str(log), "--component", "gpu-toaster")
    assert proc.returncode == 2 and "gpu-toaster" in proc.stderr


def test_causes_json_lists_the_whole_kb() -> None:
    proc = run("causes", "-o", "json")
    assert proc.returncode == 0, proc.stderr
    entries = json.loads(proc.stdout)
    assert {e["code"] for e in entries} == set(load_kb().by_code)
    secure = next(e for e in entries if e["code"] == "secure_boot_enabled")
    assert secure["layer"] == 1 and secure["signatures"][0]["source"] == "log"


def test_causes_filters_by_layer_and_component() -> None:
    catalog = load_catalog()
    by_layer = json.loads(run("causes", "--layer", "3", "-o", "json").stdout)
    assert by_layer and {catalog.get(e["component"]).layer for e in by_layer} == {3}
    by_component = json.loads(run("causes", "--component", "dcgm-exporter", "-o", "json").stdout)
    assert by_component and {e["component"] for e in by_component} == {"dcgm-exporter"}


def test_causes_table_and_markdown_render() -> None:
    table = run("causes", "--component", "ofed")
    assert table.returncode == 0 and "mofed_repo_unreachable" in table.stdout
    md = run("causes", "--layer", "0", "-o", "markdown")
    assert "## Layer 0: host" in md.stdout and "`gpu_fallen_off_bus`" in md.stdout


def test_causes_bad_filter_is_usage_error() -> None:
    assert run("causes", "--layer", "9").returncode == 2
    assert run("causes", "--component", "gpu-toaster").returncode == 2


BOX_DRAWING = set("│┃━─╭╮╰╯┏┓┡┩└┘┌┐├┤┬┴┼═║")


def test_causes_and_explain_piped_are_plain_text(tmp_path: Path) -> None:
    """Piped (not a terminal), like diagnose: no line art, so grep and awk work on the rows."""
    causes = run("causes", "--component", "driver")
    assert causes.returncode == 0 and "secure_boot_enabled" in causes.stdout
    assert not set(causes.stdout) & BOX_DRAWING
    row = next(line for line in causes.stdout.splitlines() if line.startswith("secure_boot_enabled"))
    assert row == row.rstrip()
    log = tmp_path / "xid.log"
    log.write_text(SIGNATURE + "\nNVRM: Xid (PCI:0000:2a:00): 79, pid=0, GPU has fallen off the bus.\n")
    explain = run("explain", str(log))
    assert explain.returncode == 1
    assert not set(explain.stdout) & BOX_DRAWING
    assert "matched: secure_boot_enabled — driver" in explain.stdout and "Xids seen" in explain.stdout
