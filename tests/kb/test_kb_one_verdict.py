"""One verdict per signature: for every knowledge-base example, ``explain`` and
``diagnose`` say the same thing about its cause (issue 9, item 5)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.checks.signatures import _finding
from gpunode.commands.explain import _status, to_report
from gpunode.diagnose import diagnose
from gpunode.explain import EXPLAIN_SOURCES, explain_lines
from gpunode.kb import Cause, TextHit, load_kb
from gpunode.sim import build_bundle, load_scenario
from gpunode.xid import classify, xids_in_line
from inprocess import run_cli

KB = load_kb()
EXPLAINABLE = [c for c in KB.causes if c.example and any(m.source in EXPLAIN_SOURCES for m in c.match)]


@pytest.mark.parametrize("cause", EXPLAINABLE, ids=lambda c: c.code)
def test_explain_and_diagnose_give_one_verdict(cause: Cause) -> None:
    """explain's status for the cause (its exit-code vote) is the status diagnose gives
    the same line as a finding; an Xid line agrees with the Xid catalog diagnose uses."""
    result = explain_lines([cause.example])
    shown = {m.cause: m for m in to_report(result, "example", None).matches}
    assert cause.code in shown, f"{cause.code}: explain does not recognise its own example"
    explained = _status(shown[cause.code].status)
    diagnosed = _finding(cause.component, TextHit(cause, 1, cause.example), "example", {}).status
    assert explained.is_problem == diagnosed.is_problem, (cause.code, explained, diagnosed)
    for xid, message in xids_in_line(cause.example):
        info = classify(xid, message)
        if info.cause == cause.code or (
            info.cause_class == "application" and cause.component == "gpu-hardware"
        ):
            assert info.is_root_cause == cause.is_problem, (cause.code, xid)


APP_XIDS = [
    "[ 812.004] NVRM: Xid (PCI:0000:3b:00): 13, pid=2079991, name=python, Graphics Exception: ESR 0x4046",
    "[ 901.115] NVRM: Xid (PCI:0000:3b:00): 43, pid=2079991, name=python, Ch 00000010",
]


@pytest.mark.parametrize("line", APP_XIDS, ids=["xid-13", "xid-43"])
def test_application_xids_are_benign_in_both(line: str, tmp_path: Path) -> None:
    text = tmp_path / "dmesg.txt"
    text.write_text(line + "\n")
    done = run_cli("explain", str(text))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "xid_application_error" in done.stdout
    root = build_bundle(load_scenario("falcon-ai"), tmp_path / "falcon")
    dmesg = root / "nodes" / "gpu-wk-01" / "cmd" / "dmesg.txt"
    dmesg.write_text(dmesg.read_text() + line + "\n")
    report = diagnose(load_bundle(root), read_node_observations)
    assert not report.has_failures
    shutil.rmtree(root)


def test_thermal_explanation_claims_only_what_the_line_says() -> None:
    cause = KB.get("gpu_thermal_slowdown")
    assert "reached its slowdown temperature" not in cause.explanation
    assert "Which temperature triggered it is not in this line" in cause.explanation
