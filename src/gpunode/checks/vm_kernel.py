"""The kernel's words about GPUs given to VMs, and a vGPU guest's driver refused by its host.

A node that hands its GPUs to VMs (vfio-pci, KubeVirt, Kata) has the host kernel between the
GPU and the VM, and the kernel says when that fails:

- VFIO's type1 IOMMU backend refuses to attach a device's group where the platform has no
  interrupt remapping: "vfio_iommu_type1_attach_group: No interrupt remapping support.  Use the
  module param "allow_unsafe_interrupts" to enable VFIO IOMMU support on this platform"
  (drivers/vfio/vfio_iommu_type1.c, returning -EPERM, which QEMU relays as "Failed to set iommu
  for container: Operation not permitted"). The host's IOMMU setup (interrupt remapping in the
  firmware, the kernel's IOMMU options) is the kernel's part of the node: its permission class.
- The PCI core giving up on a GPU after a reset ("not ready 65535ms after FLR; giving up",
  pci_dev_wait) or finding it gone on power-up ("Unable to change power state from D3cold to
  D0, device inaccessible", pci_power_up), both in drivers/pci/pci.c: the GPU does not answer
  on its bus, the GPU hardware's device class. Its "not ready ...; waiting" and "ready ... after
  FLR" are progress, not read. Only a GPU of the node counts, as for a refused BAR
  (gpunode.checks.pci_resources), and a device vfio-pci binds where the VM device plugin or
  the VFIO manager runs.

A vGPU guest's driver whose branch the host's vGPU manager does not support says so in the
guest's kernel log ("NVRM_RPC: SetGuestSystemInfo: The host version (x.y) is too old.", the
vGPU RPC of open-gpu-kernel-modules) and the vGPU is disabled: read with the job-error table's
entry for it (data/job_errors/virtualization.toml), the driver's version mismatch.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from gpunode.checks.base import check, kernel_log_holds
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import line_finding
from gpunode.checks.pci_resources import gpus_to_vms, names_node_gpu, node_gpus
from gpunode.checks.vm_devices import VM_PLUGIN
from gpunode.decisive import MAX_LINE, Decisive
from gpunode.job_errors import job_error
from gpunode.model import Finding, Status
from gpunode.relazy import lazy_compile

_HEX = "[0-9a-fA-F]"
#: vfio_iommu_type1's refusal of a group on a platform without interrupt remapping.
_NO_IRQ_REMAP = lazy_compile(r"\bNo interrupt remapping support\.\s+Use the module param\b")
#: The PCI core's failures to bring a device back, with its bound driver and bus address.
_GPU_GONE = lazy_compile(
    rf"\b(?P<driver>[\w-]{{1,40}}) (?P<bus>(?:{_HEX}{{4}}:)?{_HEX}{{2}}:{_HEX}{{2}}\.[0-7]): "
    r"(?:not ready \d+ms after [\w ()>-]{1,40}; giving up"
    r"|Unable to change power state from D3\w* to D0, device inaccessible)")
VFIO_MANAGER = "vfio-manager"
#: The job-error entries of the guest driver's handshake with its host (guest kernel log).
_HANDSHAKE = ("vgpu-host-version-too-old", "vgpu-guest-host-incompatible")


def _dmesg(ctx: NodeContext) -> list[str]:
    split = ctx.text_lines("cmd", "dmesg.txt")
    return list(split[0]) if split is not None else []


def _finding(ctx: NodeContext, component: str, lines: Sequence[str], index: int, *,
             verb: str, line_class: str | None) -> Finding:
    where = f"{ctx.obs.path_of('cmd', 'dmesg.txt')}:{index + 1}"
    found = Decisive(index + 1, lines[index].strip()[:MAX_LINE], 1)
    return line_finding(ctx.kb, component, Status.FAILED, found, where, verb=verb,
                        standalone="true", line_class=line_class)


_may_refuse = kernel_log_holds("interrupt remapping")


@check("kernel", may_find=_may_refuse)  # dmesg is one of the kernel's sources, not its need
def vfio_without_irq_remap(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """VFIO refusing a device group for want of interrupt remapping: no VM gets the GPU."""
    lines = _dmesg(ctx)
    index = next((i for i, text in enumerate(lines) if _NO_IRQ_REMAP.search(text)), None)
    if index is not None:
        yield _finding(ctx, component, lines, index, verb="refuses VFIO without interrupt remapping",
                       line_class="error_permission_denied")


def _for_vms(ctx: NodeContext) -> bool:
    """The node gives its GPUs to VMs: as gpunode.checks.pci_resources tells, or the VM device
    plugin or the VFIO manager runs on it."""
    return gpus_to_vms(ctx) or any(ctx.stack_pods(c) for c in (VM_PLUGIN, VFIO_MANAGER))


_may_be_gone = kernel_log_holds("giving up", "device inaccessible")


def gpu_not_back(line: str, gpus: set[str], for_vms: bool) -> bool:
    """Whether ``line`` is the PCI core giving up on one of the node's GPUs (names_node_gpu)."""
    return names_node_gpu(_GPU_GONE.search(line), gpus, for_vms)


@check("gpu-hardware", may_find=_may_be_gone)  # dmesg is one of the GPU's sources, not its need
def gpu_not_back_from_reset(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The first GPU the PCI core could not bring back after a reset or from D3cold."""
    lines = _dmesg(ctx)
    gpus, for_vms = node_gpus(ctx), _for_vms(ctx)
    index = next((i for i, text in enumerate(lines) if gpu_not_back(text, gpus, for_vms)), None)
    if index is not None:
        yield _finding(ctx, component, lines, index, verb="does not come back on its bus",
                       line_class="error_device")


_may_handshake = kernel_log_holds("SetGuestSystemInfo", "Guest/Host")


def _handshake_refused(line: str) -> bool:
    found = job_error(line) if "NVRM" in line else None
    return found is not None and found.id in _HANDSHAKE


@check("driver", may_find=_may_handshake)  # dmesg is one of the driver's sources, not its need
def vgpu_host_refuses_guest(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A vGPU guest's driver that its host's vGPU manager does not support."""
    lines = _dmesg(ctx)
    index = next((i for i, text in enumerate(lines) if _handshake_refused(text)), None)
    if index is not None:
        yield _finding(ctx, component, lines, index, verb="is refused by the host's vGPU manager",
                       line_class="error_version_mismatch")
