"""The OpenCL ICD loader finding no platform in a GPU container (data/job_errors.toml
``opencl-no-platform``): clGetPlatformIDs returns CL_PLATFORM_NOT_FOUND_KHR (-1001) when no
vendor ICD file names a library that loads. The NVIDIA platform is the driver's
libnvidia-opencl.so.1 named by /etc/OpenCL/vendors/nvidia.icd, both the container toolkit's to
inject, so a GPU job that finds no platform lacks what the toolkit should have placed: its
not-found class.

Sources: Khronos' clGetPlatformIDs and clIcdGetPlatformIDsKHR reference pages ("zero platforms
are available"; registry.khronos.org/OpenCL/sdk/latest/docs/man/html/clGetPlatformIDs.html);
NVIDIA/nvidia-container-toolkit#1893 (clinfo "Number of platforms 0" under --gpus all: the
library was injected, the ICD file was not); NVIDIA/nvidia-docker#919 (PyOpenCL's
"clGetPlatformIDs failed: PLATFORM_NOT_FOUND_KHR" in an nvidia-docker container). Look-alikes:
a pod that asks no GPU, and OpenCL's other errors (a program's build failing, a device type the
program asked for), are not read as the toolkit."""

from __future__ import annotations

from typing import Any

from case import gpu_job_case, synthetic_case
from scoreboard import top_pair

from gpunode.job_errors import job_error

PYOPENCL = "pyopencl._cl.LogicError: clGetPlatformIDs failed: PLATFORM_NOT_FOUND_KHR"
PLAIN = "OpenCL Exception: No OpenCL platform found. (-32)"
CODE = "clGetPlatformIDs() returned -1001"
#: a program's own OpenCL failure, with a platform found
BUILD = "clBuildProgram(): CL_BUILD_PROGRAM_FAILURE"
PLATFORM_OK = "Found 1 OpenCL platform: NVIDIA CUDA"


def test_no_opencl_platform_in_a_gpu_job_is_the_toolkits() -> None:
    for line in (PYOPENCL, PLAIN, CODE):
        found = job_error(line)
        assert found is not None and (found.component, found.cause) == (
            "container-toolkit", "error_not_found"), line
    assert top_pair(gpu_job_case("x-opencl-none", PYOPENCL)) == ("container-toolkit", "error_not_found")


def test_other_opencl_words_are_not_read() -> None:
    for line in (BUILD, PLATFORM_OK):
        found = job_error(line)
        assert found is None or found.cause != "error_not_found", line


def test_a_pod_without_a_gpu_keeps_no_reading() -> None:
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "cpu-0", "namespace": "default", "container": "main",
         "resources": {"limits": {"cpu": "1"}}, "state": "Running"},
        {"kind": "log", "object": {"kind": "Pod", "name": "cpu-0", "namespace": "default"},
         "container": "main", "text": PLAIN + "\n"}]
    top = top_pair(synthetic_case("x-opencl-cpu-pod", evidence))
    assert top is None or top[0] != "container-toolkit", top
