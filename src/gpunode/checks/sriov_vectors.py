"""The host kernel's NIC driver refusing to create a physical function's virtual functions for
want of interrupt vectors.

Before it creates VFs, Intel's ice driver shares out the PF's MSI-X vectors: what the PF itself
and the drivers on top of it (irdma, its RDMA driver, takes vectors per CPU) hold is not
available to VFs, and where fewer than the minimum per VF remain it refuses the write to
``sriov_numvfs`` (ENOSPC) with "Only %d MSI-X interrupts available for SR-IOV. Not enough to
support minimum of %d MSI-X interrupts per VF for %d VFs" (drivers/net/ethernet/intel/ice,
ice_sriov.c ``ice_set_per_vf_res``; "Not enough vectors to support %d VFs" before it). On a
server with hundreds of CPUs ice and irdma use up the E810's budget at probe, so no VF can be
created (openshift/sriov-network-operator#1185, OCPBUGS-82499): fixed in the host's module
configuration (irdma blacklisted, ice's ``msix_vec_per_pf_max`` devlink parameter from Linux
6.14), the kernel's part of the node, whose class is an exhausted resource.

A PF whose VF BARs found no MMIO window ("not enough MMIO resources for SR-IOV",
drivers/pci/iov.c) is the platform firmware's placement of the NIC's VFs, not read here.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpunode.checks.base import check
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import line_finding
from gpunode.decisive import Decisive
from gpunode.model import Finding, Status
from gpunode.relazy import lazy_compile

_VECTORS = lazy_compile(r"\bOnly \d+ MSI-X interrupts available for SR-IOV\b|"
                        r"\bNot enough vectors to support \d+ VFs\b")
_LITERALS = ("MSI-X interrupts available for SR-IOV", "Not enough vectors to support")
_EXHAUSTED = "error_resource_exhausted"


def _may_refuse(ctx: NodeContext) -> bool:
    text = ctx.obs.cmd.get("dmesg.txt") or ""
    return any(map(text.__contains__, _LITERALS))  # (in C: asked on every node)


@check("kernel", may_find=_may_refuse)  # dmesg is one of the kernel's sources, not its need
def vf_vectors_exhausted(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The last refusal of a PF's VFs for want of MSI-X vectors, as the kernel's failure of the
    resource-exhausted class."""
    split = ctx.text_lines("cmd", "dmesg.txt")
    if split is None:
        return
    lines = split[0]
    index = next((i for i in range(len(lines) - 1, -1, -1) if _VECTORS.search(lines[i])), None)
    if index is None:
        return
    line = lines[index].strip()
    where = f"{ctx.obs.path_of('cmd', 'dmesg.txt')}:{index + 1}"
    yield line_finding(ctx.kb, component, Status.DEGRADED, Decisive(index + 1, line, 1), where,
                       verb="cannot create a NIC's virtual functions (MSI-X vectors used up)",
                       standalone="true", line_class=_EXHAUSTED)
