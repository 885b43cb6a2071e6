"""The host's IOMMU refusing a GPU's DMA: the kernel's fault events for the GPU.

An IOMMU logs a device's DMA that its page tables do not allow as an event, with no error
word in it: AMD-Vi's "nvidia 0000:07:00.0: AMD-Vi: Event logged [IO_PAGE_FAULT domain=0x0003
address=0x80000040 flags=0x0020]" (the bound driver and the device first; older kernels
write "AMD-Vi: Event logged [IO_PAGE_FAULT device=07:00.0 domain=..."), Intel VT-d's
"DMAR: [DMA Read] Request device [07:00.0] fault addr 9c000000 [fault reason 06] PTE Read
access is not set" ("[DMA Read NO_PASID]", "[0x07:0x00.0]" in newer kernels). For a GPU the
transfer the IOMMU refused is the GPU's own (peer-to-peer between GPUs first: the p2p
samples crash the GPUs, NVIDIA/cuda-samples#48; a P2P copy arrives zeroed,
tinygrad/open-gpu-kernel-modules#18; a multi-GPU benchmark faults once intel_iommu=on,
tbennun/mgbench#8), and what to change is the host's IOMMU setting (the kernel's boot
parameters, iommu=pt or off, or the firmware's), the kernel's part of the node.

Only a fault on a GPU of the node counts: one whose bound driver is nvidia, or whose bus
address the node's GPU list or the driver's own lines name. The same events for an
integrated display controller at boot (DMAR "[00:02.0]", which thesofproject/sof-test#749
filters as noise) or a NIC belong to no layer of the GPU stack.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpunode.checks.base import check, kernel_log_holds
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import dmesg_device_finding
from gpunode.model import Finding, Status
from gpunode.relazy import lazy_compile

_HEX = "[0-9a-fA-F]"
_BDF = rf"{_HEX}{{2}}:{_HEX}{{2}}\.[0-7]"
#: The fault events, each with the device: the bound driver and its address before AMD-Vi's
#: event, the address inside it (``device=``), or inside VT-d's brackets.
_FAULT = lazy_compile(
    rf"(?:(?P<driver>[\w-]{{1,40}}) (?:{_HEX}{{4}}:)?{_BDF}: )?"
    rf"AMD-Vi: Event logged \[\s*IO_PAGE_FAULT\b(?: device=(?:{_HEX}{{4}}:)?(?P<dev>{_BDF}))?|"
    rf"\bDMAR: \[DMA (?:Read|Write)\b[^\]]{{0,40}}\] Request device \[(?:0x)?(?:{_HEX}{{4}}:)?"
    rf"(?:0x)?(?P<bus>{_HEX}{{2}}):(?:0x)?(?P<slot>{_HEX}{{2}})\.(?:0x)?(?P<fn>[0-7])\]"
    rf"[^\n]{{0,80}}\bfault addr\b")
#: The nvidia driver naming a device it is bound to ("nvidia 0000:07:00.0: enabling device"),
#: and its own GPU lines ("NVRM: GPU at PCI:0000:07:00: GPU-...", Xid's "(PCI:0000:07:00)").
_DRIVER_BOUND = lazy_compile(rf"\bnvidia (?:{_HEX}{{4}}:)?({_HEX}{{2}}:{_HEX}{{2}}\.[0-7]):")
_NVRM_GPU = lazy_compile(rf"\bNVRM: .{{0,40}}\bPCI:(?:{_HEX}{{4,8}}:)?({_HEX}{{2}}:{_HEX}{{2}})\b")
_LITERALS = ("IO_PAGE_FAULT", "DMAR: [DMA ")


_may_fault = kernel_log_holds(*_LITERALS)


def _gpus(ctx: NodeContext, lines: list[str]) -> set[str]:
    """The node's GPUs by bus address (bus:device.function, and bus:device for NVRM's form)."""
    out = ctx.smi_bus_ids
    for line in lines:
        if "nvidia " in line or "NVRM" in line:
            out.update(m.group(1).lower() for m in _DRIVER_BOUND.finditer(line))
            out.update(m.group(1).lower() for m in _NVRM_GPU.finditer(line))
    return out


def gpu_fault(line: str, gpus: set[str]) -> bool:
    """Whether ``line`` is an IOMMU fault event for one of ``gpus`` (or a device the nvidia
    driver names as bound in the line itself)."""
    found = _FAULT.search(line)
    if found is None:
        return False
    if found["driver"] is not None:
        return found["driver"] == "nvidia"
    if found["bus"] is not None:
        device = f"{found['bus']}:{found['slot']}.{found['fn']}".lower()
    else:
        device = (found["dev"] or "").lower()
    return bool(device) and (device in gpus or device[:5] in gpus)


@check("kernel", may_find=_may_fault)  # dmesg is one of the kernel's sources, not its need
def iommu_blocks_gpu(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The first IOMMU fault event for a GPU of the node (those after it repeat it), as the
    kernel's failure of the device-error class: the host's IOMMU setting blocks the GPU's DMA."""
    split = ctx.text_lines("cmd", "dmesg.txt")
    if split is None:
        return
    lines = list(split[0])
    gpus = _gpus(ctx, lines)
    index = next((i for i, text in enumerate(lines) if gpu_fault(text, gpus)), None)
    if index is None:
        return
    yield dmesg_device_finding(ctx, component, lines, index, Status.DEGRADED,
                               verb="blocks a GPU's DMA (IOMMU fault)")
