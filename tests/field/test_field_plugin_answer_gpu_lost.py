"""NVML's return string for a GPU it lost ('GPU is lost', nvmlErrorString of
NVML_ERROR_GPU_IS_LOST, 15) ending the error chain a program relays is the GPU's own state as
the driver reports it, also where the chain names no 'nvml:' before it: NVIDIA's device plugin
answering the kubelet's Allocate walks the GPUs' NVLinks through go-nvml (go-gpuallocator's
GetNvLinkState, whose ERROR_GPU_IS_LOST gives '...: failed to get nvlink state: GPU is lost',
NVIDIA/go-gpuallocator#66), so the refusal follows the plugin's dependency down to the GPU
hardware (gpu_fallen_off_bus).

Sources: NVIDIA/go-gpuallocator#66 (the NVLink walk returning ERROR_GPU_IS_LOST), LSSI-ETH/
plmfit#40 (slurmstepd relaying NVML's return 15 with the string at the end),
NVIDIA/k8s-device-plugin#231 and kubernetes/kubernetes#97131 (the plugin's 'error creating
nvml.Device N: nvml: GPU is lost' form, read as before). Look-alike: the kubelet's own device
manager refusing unhealthy devices ('no healthy devices present; cannot allocate unhealthy
devices', openshift/instaslice-operator#140) names no GPU fault and stays off the hardware."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

from gpunode.kb import load_kb

#: NVIDIA/k8s-device-plugin#231's pod message.
PLUGIN_231 = ("Allocate failed due to device plugin GetPreferredAllocation rpc failed with err: rpc error: "
              "code = Unknown desc = Unable to retrieve list of available devices: error creating "
              "nvml.Device 3: nvml: GPU is lost, which is unexpected")
#: kubernetes/kubernetes#97131's.
K8S_97131 = ("Allocate failed due to device plugin GetPreferredAllocation rpc failed with err: rpc error: "
             "code = Unknown desc = Unable to retrieve list of available devices: error creating "
             "nvml.Device 5: nvml: GPU is lost, which is unexpected")
#: LSSI-ETH/plmfit#40's.
SLURM_40 = "slurmstepd: error: NVML: Failed to get usage(15): GPU is lost"
#: openshift/instaslice-operator#140's (the resource as a whole GPU).
UNHEALTHY = ("Allocate failed due to no healthy devices present; cannot allocate unhealthy devices "
             "nvidia.com/gpu, which is unexpected")


def _refused(message: str) -> list[dict[str, Any]]:
    return [{"kind": "workload", "name": "job-0", "namespace": "default", "container": "main",
             "resources": {"limits": {"nvidia.com/gpu": "1"}}, "state": "UnexpectedAdmissionError",
             "message": message},
            {"kind": "event", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
             "type": "Warning", "reason": "UnexpectedAdmissionError", "message": message + "\n"}]


_CLUSTER = {"driver_mode": "host", "components": [], "device_plugin": "static", "gpu_node": {"gpus": 4}}


def test_nvml_s_lost_gpu_ending_a_relayed_chain_is_the_gpu_s() -> None:
    cause = load_kb().catalogued_in("gpu-hardware", SLURM_40)
    assert cause is not None and cause.code == "gpu_fallen_off_bus"
    for i, line in enumerate((PLUGIN_231, K8S_97131)):
        case = synthetic_case(f"x-answer-lost-{i}", _refused(line), platform="eks", healthy=False,
                              cluster=_CLUSTER)
        assert top_pair(case) == ("gpu-hardware", "gpu_fallen_off_bus"), line


def test_the_kubelet_s_unhealthy_devices_are_not_a_gpu_fault() -> None:
    assert load_kb().catalogued_in("gpu-hardware", UNHEALTHY) is None
    case = synthetic_case("x-answer-unhealthy", _refused(UNHEALTHY), platform="eks", healthy=False,
                          cluster=_CLUSTER)
    pair = top_pair(case)
    assert pair is None or pair[0] != "gpu-hardware"
