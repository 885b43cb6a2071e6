"""A program's own verdict that the CUDA driver it found is too old for the CUDA it needs
(data/job_errors.toml ``program-cuda-driver-too-old``): MATLAB's "The CUDA driver was found, but
it is too old" from gpuArray and gpuDevice, and the bare "CUDA driver is too old" of programs
that compare the driver's CUDA version with their own. The program loaded the driver's library
to read that version, so the node's driver is too old, not a container without it.

Sources: MathWorks' GPU support by release (each MATLAB release needs a driver for its CUDA
toolkit; docs.exponenta.ru/R2021a_nmt/parallel-computing/gpu-support-by-release.html); PyTorch's
words for the same verdict (pytorch/pytorch c10/cuda/CUDAFunctions.cpp; rikdz/GraphWriter#6,
wuhuikai/FastFCN#37). Look-alike: libgpuarray's "GPU is too old for CUDA version"
(Theano/libgpuarray#573) is about the board, and is not read as the driver."""

from __future__ import annotations

from case import gpu_job_case
from scoreboard import top_pair

from gpunode.job_errors import job_error

MATLAB = ("The CUDA driver was found, but it is too old. The CUDA driver on your system supports "
          "CUDA version 5.5. The required CUDA version")
BARE = "RuntimeError: the CUDA driver is too old for this build (driver supports CUDA 12.2, needs 12.8)"
#: libgpuarray (Theano/libgpuarray#573): the GPU, not the driver
GPU_TOO_OLD = "pygpu.gpuarray.GpuArrayException: b'GPU is too old for CUDA version'"


def test_a_programs_driver_too_old_is_the_drivers() -> None:
    for line in (MATLAB, BARE):
        found = job_error(line)
        assert found is not None and (found.component, found.cause) == ("driver", "cuda_driver_too_old"), line
    assert top_pair(gpu_job_case("x-matlab-driver-old", MATLAB)) == ("driver", "cuda_driver_too_old")


def test_a_gpu_too_old_is_not_the_driver_too_old() -> None:
    found = job_error(GPU_TOO_OLD)
    assert found is None or found.cause != "cuda_driver_too_old"
    top = top_pair(gpu_job_case("x-gpu-old", GPU_TOO_OLD))
    assert top is None or top[1] != "cuda_driver_too_old", top
