"""A container whose first run died within minutes and that has been ready since is the
start-up race of its stack (dcgm-exporter before the driver), not a failure; a longer run
that ended in an error, a second restart or an OOM kill still is."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest

from gpunode.bundle.kube import Pod
from gpunode.checks.pods import judge_pod
from gpunode.model import Status

NOW = datetime(2025, 5, 20, 10, 0, tzinfo=UTC)


def _pod(*, restarts: int, ready: bool, started: str, finished: str, reason: str = "Error") -> Pod:
    status: dict[str, Any] = {
        "phase": "Running",
        "containerStatuses": [{
            "name": "nvidia-dcgm-exporter", "ready": ready, "restartCount": restarts,
            "state": {"running": {"startedAt": finished}},
            "lastState": {"terminated": {"reason": reason, "exitCode": 137 if reason == "OOMKilled" else 1,
                                         "startedAt": started, "finishedAt": finished}},
        }],
    }
    obj = {"metadata": {"name": "nvidia-dcgm-exporter-t6w5b", "namespace": "gpu-operator"},
           "spec": {"containers": [{"name": "nvidia-dcgm-exporter"}]}, "status": status}
    return msgspec.convert(obj, Pod)


def test_one_early_restart_then_ready_is_healthy() -> None:
    pod = _pod(restarts=1, ready=True, started="2025-05-20T09:56:05Z", finished="2025-05-20T09:59:24Z")
    assert judge_pod(pod, "dcgm-exporter", NOW).status is Status.OK


@pytest.mark.parametrize(("restarts", "ready", "started", "reason"), [
    (1, True, "2025-05-20T09:20:00Z", "Error"),   # a run of 40 minutes that ended in an error
    (2, True, "2025-05-20T09:58:00Z", "Error"),   # it failed again after the first retry
    (1, False, "2025-05-20T09:58:00Z", "Error"),  # not ready since
    (1, True, "2025-05-20T09:58:00Z", "OOMKilled"),  # its limit still stands
])
def test_restarts_that_are_not_a_start_up_race_still_count(
        restarts: int, ready: bool, started: str, reason: str) -> None:
    pod = _pod(restarts=restarts, ready=ready, started=started, finished="2025-05-20T09:59:00Z",
               reason=reason)
    assert judge_pod(pod, "dcgm-exporter", NOW).status is not Status.OK


def test_repeated_error_exits_after_long_runs_stay_news_however_old() -> None:
    """node-feature-discovery's worker exited about once a day after half an hour or more of
    work (kubernetes-sigs/node-feature-discovery#122): three restarts, the last two hours
    before collection, each run far longer than a start-up race."""
    pod = _pod(restarts=3, ready=True, started="2025-05-20T07:30:00Z", finished="2025-05-20T08:00:00Z")
    assert judge_pod(pod, "nfd", NOW).status is Status.DEGRADED


@pytest.mark.parametrize(("restarts", "started"), [
    (1, "2025-05-20T07:30:00Z"),   # one old exit: not a habit
    (3, "2025-05-20T07:58:00Z"),   # old exits within minutes of starting: start-up races
])
def test_old_error_exits_that_are_no_habit_are_healthy(restarts: int, started: str) -> None:
    pod = _pod(restarts=restarts, ready=True, started=started, finished="2025-05-20T08:00:00Z")
    assert judge_pod(pod, "nfd", NOW).status is Status.OK
