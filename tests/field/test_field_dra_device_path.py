"""CRI-O refusing a privileged container a device whose container path already exists on the
host (cri-o internal/factory/container device.go): a file in the wrong state, and, for a pod
whose GPUs come from its ResourceClaims alone, the DRA kubelet plugin's doing, since the plugin
prepared the devices and wrote the CDI spec that maps them (kubernetes-sigs/dra-driver-nvidia-gpu
#477: its host /dev mount let NVML create the device nodes on the host). Look-alikes: the same
refusal for a pod that asks for nvidia.com/gpu (a device plugin's devices: the line does not say
whose), and lines about a path that exists which report no failure."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

from gpunode.decisive import decisive_line
from gpunode.kb import load_kb

REFUSED = "privileged container was configured with a device container path that already exists on the host"
CRIO = {"runtime": "crio", "cdi": True}


def _pod(resources: dict[str, Any], claims: list[dict[str, str]]) -> list[dict[str, Any]]:
    return [{"kind": "pod-state", "component": "dra-kubelet-plugin", "state": "Running"},
            {"kind": "workload", "name": "gpu-job", "namespace": "default", "container": "cuda",
             "resources": resources, "resourceClaims": claims, "state": "CreateContainerError"},
            {"kind": "event", "object": {"kind": "Pod", "name": "gpu-job", "namespace": "default"},
             "type": "Warning", "reason": "Failed", "message": REFUSED}]


def test_the_refusal_is_a_decisive_line_of_a_file_in_the_wrong_state() -> None:
    kb = load_kb()
    assert decisive_line([REFUSED], kb.class_of) is not None
    assert kb.class_of(REFUSED) == "error_file_state"


def test_a_claimed_gpu_refused_is_the_dra_plugins() -> None:
    claims = [{"name": "gpu", "resourceClaimTemplateName": "single-gpu"}]
    case = synthetic_case("x-dra-path", _pod({"limits": {}}, claims), platform="crio", cluster=CRIO,
                          healthy=False)
    assert top_pair(case) == ("dra-kubelet-plugin", "error_file_state")


def test_a_pod_with_a_gpu_resource_is_not_laid_on_the_dra_plugin() -> None:
    case = synthetic_case("x-plugin-path", _pod({"limits": {"nvidia.com/gpu": "1"}}, []),
                          platform="crio", cluster=CRIO, healthy=False)
    top = top_pair(case)
    assert top is None or top[0] != "dra-kubelet-plugin"


def test_a_path_that_exists_without_a_failure_is_not_decisive() -> None:
    kb = load_kb()
    for quiet in ('level=info msg="Skipping the device path that already exists on the host"',
                  "directory /var/run/cdi already exists"):
        assert decisive_line([quiet], kb.class_of) is None, quiet
