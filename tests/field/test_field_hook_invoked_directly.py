"""The toolkit's hook refuses to run as a bare OCI prestart hook (Docker's --gpus device request,
or a hooks directory) where its mode resolves to anything but legacy: csv on Tegra, cdi. Those
modes edit the container's spec inside the NVIDIA runtime, so the container has to go through
that runtime (named, or as the default): the hook's own words say so
(cmd/nvidia-container-runtime-hook/main.go in NVIDIA/nvidia-container-toolkit). A hook run in
legacy mode that fails for another reason, and the hook's mode line on a container that
started, keep their own readings.

Sources, each line beside its address."""

from __future__ import annotations

from typing import Any

from case import Case, running_job_case, synthetic_case
from scoreboard import top_pair

_PREFIX = ("docker: Error response from daemon: failed to create task for container: failed to create"
           " shim task: OCI runtime create failed: runc create failed: unable to start container process:"
           " error during container init: error running hook #0: error running hook: exit status 1,"
           " stdout: , stderr: ")
#: https://github.com/NVIDIA/TensorRT-LLM/issues/799 (docker run --gpus=all on an Orin, csv mode)
_REFUSAL = ("invoking the NVIDIA Container Runtime Hook directly (e.g. specifying the docker --gpus flag)"
            " is not supported. Please use the NVIDIA Container Runtime")
TENSORRT_LLM_799 = (_PREFIX + "Auto-detected mode as 'csv'\n" + _REFUSAL
                    + " (e.g. specify the --runtime=nvidia flag) instead.: unknown.")
#: https://github.com/dstackai/dstack/issues/2306 (the toolkit in cdi mode, --gpus without --runtime=nvidia)
DSTACK_2306 = (_PREFIX + "Using requested mode 'cdi'\n" + _REFUSAL
               + " (e.g. specify the --runtime=nvidia flag) instead.: unknown")
#: The older toolkit's form (no --runtime example), as public Jetson setup notes quote it
OLDER = "stderr: Auto-detected mode as 'csv'\n" + _REFUSAL + " instead.: unknown."
#: Look-alike: the same hook failing in legacy mode for the driver's reason
DRIVER_NOT_LOADED = _PREFIX + "nvidia-container-cli: initialization error: nvml error: driver not loaded"

_NOT_DEFAULT = ("container-toolkit", "nvidia_not_default_runtime")


def _refused(message: str) -> Case:
    pod = {"kind": "Pod", "name": "job-0", "namespace": "default"}
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "job-0", "namespace": "default", "container": "main",
         "state": "RunContainerError"},
        {"kind": "event", "object": pod, "type": "Warning", "reason": "Failed", "message": message}]
    return synthetic_case("x-hook-direct", evidence, platform="docker", healthy=False,
                          cluster={"driver_mode": "host", "gpu_node": {"gpus": 1, "gpu": "Orin (nvgpu)"}})


def test_the_hooks_refusal_outside_the_nvidia_runtime_is_that_runtime_not_used() -> None:
    for message in (TENSORRT_LLM_799, DSTACK_2306, OLDER):
        assert top_pair(_refused(message)) == _NOT_DEFAULT, message


def test_the_hook_failing_for_the_drivers_reason_is_not_read_so() -> None:
    assert top_pair(_refused(DRIVER_NOT_LOADED)) != _NOT_DEFAULT


def test_the_hooks_mode_line_on_a_running_container_stays_healthy() -> None:
    case = running_job_case("x-hook-mode", "Auto-detected mode as 'csv'\nstarting the job on the GPU",
                            platform="docker",
                            cluster={"driver_mode": "host", "gpu_node": {"gpus": 1, "gpu": "Orin (nvgpu)"}})
    assert top_pair(case) is None
