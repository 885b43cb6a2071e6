"""A GPU pod whose container the kubelet failed to create or start (CreateContainerError,
RunContainerError) was admitted on its node: the kubelet creates a pod's sandbox and containers
only after admission, where the device manager allocated its devices (kubernetes.io, Device
Plugins), so the node the builder writes advertises nvidia.com/gpu. The NVIDIA runtime refusing
the device list it was handed ('identifier is not a valid UUID or index', nvidia-container-toolkit
pkg/nvcdi) names the device plugin's Allocate answer as the value out of range; the same state
with a registry's words stays on the pull."""

from __future__ import annotations

from case import Case, synthetic_case
from scoreboard import top_pair
from test_field_admitted_pulling import STATIC, _allocatable

from gpunode.sim.nodes import GPU_RESOURCE


def _pod(state: str, message: str) -> Case:
    return synthetic_case("x-admitted-creating", [
        {"kind": "workload", "name": "gpu-check", "namespace": "default", "container": "gpu-check",
         "state": state, "message": message, "resources": {"limits": {"nvidia.com/gpu": "1"}}},
    ], platform="generic", cluster=STATIC)


def test_a_gpu_pod_whose_container_failed_to_start_shows_the_node_advertising() -> None:
    for state in ("RunContainerError", "CreateContainerError"):
        assert _allocatable(_pod(state, "identifier is not a valid UUID or index")).get(GPU_RESOURCE) == "1"


def test_a_device_identifier_the_runtime_refuses_is_the_plugins_setting() -> None:
    case = _pod("RunContainerError", "identifier is not a valid UUID or index")
    assert top_pair(case) == ("device-plugin", "error_config_invalid")


def test_a_gpu_pod_still_pending_leaves_the_node_as_it_was() -> None:
    assert GPU_RESOURCE not in _allocatable(_pod("Pending", ""))
