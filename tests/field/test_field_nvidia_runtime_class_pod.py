"""A pod that names NVIDIA's RuntimeClass is a GPU workload even with no GPU resource:
GPU-sharing schedulers hand it a GPU by annotation and NVIDIA_VISIBLE_DEVICES, and the NVIDIA
runtime, not a device plugin, injects the device (gpunode.facts._asks_nvidia_runtime). KAI's
fraction pods are the form: no nvidia.com/gpu, runtimeClassName nvidia set by its admission
webhook (https://github.com/kai-scheduler/KAI-Scheduler/pull/602,
https://github.com/kai-scheduler/KAI-Scheduler/issues/1543), the fraction mechanism working
only through that runtime class (https://github.com/kai-scheduler/KAI-Scheduler/issues/1510,
https://github.com/kai-scheduler/KAI-Scheduler/pull/2052), and such a pod given
NVIDIA_VISIBLE_DEVICES=GPU-... but no /dev/nvidia* on Bottlerocket
(https://github.com/kai-scheduler/KAI-Scheduler/issues/1544). A pod of another runtime class,
or of none, with no GPU resource stays outside the GPU workloads."""

from __future__ import annotations

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

#: The runtime's words for a management CDI device no spec on the node defines
#: (https://github.com/kai-scheduler/KAI-Scheduler/issues/47).
_CDI = ("failed to create containerd task: failed to create shim task: OCI runtime create failed: could not "
        "apply required modification to OCI specification: error modifying OCI spec: failed to inject CDI "
        "devices: unresolvable CDI devices "
        "management.nvidia.com/gpu=GPU-213ef228-8121-3a14-4880-6fcf31e97653: unknown")


def _fraction_pod(runtime_class: str | None, state: str = "Error", message: str = _CDI) -> Case:
    """A pod with no GPU resource (a fraction by annotation), of ``runtime_class``."""
    pod: dict[str, object] = {"kind": "workload", "name": "frac-0", "namespace": "default",
                              "container": "app", "schedulerName": "kai-scheduler",
                              "resources": {"limits": {}}, "state": state}
    if runtime_class is not None:
        pod["runtimeClassName"] = runtime_class
    if state == "Error":
        pod.update({"reason": "StartError", "exit_code": 128, "message": message})
    return synthetic_case("x-runtime-class-pod", [pod])


@pytest.mark.parametrize("runtime_class", ["nvidia", "nvidia-cdi"])
def test_a_pod_of_nvidias_runtime_class_failing_on_the_cdi_spec_is_the_toolkits(runtime_class: str) -> None:
    assert top_pair(_fraction_pod(runtime_class)) == ("container-toolkit", "cdi_spec_generation_failed")


@pytest.mark.parametrize("runtime_class", [None, "kata-qemu", "runc"])
def test_a_pod_of_another_runtime_class_without_a_gpu_is_not_read(runtime_class: str | None) -> None:
    assert top_pair(_fraction_pod(runtime_class)) is None


def test_a_running_pod_of_nvidias_runtime_class_is_healthy() -> None:
    assert top_pair(_fraction_pod("nvidia", state="Running")) is None
