"""The kubelet's own count of free devices refusing a GPU workload names the kubelet, whatever
reason the pod shows. Its device manager ("requested number of devices unavailable for <r>.
Requested: N, Available: M") refuses at admission (UnexpectedAdmissionError,
``gpunode.checks.admission``); the built-in NVIDIA GPU manager that came before device plugins
("requested number of GPUs unavailable. Requested: N, Available: M", resource
alpha.kubernetes.io/nvidia-gpu, Kubernetes 1.6 to 1.10) refused when it started the container,
so the pod shows RunContainerError or a crash loop with that message. A pod asking the legacy
resource is a GPU workload.

Sources: kubernetes/kubernetes#42412 (the GPU manager keeping a completed container's four GPUs,
so its restart fails), the GPU manager's refusal as its source writes it
(https://github.com/kubernetes/kubernetes/blob/master/pkg/kubelet/gpu/nvidia/nvidia_gpu_manager.go,
before its removal) and the fix that followed for restarting pods, kubernetes/kubernetes#42942.
Look-alikes: the same count for a pod a scheduler outside the stack placed (kube-batch, its own
cache of free devices: kubernetes-sigs/kube-batch#931) stays contention, a running workload of
the legacy resource is healthy, and a count logged at info level is no error."""

from __future__ import annotations

from typing import Any

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.decisive import severity

LEGACY = {"alpha.kubernetes.io/nvidia-gpu": "4", "cpu": "500m", "memory": "128Mi"}

REFUSED = {
    # https://github.com/kubernetes/kubernetes/issues/42412 (kubectl get pods' STATUS)
    "k8s-42412": ({"state": "RunContainerError", "restarts": 0},
                  "requested number of GPUs unavailable. Requested: 4, Available: 0"),
    # pkg/kubelet/gpu/nvidia/nvidia_gpu_manager.go's refusal, of a restarting pod
    # (kubernetes/kubernetes#42942: a container restart stranded the GPUs)
    "gpu-manager": ({"state": "CrashLoopBackOff", "restarts": 5, "exit_code": 128},
                    "requested number of GPUs unavailable. Requested: 1, Available: 0"),
}


def _pod(name: str, state: dict[str, Any], message: str, **extra: Any) -> Case:
    return synthetic_case(f"kubelet-count-{name}", [
        {"kind": "workload", "name": "gpu", "namespace": "default", "container": "gpu",
         "resources": {"limits": dict(LEGACY)}, **state, "message": message, **extra},
    ], platform="docker", cluster={"driver_mode": "host"}, healthy=False)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_the_kubelets_device_count_refusing_a_container_is_the_kubelets(name: str) -> None:
    state, message = REFUSED[name]
    assert top_pair(_pod(name, state, message)) == ("kubelet", "error_resource_exhausted")


def test_a_pod_placed_by_a_scheduler_outside_the_stack_is_its_contention() -> None:
    state, message = REFUSED["k8s-42412"]
    assert top_pair(_pod("kube-batch", state, message, schedulerName="kube-batch")) is None


def test_a_running_workload_of_the_legacy_resource_is_healthy() -> None:
    case = synthetic_case("kubelet-count-running", [
        {"kind": "workload", "name": "gpu", "namespace": "default", "container": "gpu",
         "resources": {"limits": dict(LEGACY)}, "state": "Running"},
    ], platform="docker", cluster={"driver_mode": "host"})
    assert top_pair(case) is None


def test_the_count_logged_at_info_level_is_no_error() -> None:
    line = ("I0302 10:01:02.123456    1234 manager.go:500] requested number of devices unavailable "
            "for nvidia.com/gpu. Requested: 2, Available: 1")
    assert severity(line) == 0
    assert severity("requested number of GPUs unavailable. Requested: 4, Available: 0") == 1
