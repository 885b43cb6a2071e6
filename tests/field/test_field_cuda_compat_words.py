"""CUDA's own errors for a libcuda the loaded kernel module cannot serve, in a GPU job's words:
error 804 ("forward compatibility was attempted on non supported HW": an image's
forward-compatibility libcuda on a GPU without forward compatibility, a driver older than the
job's CUDA) names the driver; error 803 ("system has unsupported display driver / cuda driver
combination": the container's libcuda not of the loaded module's release, as an image's compat
copy first on the library path, gpustack/gpustack#4678) names the layer that chose the
container's libraries, unless the node's own nvidia-smi shows its libraries and module apart,
which is the driver's own failure below it. Lines are as public write-ups and notes quote
them; a job's own CUDA errors (an illegal access, out of memory) name no layer."""

from __future__ import annotations

import msgspec
from case import Case, synthetic_case
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


def test_cuda_804_names_the_driver_and_803_the_containers_libraries() -> None:
    for line, layer in ((E804, "driver"), (E803, "container-toolkit")):
        assert job_names(line) == layer, line
        top = top_pair(_job_log(line))
        assert top is not None and top[0] == layer, line


def test_803_on_a_node_whose_own_libraries_and_module_differ_is_the_drivers() -> None:
    # the node's nvidia-smi (aks-5869's words): the driver fails on its own evidence, below the job
    smi = {"kind": "node-cmd", "name": "nvidia-smi.txt",
           "text": "Failed to initialize NVML: Driver/library version mismatch\n"
                   "NVML library version: 580.159\n"}
    job = {"kind": "log", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
           "text": E803 + "\n"}
    case = synthetic_case("x-cuda-compat-node", [smi, job], cluster={"driver_mode": "host"})
    assert top_pair(case) == ("driver", "driver_library_mismatch")


def test_the_enum_names_and_the_clis_lowercase_hw_name_it_too() -> None:
    for line in ("cuInit: CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "cudaErrorCompatNotSupportedOnDevice",
                 "cuda error: forward compatibility was attempted on non supported hw"):
        assert job_names(line) == "driver", line
    for line in ("cuInit failed: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "cudaErrorSystemDriverMismatch"):
        assert job_names(line) == "container-toolkit", line


def test_a_jobs_own_cuda_errors_name_no_layer() -> None:
    for line in ("RuntimeError: CUDA error: an illegal memory access was encountered",
                 "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.",
                 "the docs on forward compatibility were updated"):
        assert job_names(line) is None, line
        assert top_pair(_job_log(line)) is None, line
