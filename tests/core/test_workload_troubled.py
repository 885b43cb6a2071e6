"""``facts.workload_troubled``: a GPU workload that has not started (Pending or Failed, a
container or init container waiting with a reason) or whose container's last run ended in an
error that left a message. Read in one pass over the pod's statuses for every workload pod of
the fleet; these pin each of its cases, and that a running pod or a clean exit is none."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from gpunode.bundle import kube
from gpunode.facts import workload_stuck, workload_troubled


def _pod(phase: str = "Running", *, init: list[dict[str, Any]] | None = None,
         containers: list[dict[str, Any]] | None = None) -> kube.Pod:
    return msgspec.convert({
        "metadata": {"name": "train-0", "namespace": "default"},
        "spec": {"nodeName": "gpu-1", "containers": [{"name": "train", "image": "cuda:12"}]},
        "status": {"phase": phase, "initContainerStatuses": init or [],
                   "containerStatuses": containers if containers is not None else [
                       {"name": "train", "state": {"running": {}}}]},
    }, kube.Pod, from_attributes=False)


def _ended(code: int, message: str) -> dict[str, Any]:
    return {"terminated": {"exitCode": code, "message": message, "reason": "Error"}}


@pytest.mark.parametrize(("pod", "troubled"), [
    (_pod(), False),
    (_pod("Pending", containers=[]), True),
    (_pod("Failed"), True),
    (_pod(init=[{"name": "wait", "state": {"waiting": {"reason": "PodInitializing"}}}]), True),
    (_pod(containers=[{"name": "train", "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]), True),
    (_pod(containers=[{"name": "train", "state": {"waiting": {}}}]), False),  # no reason: not stuck
    (_pod(containers=[{"name": "train", "state": _ended(1, "CUDA error: no CUDA-capable device")}]), True),
    (_pod(containers=[{"name": "train", "state": {"running": {}},
                       "lastState": _ended(139, "NCCL WARN Cuda failure")}]), True),
    (_pod(containers=[{"name": "train", "state": _ended(0, "done")}]), False),  # a clean exit
    (_pod(containers=[{"name": "train", "state": _ended(1, "")}]), False),  # no message left
])
def test_a_workload_is_troubled_when_it_has_not_started_or_ended_in_an_error(pod: kube.Pod,
                                                                             troubled: bool) -> None:
    assert workload_troubled(pod) is troubled
    if workload_stuck(pod):  # a stuck workload is a troubled one
        assert workload_troubled(pod)
