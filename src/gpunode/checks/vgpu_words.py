"""CUDA's busy-or-unavailable error in a GPU job on a vGPU guest, settled by the node's GPUs.

CUDA's cudaErrorDevicesUnavailable (46: "all CUDA-capable devices are busy or unavailable",
"CUDA-capable device(s) is/are busy or unavailable" since CUDA 11) is shared: a GPU in an
exclusive compute mode that another process holds, a GPU that needs a reset (its own kernel
log says so), or a driver that refuses CUDA on the device. Where the node's GPU is a vGPU (a
virtual GPU profile such as "GRID V100D-8C" or "NVIDIA A10-24Q", or NVML's virtualization mode
VGPU), the guest driver refuses CUDA once the vGPU holds no licence past its grace period (NVIDIA
vGPU for Compute licensing: an unlicensed VM is degraded after 20 minutes, docs.nvidia.com/
ai-enterprise/release-8/latest/infra-software/vgpu/licensing.html; Azure/AKS#4870: this error
on every pod of unlicensed A10 vGPU nodes, nvidia-smi reporting the licence Unlicensed), while
nvidia-smi answers. The guest driver's licence is the driver install's (its nvidia-gridd
daemon and configuration), so the driver's ``error_device``. On a GPU that is no vGPU the error
keeps its other readings and nothing is said here.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpunode.relazy import lazy_compile

#: CUDA's cudaErrorDevicesUnavailable in its texts and by name.
_UNAVAILABLE = lazy_compile(r"\bCUDA-capable device(?:s|\(s\))? (?:is/are|are) busy or unavailable\b"
                            r"|\bcudaErrorDevicesUnavailable\b")
#: A vGPU profile as nvidia-smi and GFD's product label name it: the board, an optional MIG
#: slice, the framebuffer in GB and the series letter ("GRID V100D-8C", "NVIDIA A100-4-20C",
#: "NVIDIA A10-24Q"; the label writes spaces as dashes, "GRID-V100D-8C").
VGPU_PROFILE = lazy_compile(r"^(?:GRID|NVIDIA)[ -][A-Z]{1,2}\d{1,4}[A-Z]?(?:-\d{1,2})?-\d{1,3}[ABCQ]$")


#: Cloud instance sizes that hold a share of one GPU rather than whole GPUs: a time-sliced vGPU
#: slice that the cloud partitions in advance, its guest running the vGPU (GRID) driver. EC2's
#: g6f and gr6f (1/8 to 1/2 of an NVIDIA L4: docs.cast.ai "Fractional GPUs (AWS)", the fVDB team's
#: g6f evaluation and AcademySoftwareFoundation/openvdb#2255's g6f.xlarge, GRID 580.159.03) and
#: Azure's NV6/12/18ads A10 v5 (1/6 to 1/2 of an A10; NV36ads and larger hold whole GPUs).
FRACTIONAL_INSTANCE = lazy_compile(r"^gr?6f\.\w+$|^Standard_NV(?:6|12|18)ads_A10_v5$")


def fractional_instance(instance_type: str) -> bool:
    """Whether the node's cloud instance type is a fractional GPU size (a vGPU slice)."""
    return bool(FRACTIONAL_INSTANCE.match(instance_type.strip()))


def is_vgpu(products: Sequence[str], modes: Sequence[str | None], label: str) -> bool:
    """Whether the node's GPUs are vGPUs: NVML's virtualization mode or nvidia-smi's product
    names where nvidia-smi listed GPUs, else GFD's product label."""
    if products:
        return (any((mode or "").upper() == "VGPU" for mode in modes)
                or all(VGPU_PROFILE.match(name.strip()) for name in products))
    return bool(VGPU_PROFILE.match(label.strip()))


def unavailable_index(lines: Sequence[str]) -> int | None:
    """The index of the job's last busy-or-unavailable error, or None."""
    return next((i for i in range(len(lines) - 1, -1, -1)
                 if "unavailable" in lines[i].lower() and _UNAVAILABLE.search(lines[i])), None)
