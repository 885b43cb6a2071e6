"""checks.pod_env.own_request, the reading alone: which of a GPU workload's lines its own
NVIDIA env explains (semantics:
https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html).
Each explained line has a look-alike that is not: the capability asked for, ``all``, an id the
pod does not list, an env not known, CDI injecting by default."""

from __future__ import annotations

from gpunode.checks.base import MESSAGE
from gpunode.checks.pod_env import own_request
from gpunode.model import Finding, Status
from gpunode.podenv import NvidiaEnv


def _finding(line: str, cause: str = "error_not_found") -> Finding:
    return Finding("container-toolkit", Status.FAILED, cause, (), {MESSAGE: line})


def _own(env: NvidiaEnv, line: str, cause: str = "error_not_found", cdi: bool = False) -> bool:
    return own_request(env, _finding(line, cause), lambda: cdi)


LIBCUDA = "ImportError: libcuda.so.1: cannot open shared object file: No such file or directory"
EGL = "libEGL_nvidia.so.0: cannot open shared object file: No such file or directory"
NO_GPUS = "RuntimeError: No CUDA GPUs are available"
INSUFFICIENT = "CUDA driver version is insufficient for CUDA runtime version"


def test_a_library_of_a_capability_left_out() -> None:
    assert _own(NvidiaEnv(capabilities="utility"), LIBCUDA)
    assert _own(NvidiaEnv(capabilities="compute,utility"), EGL)
    assert not _own(NvidiaEnv(capabilities="compute,utility,graphics"), EGL)
    assert not _own(NvidiaEnv(capabilities="all"), EGL)
    assert not _own(NvidiaEnv(), LIBCUDA)
    assert not _own(NvidiaEnv(capabilities="utility"), LIBCUDA, cdi=True)  # CDI's spec may mount all


def test_cudas_answer_without_libcuda_is_compute() -> None:
    assert _own(NvidiaEnv(capabilities="utility"), INSUFFICIENT, "cuda_driver_too_old")
    assert not _own(NvidiaEnv(capabilities="utility"), INSUFFICIENT, "error_version_mismatch")
    assert not _own(NvidiaEnv(capabilities=""), INSUFFICIENT, "cuda_driver_too_old")  # default has compute
    read = "The NVIDIA driver on your system is too old (found version 11040)"
    assert not _own(NvidiaEnv(capabilities="utility"), read, "cuda_driver_too_old")


def test_no_gpu_asked_for() -> None:
    assert _own(NvidiaEnv(visible="void"), LIBCUDA)
    assert _own(NvidiaEnv(visible=""), NO_GPUS)
    assert _own(NvidiaEnv(visible="none"), NO_GPUS)
    assert not _own(NvidiaEnv(visible="none"), LIBCUDA)  # none still mounts the driver's files
    assert not _own(NvidiaEnv(visible="all"), NO_GPUS)
    assert not _own(NvidiaEnv(visible="void"), "CUDA error: an illegal memory access was encountered")


def test_an_unknown_device_id_the_pod_lists() -> None:
    assert _own(NvidiaEnv(visible="0,1,4,5"), "nvidia-container-cli: device error: 4: unknown device")
    old = "nvidia-container-cli: device error: unknown device id: GPU-a1ff"
    assert _own(NvidiaEnv(visible="GPU-a1ff"), old)
    assert not _own(NvidiaEnv(visible="0,1"), "nvidia-container-cli: device error: 4: unknown device")
    assert not _own(NvidiaEnv(), "nvidia-container-cli: device error: 4: unknown device")
