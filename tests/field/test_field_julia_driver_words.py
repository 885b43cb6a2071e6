"""Julia's GPU stack says the driver is older than the CUDA it was built for in its own words
(data/job_errors/frameworks.toml): CUDAnative's "CUDA 10.0 is not supported by / your driver
(which supports up to 9.0)" (src/CUDAnative.jl compares cuDriverGetVersion with its toolkit:
https://github.com/JuliaGPU/CUDAnative.jl/blob/master/src/CUDAnative.jl) and CUDA.jl's "CUDA
driver 8.0.0 is not compatible with any supported CUDA toolkit" (JuliaGPU/CUDA.jl#2231). The
program read the driver's version, so the node's driver is too old. Look-alike: CUDA.jl's
versioninfo() banner of a healthy job names the driver and toolkit versions and says nothing."""

from __future__ import annotations

from case import gpu_job_case, running_job_case
from scoreboard import top_pair

from gpunode.job_errors import job_error

CUDANATIVE = "ERROR: LoadError: CUDA 11.8 is not supported by\nyour driver (which supports up to 11.4)"
CUDA_JL = ("ERROR: CUDA driver 10.2.0 is not compatible with any supported CUDA toolkit "
           "(11.4.4, 11.5.2, 11.6.2, 11.7.1, 11.8.0, 12.0.1)")
VERSIONINFO = ("CUDA runtime 12.3, artifact installation\nCUDA driver 12.2\nNVIDIA driver 535.104.5\n"
               "Toolchain:\n- Julia: 1.10.0\n1 device:\n"
               "  0: NVIDIA A100-SXM4-80GB (sm_80, 78.5 GiB / 80.000 GiB available)")


def test_julias_driver_verdicts_are_the_driver_too_old() -> None:
    for text in (CUDANATIVE, CUDA_JL):
        found = job_error(text.splitlines()[-1])
        assert found is not None and (found.component, found.cause) == ("driver", "cuda_driver_too_old")
        assert top_pair(gpu_job_case("x-julia-driver", text)) == ("driver", "cuda_driver_too_old")


def test_a_healthy_versioninfo_banner_says_nothing() -> None:
    assert all(job_error(line) is None for line in VERSIONINFO.splitlines())
    assert top_pair(running_job_case("x-julia-versioninfo", VERSIONINFO)) is None
