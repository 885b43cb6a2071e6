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


def test_a_legacy_mig_name_refused_by_a_470_or_newer_driver() -> None:
    """The pre-R470 MIG name form refused where the driver names MIG devices by UUID only
    (NVIDIA/nvidia-container-toolkit#203, canonical/lxd#9518): the request's own form. Look-alikes
    keep the finding: an older driver (the form was its own), a driver not collected, a current
    MIG UUID or a GPU UUID refused (an id a plugin may have handed out)."""
    from gpunode.checks.pod_env import _legacy_mig_refused

    legacy = ("nvidia-container-cli.real: device error: "
              "MIG-GPU-932bfb2c-849a-2a22-1e84-9eff6bc02b39/1/0: unknown device")
    assert _legacy_mig_refused(legacy, lambda: 530)
    assert _legacy_mig_refused(legacy.replace(".real", ""), lambda: 470)
    assert not _legacy_mig_refused(legacy, lambda: 460)
    assert not _legacy_mig_refused(legacy, lambda: None)
    current = "nvidia-container-cli: device error: MIG-0929581a-2be6-5dec-bf34-0954c6c529a6: unknown device"
    assert not _legacy_mig_refused(current, lambda: 530)
    gpu = "nvidia-container-cli: device error: unknown device id: GPU-a1ff9376-0ecf-ac4f-68df-6ab38be012b3"
    assert not _legacy_mig_refused(gpu, lambda: 530)
