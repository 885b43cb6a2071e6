"""CUDA's own errors for a libcuda the loaded kernel module cannot serve name the driver in
a GPU job's words: error 803 ("system has unsupported display driver / cuda driver
combination": libraries upgraded under a module still loaded, or an image's libcuda on the
library path) and 804 ("forward compatibility was attempted on non supported HW": an image's
forward-compatibility libcuda on a GPU without forward compatibility, a driver older than the
job's CUDA). Lines are as public write-ups and notes quote them; a job's own CUDA errors
(an illegal access, out of memory) name no layer."""

from __future__ import annotations

import msgspec
from case import Case
from scoreboard import top_pair

from gpunode.checks.job_words import job_names

#: PyTorch's warning when cudaGetDeviceCount fails with 804 (a CUDA 12 wheel on a GeForce host
#: with an older driver, as public notes quote it)
E804 = ("UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
        "functions before calling NumCudaDevices() that might have already set an error? Error 804: forward "
        "compatibility was attempted on non supported HW (Triggered internally at "
        "../c10/cuda/CUDAFunctions.cpp:109.)")
#: vLLM's startup on a node whose driver DaemonSet restarted over a module still loaded
E803 = ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Error 803: system has unsupported display "
        "driver / cuda driver combination")


def _job_log(text: str) -> Case:
    raw = {"id": "x-cuda-compat", "source": "https://example.org/x", "title": "t", "platform": "generic",
           "cluster": {"driver_mode": "host"},
           "evidence": [{"kind": "log", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
                         "text": text + "\n"}],
           "expect": {"healthy": True}}
    return msgspec.convert(raw, Case)


def test_cuda_803_and_804_in_a_jobs_log_name_the_driver() -> None:
    for line in (E804, E803):
        assert job_names(line) == "driver", line
        top = top_pair(_job_log(line))
        assert top is not None and top[0] == "driver", line


def test_the_enum_names_and_the_clis_lowercase_hw_name_it_too() -> None:
    for line in ("cuInit failed: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "cudaErrorSystemDriverMismatch",
                 "cuInit: CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "cudaErrorCompatNotSupportedOnDevice",
                 "cuda error: forward compatibility was attempted on non supported hw"):
        assert job_names(line) == "driver", line


def test_a_jobs_own_cuda_errors_name_no_layer() -> None:
    for line in ("RuntimeError: CUDA error: an illegal memory access was encountered",
                 "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.",
                 "the docs on forward compatibility were updated"):
        assert job_names(line) is None, line
        assert top_pair(_job_log(line)) is None, line
