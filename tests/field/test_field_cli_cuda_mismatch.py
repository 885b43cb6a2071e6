"""NVIDIA's container CLI relaying CUDA error 803 ("system has unsupported display driver /
cuda driver combination") while it sets up a container: the CLI loads the driver's libraries
from the host's driver root in its own driver service, so the mismatch is the host's libcuda
against its loaded kernel module (driver_library_mismatch), as NVML's "Driver/library version
mismatch" from the same CLI is. The same error in a job's own log is its container's
libraries and stays so; another CUDA error of the CLI is not this.

Sources: https://github.com/NVIDIA/libnvidia-container/blob/main/src/driver.c (driver_init:
the driver service started in the driver root), https://docs.nvidia.com/cuda/cuda-runtime-api/
group__CUDART__TYPES.html (cudaErrorSystemDriverMismatch = 803)."""

from __future__ import annotations

from case import Case, gpu_job_case, synthetic_case
from scoreboard import top_pair

_HOOK = ("Error: failed to start container \"exporter\": Error response from daemon: OCI runtime create "
         "failed: container_linux.go:345: starting container process caused \"process_linux.go:424: "
         "container init caused \\\"process_linux.go:407: running prestart hook 0 caused \\\\\\\"error "
         "running hook: exit status 1, stdout: , stderr: nvidia-container-cli: initialization error: "
         "cuda error: {error}\\\\\\\\n\\\\\\\"\\\"\": unknown")


def _hook_case(error: str) -> Case:
    return synthetic_case("x-cli-cuda", [
        {"kind": "workload", "name": "exporter-0", "namespace": "default", "container": "exporter",
         "state": "CrashLoopBackOff", "restarts": 6},
        {"kind": "event", "object": {"kind": "Pod", "name": "exporter-0", "namespace": "default"},
         "type": "Warning", "reason": "Failed", "message": _HOOK.format(error=error)},
    ], healthy=False, cluster={"driver_mode": "host"})


def test_the_cli_s_cuda_803_is_the_host_driver_s_library_mismatch() -> None:
    case = _hook_case("system has unsupported display driver / cuda driver combination")
    assert top_pair(case) == ("driver", "driver_library_mismatch")


def test_a_job_s_own_803_stays_its_container_s_libraries() -> None:
    text = ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Error 803: system has unsupported "
            "display driver / cuda driver combination")
    assert top_pair(gpu_job_case("x-job-803", text)) == ("container-toolkit", "error_version_mismatch")


def test_another_cuda_error_of_the_cli_is_not_this() -> None:
    found = top_pair(_hook_case("no cuda-capable device is detected"))
    assert found is None or found[1] != "driver_library_mismatch"
