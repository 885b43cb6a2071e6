"""CUDA's "API call is not supported in the installed CUDA driver" (the runtime's text for
cudaErrorCallRequiresNewerDriver) in a GPU job's log is the driver too old; a job that read the
driver's CUDA version earlier in its log (NCCL's "cudaDriverVersion 11000") did get the driver's
library from the runtime, so the runtime is not blamed for leaving it out. The error itself says
as much: the runtime returns it only after it loaded a driver library that passed its minimum
version and lacks the call (the runtime API's error types: 36 "requires a newer CUDA driver than
the one currently installed"); with no libcuda it stops at error 35, the insufficient driver,
which is the form PyTorch turns into "Found no NVIDIA driver" (c10/cuda/CUDAFunctions.cpp). So
only error 35 alone, on a pod that may have started without NVIDIA's runtime, keeps the
runtime's reading."""

from __future__ import annotations

from case import Case, running_job_case
from scoreboard import top_pair

#: NVIDIA/nccl#955: NCCL built for CUDA 11.7 on a CUDA 11.0 driver
NCCL_955 = ("job-0:205826:205826 [0] NCCL INFO cudaDriverVersion 11000\n"
            "NCCL version 2.14.3+cuda11.7\n"
            "job-0:205826:205907 [0] NCCL INFO Using network Socket\n"
            "Cuda failure 'API call is not supported in the installed CUDA driver'")
#: VITA-Group/FasterSeg#82: PyTorch's words for the same error
TORCH_36 = "RuntimeError:CUDA error:API call is not supported in the installed CUDA driver"
#: the runtime's text for error 35, as PyTorch prints it
TORCH_35 = "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version"


def _job(text: str) -> Case:
    return running_job_case("x-job", text)


def test_the_runtimes_text_for_a_call_needing_a_newer_driver_is_the_driver_too_old() -> None:
    assert top_pair(_job(NCCL_955)) == ("driver", "cuda_driver_too_old")


def test_the_call_needing_a_newer_driver_says_a_driver_was_loaded() -> None:
    # the same words with nothing else: error 36 comes only from a loaded driver library,
    # so a pod on a node whose default runtime is not NVIDIA's still got the driver
    assert top_pair(_job(TORCH_36)) == ("driver", "cuda_driver_too_old")


def test_the_insufficient_driver_alone_keeps_the_runtime_reading() -> None:
    # error 35 is also what the runtime answers where no driver library is in the container
    assert top_pair(_job(TORCH_35)) == ("container-toolkit", "nvidia_not_default_runtime")
