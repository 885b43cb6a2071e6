"""``validate --active --timeout``: the pods' wait is the whole run's deadline too (issue 23).

Test pods that never finish are waited for until the deadline, not past it: they fail as
not finished, the run reports (exit 1) and its clean-up still deletes every object it made
after the deadline (the clean-up's requests are outside it, bounded by their own timeouts).
A deadline that leaves a check unknown (its objects not made or not read in time) is exit 3
naming it; a create whose answer the deadline cut is found by label and deleted.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from fake_workloads import WorkloadScript, serve_with_workloads

from gpunode.cli import main

pytestmark = pytest.mark.slow  # waits for a real deadline
#: Room for the collection before the pods on a busy two-core machine (about 5 s there, so 2x).
DEADLINE_S = 10


def test_pods_that_never_finish_fail_at_the_deadline_and_are_cleaned_up(
        falcon_healthy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    script = WorkloadScript(hang=frozenset({"gpu-wk-01", "gpu-wk-02"}))
    with serve_with_workloads(falcon_healthy, script) as server:
        monkeypatch.setattr(sys, "argv", [
            "gpunode", "validate", "--kubeconfig", str(server.running.kubeconfig_path), "--active",
            "--timeout", f"{DEADLINE_S}s", "--scrape-interval", "0", "-q", "-o", "json"])
        started = time.monotonic()
        with pytest.raises(SystemExit) as stop:
            main()
        took = time.monotonic() - started
        left = server.overlay.our_objects()
    out, err = capsys.readouterr()
    assert stop.value.code == 1, err
    assert "Traceback" not in err
    checks = {c["id"]: c for cat in json.loads(out)["categories"] for c in cat["checks"]}
    assert checks["gpu.workload-smoke"]["verdict"] == "fail", checks["gpu.workload-smoke"]
    assert "did not finish" in checks["gpu.workload-smoke"]["summary"], checks["gpu.workload-smoke"]
    assert checks["infra.active-cleanup"]["verdict"] == "pass", checks["infra.active-cleanup"]
    assert left == []
    assert DEADLINE_S - 1 < took < DEADLINE_S + 2 + 5, took  # waited to the deadline, not past it


def test_a_deadline_used_up_before_the_pods_is_exit_3_and_leaves_nothing(
        falcon_healthy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A deadline used up before the test pods: exit 3 in one line naming what was not read
    (the lists, a node's files, the second scrape or the active checks, by how far the run
    got), never a report, and nothing left in the cluster. The deadline is one no run reaches
    the test pods within: at 0.2 s a quick run did, and the smoke pod's unfinished wait is then
    a failed check in a report (exit 1, the test above)."""
    with serve_with_workloads(falcon_healthy) as server:
        monkeypatch.setattr(sys, "argv", [
            "gpunode", "validate", "--kubeconfig", str(server.running.kubeconfig_path), "--active",
            "--timeout", "0.02s", "--scrape-interval", "0", "-q", "-o", "json"])
        with pytest.raises(SystemExit) as stop:
            main()
        left = server.overlay.our_objects()
    out, err = capsys.readouterr()
    assert stop.value.code == 3 and out == "", err
    assert err.startswith("gpunode: ") and "--timeout 0.02 s" in err and len(err.splitlines()) == 1, err
    assert left == []
