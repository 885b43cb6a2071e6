"""A FailedScheduling event of a pod that then ran is history, not a fault of the node it ran on.

AI on EKS, "Stable Diffusion on GPU" (https://awslabs.github.io/ai-on-eks/docs/ai/inference/GPUs/
stablediffusion-gpus): the Ray GPU worker's describe shows a 41-minute-old FailedScheduling
"8 Insufficient nvidia.com/gpu" from before Karpenter launched its GPU node, then Started; the
pod runs. A collector lists a pod's events whatever its phase, so the bundle holds the old
warning beside a Running pod on a node that advertises its GPUs. The same warning on a pod
still Pending is the scheduler's current word and stays read.
"""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

POD = {"kind": "Pod", "name": "raycluster-worker-gpu-85d22", "namespace": "stablediffusion"}
FAILED = ("0/8 nodes are available: 1 Insufficient cpu, 3 Insufficient memory, "
          "8 Insufficient nvidia.com/gpu. preemption: 0/8 nodes are available: "
          "8 No preemption victims found for incoming pod.")


def _worker(state: str, *, started: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {"kind": "workload", "name": POD["name"], "namespace": POD["namespace"], "container": "worker",
         "state": state},
        {"kind": "event", "object": POD, "type": "Warning", "reason": "FailedScheduling", "message": FAILED}]
    if started:
        out.append({"kind": "event", "object": POD, "type": "Normal", "reason": "Started",
                    "message": "Started container worker"})
    return out


_CLUSTER = {"driver_mode": "host", "components": [], "device_plugin": "static", "runtime_class": False}


def test_an_old_failedscheduling_of_a_pod_that_runs_stays_healthy() -> None:
    case = synthetic_case("x-sched-later", _worker("Running", started=True), platform="eks", cluster=_CLUSTER)
    assert top_pair(case) is None


def test_the_same_warning_on_a_pod_still_pending_is_read() -> None:
    case = synthetic_case("x-sched-pending", _worker("Pending", started=False), platform="eks",
                          healthy=False, cluster=_CLUSTER)
    assert top_pair(case) is not None
