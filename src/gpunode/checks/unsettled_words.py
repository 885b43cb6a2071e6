"""A GPU job's error that names the layer most likely at fault, where the node's facts settle nothing.

Some errors a job prints are shared by several layers, so the table of job errors
(data/job_errors.toml) leaves them to the node's facts (checks.workload_logs). Where those
facts name no layer either, three of them still point at one layer far more often than at
any other, and are read as that layer's, ``degraded`` (not ``failed``: the words alone do
not prove it), with the fact that would settle it:

* CUDA's unknown error (cudaErrorUnknown, 30 before CUDA 10.1 and 999 since; the driver
  API's CUDA_ERROR_UNKNOWN) from a job on a node whose lsmod does not show nvidia_uvm
  missing (that reading is checks.uvm_words'). CUDA returns it where the driver's state is
  what failed, not the program's call ("an unknown internal error has occurred", the CUDA
  runtime API's cudaError_t): reports are fixed on the node's driver by a reboot, a reload of
  the modules or a reinstall (immich-app/immich#13045, NVIDIA/libnvidia-container#103). The
  driver's ``error_device``; the kernel log's Xids and a driver reload settle it. On a node
  that shares its GPUs between pods (MPS, time-slicing) nothing is said: an MPS client gets
  the same error where its server failed (NVIDIA/k8s-device-plugin#685, a pre-Volta GPU).
  Nor where the job's own strace shows a driver device node refused to it (EPERM on
  /dev/nvidiactl): that is the container's device access, not the driver's state.
* CUDA's invalid kernel image (cudaErrorInvalidKernelImage and CUDA_ERROR_INVALID_IMAGE,
  200: "the device kernel image is invalid"), where the driver cannot load a kernel image
  that a newer CUDA toolchain built (PTX or cubin of a newer ISA than the driver's JIT
  knows): the job's image on a node driver older than it (canonical/inference-snaps#255,
  llama.cpp's CUDA 12 build on driver 535, fixed by driver 580; openai/triton#1955, a
  Triton built with a CUDA newer than the driver). A program that asks for an architecture
  the GPU lacks gets 209 ("no kernel image is available"), its own business and not read
  here. The driver's ``cuda_driver_too_old``; the job's CUDA version (its image tag, the
  version it prints) against the node driver's settles it, and where the node's driver is at
  or above it nothing is said.
* One of the NVIDIA driver's glvnd vendor libraries (libGLX_nvidia, libEGL_nvidia,
  libGLESv2_nvidia, libGLESv1_CM_nvidia) that the job could not load. The driver's
  GL package installs them (libnvidia-gl-<branch> on Ubuntu; a headless or compute-only
  install has none, NVIDIA/deepops#1223; the WSL2 driver gives containers CUDA but no GLX or
  Vulkan library, gezp/docker-ubuntu-desktop#41), and the NVIDIA runtime mounts them from the
  host for the ``graphics`` capability (libnvidia-container's src/nvc_info.c). The driver's
  ``error_not_found``; the host's GL libraries and the pod's NVIDIA_DRIVER_CAPABILITIES settle
  it (a pod spec whose literal capabilities leave graphics out is its own request:
  checks.pod_env drops the finding there). The same where the job finds no EGL device for its
  CUDA device (Magnum's EGL context, facebookresearch/habitat-sim#1829): only libEGL_nvidia
  lists the GPU as an EGL device.
* PyTorch's DataLoader workers gone ("DataLoader worker (pid(s) N) exited unexpectedly", or
  one killed by a bus error without the handler's words): in a container, the shared memory
  the workers pass tensors through (/dev/shm, 64 MB by default in Docker and in a pod without a
  memory-backed emptyDir; PyTorch's README: raise it with --ipc=host or --shm-size) or the
  container's memory (facebookresearch/detectron2#384, fixed by --shm-size=8g). The container
  runtime's ``error_resource_exhausted``, as the DataLoader's own shared-memory words are
  (data/job_errors.toml shm-bus-error); the container's /dev/shm size settles it.
* A process that could not fork for want of memory (Python's "OSError: [Errno 12] Cannot
  allocate memory" from os.fork, a shell's "fork: Cannot allocate memory") in a pod that holds
  AWS EFA devices: libfabric's EFA provider, which NCCL's aws-ofi-nccl plugin loads, takes its
  internal buffer pools from the node's huge pages by default (ofiwg/libfabric#9739) and marks
  its registered buffers not to be copied on fork (ofiwg/libfabric#7431), and AWS's EFA cheat
  sheet for distributed training (aws-samples/awsome-distributed-training,
  1.architectures/efa-cheatsheet.md) gives FI_EFA_USE_HUGE_PAGE=0 as the fix "when you see
  os.fork() causes OSError: Cannot allocate memory" (a PyTorch DataLoader's workers). The
  GPU-to-fabric path's ``error_resource_exhausted``; the pod's FI_EFA_USE_HUGE_PAGE and the
  node's free huge pages settle it. A pod that holds no EFA device is not read.

Video libraries (libnvidia-encode, libnvcuvid) are not read: the same words come from
containers that did not ask for the ``video`` capability, as often as from hosts without
them (data/job_errors/graphics_video.toml).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpunode.checks.uvm_words import says_init_unknown
from gpunode.relazy import lazy_compile


@dataclass(frozen=True)
class Unsettled:
    """A shared error's most likely layer: its component, its cause (a class or a catalogued
    cause), and the node fact that would settle it."""

    component: str
    cause: str
    settled_by: str
    #: Whether the node's driver serving the job's CUDA rules the reading out.
    needs_newer_cuda: bool = False
    #: The NVIDIA runtime capability whose files the error is about: a pod whose literal
    #: NVIDIA_DRIVER_CAPABILITIES leaves it out asked for none of them.
    capability: str | None = None
    #: Whether GPUs shared between pods (MPS, time-slicing) rule the reading out: there a
    #: client's error may be the sharing layer's (an MPS server that failed).
    whole_gpus_only: bool = False
    #: A device resource (its name's prefix) the job's container must hold for the reading to
    #: stand: the error is that device's library's only where the job was given the device.
    needs_resource: str = ""
    #: Whether the job's own record of a driver device node refused to it (an strace of
    #: /dev/nvidiactl answering EPERM) rules the reading out: that is the container's device
    #: access, which the toolkit and the runtime give, not the driver's state.
    device_access_settles: bool = False


#: CUDA's invalid kernel image, by name or the runtime's text for it.
_INVALID_IMAGE = lazy_compile(r"\bdevice kernel image is invalid\b|\bcudaErrorInvalidKernelImage\b"
                              r"|\bCUDA_ERROR_INVALID_IMAGE\b")
#: An strace line of a driver device node opened and refused (EPERM, EACCES): strace writes
#: 'openat(AT_FDCWD, "/dev/nvidiactl", O_RDWR) = -1 EPERM (Operation not permitted)'.
_DEVICE_REFUSED = lazy_compile(r'"/dev/nvidia[\w-]*"[^\n]*= -1 E(?:PERM|ACCES)\b')
#: The driver's glvnd vendor libraries (GLX, EGL, GLES) by their soname.
_VENDOR_LIBRARY = r"lib(?:GLX|EGL|GLESv2|GLESv1_CM)_nvidia\.so(?:\.\d+)*"
#: A job failing to load one: the loader's own words, or a program's around the name.
_VENDOR_NOT_LOADED = lazy_compile(
    r"(?i:\b(?:cannot|can.t|can ?not|couldn.t|could not|failed to|unable to)\s+"
    r"(?:load|open|find|dlopen|locate)\b)"
    rf"[^\n]{{0,40}}?(?<![\w.+-]){_VENDOR_LIBRARY}(?![\w-])"
    rf"|(?<![\w.+-]){_VENDOR_LIBRARY}:\s*cannot open shared object file")
#: No EGL device that is a given CUDA device (Magnum's WindowlessEglApplication, habitat-sim's
#: renderer: EGL_EXT_device_enumeration, then each device's EGL_CUDA_DEVICE_NV attribute, which
#: only NVIDIA's EGL vendor library answers): libEGL_nvidia was not there to list the GPU.
_NO_EGL_CUDA_DEVICE = lazy_compile(
    r"(?i:\b(?:unable to find|cannot find|can.t find|no) EGL device for CUDA device\b)")
#: PyTorch's DataLoader finding its workers gone (torch/utils/data/dataloader.py, _try_get_data:
#: "DataLoader worker (pid(s) ...) exited unexpectedly"), or one killed by SIGBUS in the parent's
#: words ("DataLoader worker (pid N) is killed by signal: Bus error").
_LOADER_WORKER_GONE = lazy_compile(
    r"\bDataLoader worker \(pids?(?:\(s\))? [\d, ]+\) (?:exited unexpectedly|is killed by signal: Bus error)")
#: A process's fork refused for want of memory: Python's OSError from os.fork (ENOMEM, errno 12)
#: and a shell's or a launcher's "fork: Cannot allocate memory".
_FORK_NO_MEMORY = lazy_compile(
    r"\bOSError: (?:\[Errno 12\] )?Cannot allocate memory\b"
    r"|\bfork(?:\(\))?(?: failed)?: (?:\[Errno 12\] )?Cannot allocate memory\b")

CUDA_UNKNOWN = Unsettled(
    "driver", "error_device",
    "the kernel log's Xids and whether a driver reload or reboot clears it (nvidia_uvm is loaded "
    "or not read)", whole_gpus_only=True, device_access_settles=True)
#: CUDA's unknown error raised while the job waited on GPU work it had already run (its event
#: query): past CUDA's and the driver's initialisation, with the job's kernels running, the
#: device is what stopped answering (the BigScience BLOOM 176B training chronicles, 2022-03-21:
#: "CUDA error: unknown error" from CUDAEvent's query in the NCCL watchdog when one A100 of a
#: node crashed, one of the run's recurring GPU hardware failures). The GPU hardware's
#: ``error_device``; the kernel log's Xids settle it.
CUDA_UNKNOWN_RUNNING = Unsettled(
    "gpu-hardware", "error_device",
    "the kernel log's Xids for the GPU (an Xid 79, 48 or 119 names the failure) and whether the "
    "GPU answers nvidia-smi", whole_gpus_only=True, device_access_settles=True)
INVALID_IMAGE = Unsettled(
    "driver", "cuda_driver_too_old",
    "the CUDA version the job's image was built with against the node driver's", needs_newer_cuda=True)
VENDOR_LIBRARY = Unsettled(
    "driver", "error_not_found",
    "whether the host's driver install has its GL libraries, and the pod's "
    "NVIDIA_DRIVER_CAPABILITIES (graphics)", capability="graphics")
LOADER_WORKER_GONE = Unsettled(
    "container-runtime", "error_resource_exhausted",
    "the container's /dev/shm size (the runtime's 64 MB default, a memory-backed emptyDir) and the "
    "kernel log's OOM kills")

EFA_FORK_NO_MEMORY = Unsettled(
    "gpudirect-rdma", "error_resource_exhausted",
    "the pod's FI_EFA_USE_HUGE_PAGE (0 keeps libfabric's EFA buffers off the huge pages) and the "
    "node's free huge pages (HugePages_Free in /proc/meminfo)", needs_resource="vpc.amazonaws.com/efa")


def unsettled_reading(line: str) -> Unsettled | None:
    """The shared error ``line`` holds, with its most likely layer; None where it holds none."""
    if ("image" in line or "IMAGE" in line) and _INVALID_IMAGE.search(line):
        return INVALID_IMAGE
    if ("_nvidia" in line and _VENDOR_NOT_LOADED.search(line)) or (
            "EGL device" in line and _NO_EGL_CUDA_DEVICE.search(line)):
        return VENDOR_LIBRARY
    if "DataLoader worker" in line and _LOADER_WORKER_GONE.search(line):
        return LOADER_WORKER_GONE
    if says_init_unknown(line):
        return CUDA_UNKNOWN
    if "allocate memory" in line and _FORK_NO_MEMORY.search(line):
        return EFA_FORK_NO_MEMORY
    return None


def device_refused(lines: Sequence[str]) -> bool:
    """Whether the job's lines record a driver device node opened and refused (strace)."""
    return any("/dev/nvidia" in line and _DEVICE_REFUSED.search(line) for line in lines)


#: PyTorch's traceback for an error raised while it waited on the job's GPU work: the CUDA
#: event query of its NCCL watchdog (c10d ProcessGroupNCCL's WorkNCCL::finishedGPUExecution,
#: "Exception raised from query at .../ATen/cuda/CUDAEvent.h"; CUDAEvent::query raises every
#: answer but cudaErrorNotReady). The GPU had run the job's kernels by then.
_WORK_QUERY = lazy_compile(r"\bException raised from query at \S*CUDAEvent\.h:\d+"
                           r"|\bWorkNCCL::finishedGPUExecution")
#: How many lines after the error its traceback's frames are looked for in.
_TRACE_LINES = 8


def unsettled_index(lines: Sequence[str]) -> tuple[int, Unsettled] | None:
    """The index of the job's last line that holds a shared error, with its reading; CUDA's
    unknown error raised from the wait on the job's running GPU work (``_WORK_QUERY`` in the
    lines after it) is the GPU's (``CUDA_UNKNOWN_RUNNING``)."""
    for index in range(len(lines) - 1, -1, -1):
        reading = unsettled_reading(lines[index])
        if reading is not None:
            if reading is CUDA_UNKNOWN and any(
                    _WORK_QUERY.search(line) for line in lines[index + 1:index + 1 + _TRACE_LINES]):
                return index, CUDA_UNKNOWN_RUNNING
            return index, reading
    return None
