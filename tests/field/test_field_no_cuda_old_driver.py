"""A GPU job's own words that CUDA is unusable to it ("torch.cuda.is_available() is False",
Folding@home's "No CUDA or OpenCL 1.2+ support detected") on a node whose driver runs no
current CUDA runtime (below every built CUDA major's minimum, checks.cuda_floor): the driver is
too old for the job (linuxserver/docker-foldingathome#7, RVC-Boss/GPT-SoVITS#1809); cuBLAS's
handle failing to initialise (CUBLAS_STATUS_NOT_INITIALIZED, 1: nanoporetech/pyguppyclient#6) is
read the same, and so is CUDA's initialization error from the call that initialises it
(PyTorch's "CUDA driver initialization failed, you might not have a CUDA gpu": a torch+cu111
environment on driver 440.82, blog.csdn.net/weixin_40264313/article/details/137650716), which
on a current driver stays the driver's device error. The same
words on a node with a current driver, or on a Jetson whose L4T release is no driver branch,
stay silent: a CPU-only build or a container without the driver's library prints them too."""

from __future__ import annotations

from case import running_job_case
from scoreboard import top_pair

TORCH = ("RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() "
         "is False. If you are running on a CPU-only machine, please use torch.load with "
         "map_location=torch.device('cpu') to map your storages to the CPU.")
FAH = ("08:22:15:WARNING:FS01:No CUDA or OpenCL 1.2+ support detected for GPU slot 01: gpu:43:0 GP106GL "
       "[Quadro P2000] [MED-XN71]  3935.  Disabling.")


GUPPY = "[guppy/error] main: CuBLAS error at /builds/ont_core/basecall_core/nn_caller_cuda.cpp:1138: 1"
CUBLAS = "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`"


def _pair(line: str, driver: str, cuda: str) -> tuple[str, str] | None:
    cluster = {"driver_mode": "host", "gpu_node": {"gpus": 1, "driver_version": driver, "cuda_version": cuda}}
    return top_pair(running_job_case("x-no-cuda-old-driver", line, cluster=cluster))


def test_torch_without_cuda_on_driver_470_is_the_driver_too_old() -> None:
    assert _pair(TORCH, "470.199.02", "11.4") == ("driver", "cuda_driver_too_old")


def test_fah_disabling_its_gpu_slot_on_driver_455_is_the_driver_too_old() -> None:
    assert _pair(FAH, "455.45.01", "11.1") == ("driver", "cuda_driver_too_old")


def test_the_same_words_on_a_current_driver_stay_silent() -> None:
    assert _pair(TORCH, "570.133.20", "12.8") is None
    assert _pair(FAH, "550.127.05", "12.4") is None


def test_cublas_not_initialized_on_driver_440_is_the_driver_too_old() -> None:
    for line in (GUPPY, CUBLAS):
        assert _pair(line, "440.33.01", "10.2") == ("driver", "cuda_driver_too_old"), line


def test_cublas_not_initialized_or_another_status_on_a_current_driver_stays_silent() -> None:
    assert _pair(GUPPY, "570.133.20", "12.8") is None
    assert _pair(GUPPY.replace(": 1", ": 13"), "440.33.01", "10.2") != ("driver", "cuda_driver_too_old")


INIT = ("/opt/env/lib/python3.8/site-packages/torch/cuda/__init__.py:52: UserWarning: CUDA initialization: "
        "CUDA driver initialization failed, you might not have a CUDA gpu. (Triggered internally at "
        "/pytorch/c10/cuda/CUDAFunctions.cpp:109.)")


def test_cuda_init_error_on_driver_440_is_the_driver_too_old() -> None:
    assert _pair(INIT, "440.82", "10.2") == ("driver", "cuda_driver_too_old")


def test_cuda_init_error_on_a_current_driver_stays_the_driver_s_device_error() -> None:
    assert _pair(INIT, "570.133.20", "12.8") == ("driver", "error_device")
