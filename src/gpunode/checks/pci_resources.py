"""The host kernel refusing a GPU's memory region: a BAR another owner holds.

A driver that binds a PCI device claims its memory regions (BARs) from the kernel's
resource tree; ``__pci_request_region`` (drivers/pci/pci.c) logs "<driver> <bus>: BAR N:
can't reserve [mem ...]" when that region is already held. For a GPU the holder is the
host's own boot console: the firmware's framebuffer (efifb, simplefb/simpledrm through
sysfb, "BOOTFB" in /proc/iomem) sits in the boot GPU's BAR, so vfio-pci cannot reserve it
and the VM that is given the GPU cannot use it (harvester/pcidevices#81; siderolabs/talos#14356:
simpledrm holding the boot GPU after a kernel change; cosminmocan/vfio-single-amdgpu-passthrough#3).
What to change is the host kernel's boot (video=efifb:off, initcall_blacklist=sysfb_init,
unbinding the framebuffer and consoles): the kernel's part of the node, a device error.

Only a GPU of the node counts: a device the nvidia driver binds, one whose bus address the
node's GPU lists name, or one vfio-pci binds on a node that gives its GPUs to VMs. The
kernel's boot-time assignment notices ("BAR 13: failed to assign [io size 0x1000]", "no
space for") are bridges' windows it could not place, usually unused, and not read here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpunode.checks.base import check, kernel_log_holds
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import dmesg_device_finding
from gpunode.checks.operator import VM_WORKLOADS, WORKLOAD_CONFIG
from gpunode.checks.probe import VFIO_DRIVER
from gpunode.checks.sandbox import vm_workload
from gpunode.model import Finding, Status
from gpunode.parse.gpu_ref import short_bus_id
from gpunode.relazy import lazy_compile

_HEX = "[0-9a-fA-F]"
#: ``pci_warn(pdev, "BAR %d: can't reserve %pR\n", ...)`` with the bound driver and the
#: device before it (the straight or typographic apostrophe, as copied from a terminal).
_CANT_RESERVE = lazy_compile(
    rf"\b(?P<driver>[\w-]{{1,40}}) (?P<bus>(?:{_HEX}{{4}}:)?{_HEX}{{2}}:{_HEX}{{2}}\.[0-7]): "
    r"BAR \d{1,2}: can[’']t reserve \[(?:mem|io)\b")
_LITERAL = "t reserve ["
_NVIDIA = "nvidia"


_may_reserve = kernel_log_holds(_LITERAL)


def node_gpus(ctx: NodeContext) -> set[str]:
    """The node's GPUs by bus address (bus:device.function), from nvidia-smi and the probe."""
    listed = ctx.smi_bus_ids
    probe = ctx.probe if "gpunode-probe.json" in ctx.obs.cmd else None
    if probe is not None:
        listed.update(short_bus_id(g.address) for g in probe.host.pci_gpus if g.address)
    return listed


def gpus_to_vms(ctx: NodeContext) -> bool:
    """The node gives its GPUs to VMs: the operator's VM workload, the node's workload label
    naming one (set for the operator or for another VFIO manager, Harvester's, KubeVirt's),
    or the probe finding every NVIDIA GPU on the PCI bus bound to vfio-pci."""
    labels = ctx.node.metadata.labels if ctx.node is not None else {}
    if vm_workload(ctx) is not None or labels.get(WORKLOAD_CONFIG) in VM_WORKLOADS:
        return True
    probe = ctx.probe if "gpunode-probe.json" in ctx.obs.cmd else None
    gpus = probe.host.pci_gpus if probe is not None and probe.host.pci_read else ()
    return bool(gpus) and all(g.driver == VFIO_DRIVER for g in gpus)


def names_node_gpu(found: re.Match[str] | None, gpus: set[str], for_vms: bool) -> bool:
    """Whether a kernel line's device (the match's ``driver`` and ``bus`` groups) is one of
    ``gpus``, a device the nvidia driver binds, or one vfio-pci binds where the node's GPUs go
    to VMs: the kernel's device lines name a PCI function, not a GPU."""
    if found is None:
        return False
    driver = found["driver"]
    return (driver == _NVIDIA or short_bus_id(found["bus"]) in gpus
            or (driver == VFIO_DRIVER and for_vms))


def gpu_region_refused(line: str, gpus: set[str], for_vms: bool) -> bool:
    """Whether ``line`` is the kernel refusing a BAR of one of the node's GPUs (names_node_gpu)."""
    return names_node_gpu(_CANT_RESERVE.search(line) if _LITERAL in line else None, gpus, for_vms)


@check("kernel", may_find=_may_reserve)  # dmesg is one of the kernel's sources, not its need
def gpu_bar_held(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The first refusal of a GPU's BAR (those after it repeat it), as the kernel's failure
    of the device-error class: the host holds the GPU's memory region."""
    split = ctx.text_lines("cmd", "dmesg.txt")
    if split is None:
        return
    lines = list(split[0])
    gpus, for_vms = node_gpus(ctx), gpus_to_vms(ctx)
    index = next((i for i, text in enumerate(lines) if gpu_region_refused(text, gpus, for_vms)), None)
    if index is None:
        return
    yield dmesg_device_finding(ctx, component, lines, index, Status.FAILED,
                               verb="refuses a GPU's memory region")
