"""A GPU pod whose container start fails because the toolkit's CLI does not know a device id it
was handed is charged to the device plugin that allocated it: in a pod the ids come from the
serving plugin's Allocate (a UUID kept from a GPU the node no longer has, a sharing plugin's
placeholder when no GPU fits). The volume-mounts strategy's path in the same words is the
toolkit's setting and stays the toolkit's. Lines from public reports; a GPU-sharing resource
(aliyun.com/gpu-mem) makes the pod a GPU workload."""

from __future__ import annotations

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

_HOOK = ("Error response from daemon: OCI runtime create failed: container_linux.go:345: starting "
         "container process caused \"process_linux.go:424: container init caused \\\"process_linux.go:"
         "407: running prestart hook 0 caused \\\\\\\"error running hook: exit status 1, stdout: , "
         "stderr: {}\\\\\\\\n\\\\\\\"\\\"\": unknown")


def _pod_failing(line: str, limits: dict[str, str] | None = None) -> Case:
    """A GPU pod that cannot start, with the kubelet's Failed event carrying ``line``."""
    return synthetic_case("x-unknown-device", [
        {"kind": "workload", "name": "gpu-pod", "namespace": "default", "state": "RunContainerError",
         "resources": {"limits": limits or {"nvidia.com/gpu": "1"}}},
        {"kind": "event", "object": {"kind": "Pod", "name": "gpu-pod", "namespace": "default"},
         "type": "Warning", "reason": "Failed", "message": line},
    ], healthy=False)


#: The CLI's words in both of its forms, each from a public report.
UNKNOWN_IDS = [
    # AliyunContainerService/gpushare-scheduler-extender#80: the share plugin's placeholder
    _HOOK.format("nvidia-container-cli: device error: unknown device id: no-gpu-has-2MiB-to-run"),
    # NVIDIA/nvidia-docker#1042 (gpushare-device-plugin under JupyterHub), the CLI's line alone
    "nvidia-container-cli: device error: unknown device id: no-gpu-has-1MiB-to-run",
    # Project-HAMi/HAMi#411: the newer form, a UUID the node's GPUs do not have
    "Error: failed to start container \"ocr-service\": Error response from daemon: failed to create "
    "shim task: OCI runtime create failed: runc create failed: unable to start container process: "
    "error during container init: error running hook #0: error running hook: exit status 1, stdout: , "
    "stderr: Auto-detected mode as 'legacy' nvidia-container-cli: device error: "
    "GPU-23a1320e-7dad-e76a-1d08-50ac3be37cbc: unknown device: unknown",
]


@pytest.mark.parametrize("line", UNKNOWN_IDS)
def test_an_unknown_device_id_is_the_allocating_plugins(line: str) -> None:
    assert top_pair(_pod_failing(line)) == ("device-plugin", "error_not_found")


def test_a_gpu_share_pod_is_a_gpu_workload() -> None:
    """Alibaba's GPU-share resource makes the pod a GPU workload (gpushare-scheduler-extender#85)."""
    line = _HOOK.format("nvidia-container-cli: device error: unknown device id: "
                        "GPU-a1ff9376-0ecf-ac4f-68df-6ab38be012b3")
    assert top_pair(_pod_failing(line, {"aliyun.com/gpu-mem": "4"})) == ("device-plugin", "error_not_found")


def test_the_volume_mounts_path_stays_the_toolkits() -> None:
    """NVIDIA/k8s-device-plugin#200: the list path the toolkit was not set to read."""
    line = _HOOK.format("nvidia-container-cli: device error: unknown device id: "
                        "/var/run/nvidia-container-devices")
    assert top_pair(_pod_failing(line)) == ("container-toolkit", "error_not_found")


def test_a_workloads_own_cuda_error_accuses_no_plugin() -> None:
    """A job's own out-of-memory is the job's: no stack component is charged."""
    line = "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total capacity)"
    assert top_pair(_pod_failing(line)) in (None, ("healthy", ""))
