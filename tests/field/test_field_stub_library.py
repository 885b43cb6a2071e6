"""CUDA's stub-library error (34) in a GPU job's own log is the job's library search path.

NVIDIA/warp#219 and fboulnois/stable-diffusion-docker#22: the CUDA Toolkit's stub libcuda
found ahead of the driver's library; fixed in the job's environment or image, the stack healthy.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from case import Case
from scoreboard import diagnose_case, top_root_cause

from gpunode.checks.workload_logs import own_stub_library

WARP = "Warp CUDA error: Failed to get driver entry point 'cuInit' (CUDA error 34)\n"
TORCH = ("UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Error 34: "
         "CUDA driver is a stub library\n")
#: the loader finding no libcuda at all: no driver library reached the container
NO_LIBCUDA = ("Could not load dynamic library 'libcuda.so.1'; dlerror: libcuda.so.1: cannot open "
              "shared object file: No such file or directory\n")


def _job(lines: str, platform: str) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "job", "namespace": "default", "container": "job", "state": "Running"},
        {"kind": "log", "object": {"kind": "Pod", "name": "job", "namespace": "default"},
         "container": "job", "text": lines}]
    raw = {"id": "x-stub", "source": "https://example.org/x", "title": "t", "platform": platform,
           "cluster": {"driver_mode": "host"}, "evidence": evidence, "expect": {"healthy": True}}
    return msgspec.convert(raw, Case)


def _top(case: Case) -> tuple[str, str] | None:
    top = top_root_cause(diagnose_case(case), case.node)
    return (top.component, top.cause) if top else None


@pytest.mark.parametrize("line", [WARP.strip(), TORCH.strip(), "numba.cuda.cudadrv.driver.CudaAPIError: [34]",
                                  "CUDA API Error at line 28: CUDA driver is a stub library"])
def test_the_stub_library_error_is_read_in_its_forms(line: str) -> None:
    assert own_stub_library(line)


@pytest.mark.parametrize("line", [
    NO_LIBCUDA.strip(),
    "cudaGetDeviceCount returned 35",
    "CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected",
    "linking against /usr/local/cuda/lib64/stubs/libcuda.so",  # the stubs' path, no error
])
def test_other_driver_errors_and_the_stubs_path_alone_are_not_it(line: str) -> None:
    assert not own_stub_library(line)


@pytest.mark.parametrize("platform", ["generic", "docker"])
@pytest.mark.parametrize("lines", [WARP, TORCH])
def test_a_job_that_loaded_the_stub_leaves_the_stack_healthy(lines: str, platform: str) -> None:
    assert _top(_job(lines, platform)) is None


def test_a_job_under_plain_runc_without_any_libcuda_still_names_the_default_runtime() -> None:
    assert _top(_job(NO_LIBCUDA, "generic")) == ("container-toolkit", "nvidia_not_default_runtime")
