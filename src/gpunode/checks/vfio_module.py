"""A node set up for VM passthrough whose kernel has VFIO but not its PCI driver loaded.

A GPU goes whole to a VM only bound to vfio-pci, the VFIO bus driver for PCI devices
(the kernel's VFIO guide, https://docs.kernel.org/driver-api/vfio.html: a device is bound to
vfio-pci before its group can be handed to userspace). vfio-pci depends on the VFIO core
(drivers/vfio/pci/Kconfig: VFIO_PCI depends on VFIO), so where the core is a loaded module
vfio-pci cannot be built in: lsmod listing vfio (or vfio_iommu_type1) and no vfio_pci or
vfio_pci_core means the driver is not in the kernel now, and no GPU can be bound to it. The
GPU Operator's vfio-manager loads it and binds the GPUs on a node labelled
nvidia.com/gpu.workload.config=vm-passthrough (its KubeVirt guide); other passthrough
controllers do the same (harvester/harvester#7815: the module gone hours after the
pcidevices controller loaded it, passthrough failing until it was loaded again).

Read only where the node's own label says passthrough and the NVIDIA module is not loaded (a
GPU held by the NVIDIA driver serves containers, whatever the label says): then the GPUs are
held by no driver and ``vfio_pci_not_bound`` is the vfio-manager's. Without lsmod, or with
VFIO not listed at all (built in, or not used), nothing is said.
"""

from __future__ import annotations

from collections.abc import Container, Iterator, Mapping

from gpunode.checks.base import check, problem, reads
from gpunode.checks.context import NodeContext
from gpunode.checks.operator import WORKLOAD_CONFIG
from gpunode.model import Evidence, Finding

#: VFIO's own modules, loaded where the kernel builds VFIO as modules.
_VFIO_CORE = ("vfio", "vfio_iommu_type1")
#: vfio-pci's modules (vfio_pci_core split out of it in 5.15).
_VFIO_PCI = ("vfio_pci", "vfio_pci_core")


def vfio_pci_missing(labels: Mapping[str, str], modules: Container[str] | None) -> bool:
    """A vm-passthrough node whose lsmod lists VFIO's core but not vfio-pci, nor nvidia."""
    if modules is None or labels.get(WORKLOAD_CONFIG) != "vm-passthrough":
        return False
    return (any(m in modules for m in _VFIO_CORE) and not any(m in modules for m in _VFIO_PCI)
            and "nvidia" not in modules)


# (the loaded modules are read from lsmod or /proc/modules: a node with neither has none to read)
@check("vfio-manager", needs=("node",), may_find=reads("cmd/lsmod.txt", "files/proc/modules"))
def vfio_pci_not_loaded(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The node's passthrough GPUs can be bound to no vfio-pci (module doc)."""
    node = ctx.node
    modules = ctx.modules
    if node is None or modules is None or not vfio_pci_missing(node.metadata.labels, modules):
        return
    shown = ", ".join(sorted(m for m in modules if m.startswith("vfio")))
    ev = Evidence(ctx.obs.path_of("cmd", "lsmod.txt"), f"loaded: {shown}; no vfio_pci")
    known = ctx.kb.get("vfio_pci_not_bound")
    yield problem(component, known.code, ev, specificity=known.specificity)
