"""A GPU job's shared error that no node fact settles is read as its most likely layer's,
``degraded``, naming the fact that would settle it (checks.unsettled_words):

* CUDA's unknown error (999, CUDA_ERROR_UNKNOWN) where nvidia_uvm is loaded: the driver's
  ``error_device`` (immich-app/immich#13045 and NVIDIA/libnvidia-container#103, fixed on the
  node's driver by a reinstall or a reboot);
* CUDA's invalid kernel image (200, "device kernel image is invalid"): the driver's
  ``cuda_driver_too_old`` (canonical/inference-snaps#255: llama.cpp's CUDA 12 build on driver
  535; openai/triton#1955), unless the node's driver serves the CUDA the job's image names;
* a glvnd vendor library of the driver (libGLX_nvidia, libEGL_nvidia) the job could not load:
  the driver's ``error_not_found`` (NVIDIA/deepops#1223: a headless driver install without its
  GL libraries; gezp/docker-ubuntu-desktop#41: the WSL2 driver has none), unless the pod's own
  NVIDIA_DRIVER_CAPABILITIES leaves graphics out; the same for no EGL device for the CUDA
  device (facebookresearch/habitat-sim#1829: only libEGL_nvidia lists the GPU);
* PyTorch's DataLoader workers gone with no words of their own: the container runtime's
  ``error_resource_exhausted`` (facebookresearch/detectron2#384, fixed by --shm-size);
* a fork refused for want of memory in a pod that holds AWS EFA devices: the GPU-to-fabric
  path's ``error_resource_exhausted`` (libfabric's EFA provider on the huge pages: AWS's EFA
  cheat sheet, FI_EFA_USE_HUGE_PAGE=0); the same line in a pod without EFA says nothing.

Look-alikes stay silent: a program's own kernel-image error (209, no image for the device), an
invalid image on a node whose driver is newer than the job's CUDA, the vendor library named in
a line that is no failure, a pod asking for compute and utility only, and the video libraries
(shared with containers that did not ask for ``video``)."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.checks.unsettled_words import unsettled_reading

WITH_UVM = ("nvidia_uvm           1032192  2\nnvidia_drm             45056  0\n"
            "nvidia_modeset       1110016  1 nvidia_drm\n"
            "nvidia              14368768  3 nvidia_uvm,nvidia_modeset\n")


def _job(text: str, *, image: str | None = None, env: dict[str, str] | None = None,
         lsmod: str | None = None, scenario: str | None = None,
         limits: dict[str, str] | None = None) -> Case:
    workload: dict[str, Any] = {"kind": "workload", "name": "job-0", "namespace": "default",
                                "container": "job", "state": "Error", "exit_code": 1}
    if limits is not None:
        workload["resources"] = {"limits": limits}
    if image is not None:
        workload["image"] = image
    if env is not None:
        workload["env"] = env
    evidence: list[dict[str, Any]] = [
        workload,
        {"kind": "log", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
         "container": "job", "text": text + "\n"}]
    if lsmod is not None:
        evidence.append({"kind": "node-cmd", "name": "lsmod.txt", "text": lsmod})
    case = synthetic_case("x-unsettled", evidence, cluster={"driver_mode": "host"})
    return case if scenario is None else msgspec.structs.replace(case, scenario=scenario)


def test_cuda_unknown_error_with_uvm_loaded_is_the_drivers_device_error() -> None:
    for text in ("CUDA failure 999: unknown error", "RuntimeError: CUDA error: unknown error"):
        assert top_pair(_job(text, lsmod=WITH_UVM)) == ("driver", "error_device"), text


def test_cuda_unknown_error_on_gpus_shared_through_mps_is_not_read() -> None:
    # an MPS client gets the same error where its server failed (NVIDIA/k8s-device-plugin#685)
    case = _job("CUDA failure 999: unknown error", lsmod=WITH_UVM, scenario="falcon-ai-mps")
    assert top_pair(case) != ("driver", "error_device")


def test_invalid_kernel_image_is_the_driver_too_old() -> None:
    for text in ("Triton Error [CUDA]: device kernel image is invalid",
                 "CUDA error: device kernel image is invalid"):
        assert top_pair(_job(text)) == ("driver", "cuda_driver_too_old"), text


def test_invalid_kernel_image_on_a_driver_newer_than_the_image_is_not_read() -> None:
    # the simulator's driver (570) serves CUDA 12.8: an image built for 12.2 loads there
    case = _job("CUDA error: device kernel image is invalid", image="nvidia/cuda:12.2.0-runtime-ubuntu22.04")
    assert top_pair(case) is None


def test_a_drivers_gl_vendor_library_not_loaded_is_the_driver_not_found() -> None:
    for text in ("libGLX_nvidia.so.0: cannot open shared object file: No such file or directory",
                 "Fatal Error: Can't find libGLX_nvidia.so.0",
                 "eglInitialize: Failed to load libEGL_nvidia.so.0"):
        assert top_pair(_job(text)) == ("driver", "error_not_found"), text


def test_no_egl_device_for_the_cuda_device_is_the_driver_not_found() -> None:
    line = ("Platform::WindowlessEglApplication::tryCreateContext(): "
            "unable to find EGL device for CUDA device 0")
    assert top_pair(_job(line)) == ("driver", "error_not_found")


def test_a_pod_that_asks_for_no_graphics_keeps_it_as_its_own_request() -> None:
    for line in ("libGLX_nvidia.so.0: cannot open shared object file: No such file or directory",
                 "WindowlessEglApplication::tryCreateContext(): unable to find EGL device for CUDA device 0"):
        case = _job(line, env={"NVIDIA_DRIVER_CAPABILITIES": "compute,utility"})
        assert top_pair(case) is None, line


def test_dataloader_workers_gone_are_the_containers_resources() -> None:
    for line in ("RuntimeError: DataLoader worker (pid(s) 25) exited unexpectedly",
                 "RuntimeError: DataLoader worker (pid 4123) is killed by signal: Bus error. "):
        assert top_pair(_job(line)) == ("container-runtime", "error_resource_exhausted"), line


EFA = {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "4"}


def test_fork_without_memory_in_a_pod_with_efa_is_the_fabric_path_s() -> None:
    for line in ("OSError: Cannot allocate memory", "OSError: [Errno 12] Cannot allocate memory",
                 "/bin/sh: fork: Cannot allocate memory"):
        assert top_pair(_job(line, limits=EFA)) == ("gpudirect-rdma", "error_resource_exhausted"), line


def test_fork_without_memory_in_a_pod_without_efa_says_nothing() -> None:
    line = "OSError: [Errno 12] Cannot allocate memory"
    assert top_pair(_job(line, limits={"nvidia.com/gpu": "1"})) is None
    assert top_pair(_job(line, limits={"nvidia.com/gpu": "1", "vpc.amazonaws.com/efa": "0"})) is None
    # CUDA's own out-of-memory is the program's, whatever devices the pod holds
    assert top_pair(_job("RuntimeError: CUDA error: out of memory", limits=EFA)) is None


def test_look_alikes_hold_no_shared_error() -> None:
    for line in ("CUDA error: no kernel image is available for execution on the device",
                 "libGLX_nvidia.so.0 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libGLX_nvidia.so.0",
                 "Loaded libEGL_nvidia.so.0 from /usr/lib/x86_64-linux-gnu",
                 "[h264_nvenc @ 0x55ca461fa380] Cannot load libnvidia-encode.so.1",
                 "Cannot load libnvcuvid.so.1",
                 "Failed to initialize NVML: Unknown Error",
                 "docker image is invalid: manifest unknown",
                 "RuntimeError: DataLoader worker (pid 4123) is killed by signal: Segmentation fault.",
                 "EGL device 0 is CUDA device 0",
                 "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB",
                 "mmap failed: Cannot allocate memory"):
        assert unsettled_reading(line) is None, line
    assert top_pair(_job("[h264_nvenc @ 0x55ca461fa380] Cannot load libnvidia-encode.so.1")) is None


#: The BigScience BLOOM 176B chronicles (2022-03-21): one A100 crashed under the training's NCCL
#: watchdog, whose CUDA event query raised the unknown error.
WATCHDOG = ("terminate called after throwing an instance of 'c10::CUDAError'\n"
            "  what():  CUDA error: unknown error\n"
            "Exception raised from query at ../aten/src/ATen/cuda/CUDAEvent.h:95 (most recent call first):\n"
            "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x42\n"
            "frame #1: c10d::ProcessGroupNCCL::WorkNCCL::finishedGPUExecutionInternal() const + 0x11a")


def test_cuda_unknown_error_from_the_wait_on_running_gpu_work_is_the_gpus() -> None:
    assert top_pair(_job(WATCHDOG, lsmod=WITH_UVM)) == ("gpu-hardware", "error_device")


def test_cuda_unknown_error_at_start_stays_the_drivers_whatever_its_wrapper() -> None:
    # CTranslate2's wrapper (faster-whisper): cudaGetErrorString after "CUDA failed with error"
    assert top_pair(_job("RuntimeError: CUDA failed with error unknown error", lsmod=WITH_UVM)) == (
        "driver", "error_device")
    # look-alike: a traceback of another call after the error is no wait on GPU work
    other = WATCHDOG.replace("query at ../aten/src/ATen/cuda/CUDAEvent.h:95", "c10_cuda_check_implementation "
                             "at ../c10/cuda/CUDAException.cpp:44").replace(
        "WorkNCCL::finishedGPUExecutionInternal", "ProcessGroupNCCL::getNCCLComm")
    assert top_pair(_job(other, lsmod=WITH_UVM)) == ("driver", "error_device")
