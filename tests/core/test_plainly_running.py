"""The node pass's short forms for a plainly running pod (checks.pods.running_ok,
diagnose._pod_ref) give what reading the pod's status in full gives, so the report stays the
same whichever path a pod takes; a pod that is not plainly running takes the full reading."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from gpunode import diagnose
from gpunode.bundle.kube import Pod
from gpunode.checks.pods import _read_ok, plainly_running, running_ok

_RUNNING = {"running": {"startedAt": "2026-12-07T09:00:00Z"}}
_DONE = {"terminated": {"exitCode": 0, "reason": "Completed", "finishedAt": "2026-12-07T08:59:00Z"}}


def _pod(containers: int, *, init: int = 0, reason: str | None = None) -> Pod:
    status: dict[str, Any] = {
        "phase": "Running",
        "containerStatuses": [{"name": f"c{i}", "ready": True, "restartCount": 0, "state": _RUNNING}
                              for i in range(containers)],
        "initContainerStatuses": [{"name": f"i{i}", "ready": True, "restartCount": 0, "state": _DONE}
                                  for i in range(init)],
    }
    if reason:
        status["reason"] = reason
    obj = {"metadata": {"name": "nvidia-device-plugin-daemonset-x7k2p", "namespace": "gpu-operator"},
           "spec": {"containers": [{"name": f"c{i}"} for i in range(containers)]}, "status": status}
    return msgspec.convert(obj, Pod)


@pytest.mark.parametrize("pod", [_pod(1), _pod(2), _pod(1, init=3), _pod(2, init=1, reason="Running")])
def test_short_forms_equal_the_full_reading(pod: Pod) -> None:
    ready = plainly_running(pod)
    assert ready == len(pod.status.container_statuses)
    assert running_ok(pod, "device-plugin", ready) == _read_ok(pod, "device-plugin")
    assert diagnose._pod_ref(pod) == diagnose._read_pod_ref(pod)


def test_a_restarted_or_unready_pod_takes_the_full_reading() -> None:
    restarted = msgspec.structs.replace(_pod(1), status=msgspec.structs.replace(
        _pod(1).status, container_statuses=[msgspec.structs.replace(
            _pod(1).status.container_statuses[0], restart_count=1)]))
    waiting_init = msgspec.convert({"metadata": {"name": "p", "namespace": "n"}, "status": {
        "phase": "Running", "containerStatuses": [{"name": "c", "ready": True, "state": _RUNNING}],
        "initContainerStatuses": [{"name": "i", "state": {"running": {}}}]}}, Pod)
    assert plainly_running(restarted) == 0
    assert plainly_running(waiting_init) == 0
