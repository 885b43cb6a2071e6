"""HPE Cray MPICH asked for GPU support with no GPU Transport Layer library in the process
(data/job_errors/interconnect.toml cray-mpich-gtl-not-linked): MPIDI_CRAY_init's "GPU_SUPPORT_ENABLED
is requested, but GTL library is not linked" is the job's GPU-to-fabric path missing its library
(docs.cscs.ch Cray MPICH, GPU-aware MPI; ALCF Polaris Python). Look-alikes: the GTL's own debug
lines about a call it made, and Cray MPICH's settings banner, name nothing of it."""

from __future__ import annotations

import pytest
from case import gpu_job_case
from scoreboard import top_pair

from gpunode.job_errors import job_error

LINE = "MPIDI_CRAY_init: GPU_SUPPORT_ENABLED is requested, but GTL library is not linked"

LOOK_ALIKES = [
    "GTL_DEBUG: [0] cudaHostRegister: no CUDA-capable device is detected",
    "  MPICH_GPU_SUPPORT_ENABLED                      = 1",
    "libmpi_gtl_cuda.so.0 => /opt/cray/pe/lib64/libmpi_gtl_cuda.so.0 (0x00007f2a1c000000)",
]


def test_gpu_support_without_the_gtl_is_the_gpudirect_path() -> None:
    found = job_error(LINE)
    assert found is not None and found.id == "cray-mpich-gtl-not-linked"
    case = gpu_job_case("cray-gtl", "aborting job:\n" + LINE + "\n")
    assert top_pair(case) == ("gpudirect-rdma", "error_not_found")


@pytest.mark.parametrize("line", LOOK_ALIKES)
def test_gtl_debug_and_banner_lines_are_not_it(line: str) -> None:
    found = job_error(line)
    assert found is None or found.id != "cray-mpich-gtl-not-linked"
