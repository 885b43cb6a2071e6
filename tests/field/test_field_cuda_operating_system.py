"""CUDA's cudaErrorOperatingSystem (304, "OS call failed or operation not supported on this
OS") in a GPU job on a Linux node is an OS call the driver makes refused by the container's
sandbox (the runtime's seccomp profile): the container runtime's, error_permission_denied.
NVML's own "GPU access blocked by the operating system" stays the driver's, and a job's own
CUDA errors stay the job's. Lines from public reports, each address beside it."""

from __future__ import annotations

from case import Case, gpu_job_case
from scoreboard import top_pair

#: https://github.com/NVIDIA/OpenShell/issues/1696 (seccomp blocking memfd_create)
OPENSHELL = ("[Error] [omni.rtx] CUDA error 304: cudaErrorOperatingSystem - OS call failed or operation "
             "not supported on this OS\n[Error] [omni.rtx] Failed to query CUDA device count.")
#: https://github.com/NVIDIA/DALI/issues/4852 (DALI's decoder at pipeline build)
DALI = ("RuntimeError: Critical error when building pipeline:\n"
        "Error when constructing operator: decoders__Image, instance name: \"__Image_3\", encountered:\n"
        "CUDA runtime API error cudaErrorOperatingSystem (304):\n"
        "OS call failed or operation not supported on this OS")


def _gpu_job(text: str) -> Case:
    return gpu_job_case("x-cuda-os", text)


def test_an_os_call_the_driver_makes_refused_is_the_runtimes() -> None:
    for text in (OPENSHELL, DALI):
        assert top_pair(_gpu_job(text)) == ("container-runtime", "error_permission_denied")


def test_nvml_blocked_stays_the_drivers_and_the_jobs_errors_stay_the_jobs() -> None:
    nvml = top_pair(_gpu_job("Failed to initialize NVML: GPU access blocked by the operating system"))
    assert nvml is not None and nvml[0] == "driver"
    for line in ("CUDA error 700 at ggml-cuda.cu:5065: an illegal memory access was encountered",
                 "CUDA error 2 at ggml-cuda.cu:6103: out of memory"):
        assert top_pair(_gpu_job(line)) is None
