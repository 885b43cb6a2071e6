"""A GPU job whose driver library lacks an NVML or CUDA driver API function it asks for
(src/gpunode/data/job_errors/driver_libraries.toml driver-library-lacks-entry-point): dlsym's
"<library>: undefined symbol: <function>" naming libnvidia-ml or libcuda is the node's user-space
driver older than the program's API (NVML and CUDA version changed entry points with _v2/_v3,
each exported from the driver release that documents it: nvmlDeviceGetMemoryInfo_v2 from
510.39.01, https://github.com/NVIDIA/nvidia-settings/issues/78; nvmlDeviceGetCount_v2 from
384.81, https://github.com/NVIDIA/k8s-device-plugin/issues/196). Real lines: pynvml on a 430
driver (https://github.com/gpuopenanalytics/pynvml/issues/43), cudarc on a driver older than its
CUDA 12.9 bindings (https://github.com/chelsea0x3b/cudarc/issues/422). The library was loaded,
so a pod under plain runc does not make it the runtime's. The program's own binary or another
library named by ld.so (HAMi's libvgpu.so, a Python extension: inducer/pycuda#255) and the CUDA
runtime's symbols stay unread."""

from __future__ import annotations

from case import gpu_job_case
from scoreboard import top_pair

from gpunode.job_errors import load_job_errors

TABLE = load_job_errors()

READ = [
    "AttributeError: /usr/lib/nvidia-430/libnvidia-ml.so.1: undefined symbol: "
    "nvmlDeviceGetComputeRunningProcesses_v2",
    'Expected symbol in library: DlSym { desc: "/lib/x86_64-linux-gnu/libcuda.so: undefined symbol: '
    'cuLogsCurrent" }',
    "OSError: libcuda.so.1: undefined symbol: cuMemAllocAsync",
    "error: /usr/lib64/libnvidia-ml.so.1: undefined symbol: nvmlDeviceGetPciInfo_v3",
]
UNREAD = [
    "bash: symbol lookup error: /usr/local/vgpu/libvgpu.so: undefined symbol: cuMemAllocAsync",
    "ImportError: /opt/conda/lib/python3.7/site-packages/pycuda/_driver.cpython-37m-x86_64-linux-gnu.so: "
    "undefined symbol: cuDevicePrimaryCtxRelease_v2",
    "undefined symbol: cudaGetDriverEntryPointByVersion, version libcudart.so.12",
    "nvidia-device-plugin: symbol lookup error: nvidia-device-plugin: undefined symbol: nvmlEventSetWait_v2",
    "/usr/lib/x86_64-linux-gnu/libcudnn.so.8: undefined symbol: cudnnCreate",
]


def test_every_driver_api_function_missing_from_the_drivers_library_is_read() -> None:
    for line in READ:
        found = TABLE.read(line)
        assert found is not None and (found.component, found.cause) == ("driver", "cuda_driver_too_old"), line


def test_other_objects_and_the_runtimes_symbols_are_not_read() -> None:
    for line in UNREAD:
        found = TABLE.read(line)
        assert found is None or found.cause != "cuda_driver_too_old", (line, found.id)


def test_a_job_on_a_node_under_plain_runc_stays_the_drivers() -> None:
    """The library was loaded: the NVIDIA runtime served the container, so the runtime's
    default (the field builder's generic node: runc, NVIDIA's handler configured) is not why."""
    case = gpu_job_case("x-entry-point", "Traceback (most recent call last):\n" + READ[0])
    assert top_pair(case) == ("driver", "cuda_driver_too_old")


def test_an_interposers_missing_symbol_is_not_the_drivers() -> None:
    assert top_pair(gpu_job_case("x-entry-point-vgpu", UNREAD[0])) != ("driver", "cuda_driver_too_old")
