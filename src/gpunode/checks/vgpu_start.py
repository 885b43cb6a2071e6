"""A vGPU whose guest driver the host refuses: Xid 78 in the guest's kernel log.

The driver reports a vGPU that could not start as Xid 78 (VGPU_START_ERROR; NVIDIA's Xid
catalog puts it in the UPDATE_SWFW bucket: the software must change, the GPU is fine). Its
message says why: "Guest driver is incompatible with host driver", which the resource manager
logs where the guest's RM and the host's vGPU manager are of branches that do not work together
(vgpuCreateObject answering NV_ERR_LIB_RM_VERSION_MISMATCH, open-gpu-kernel-modules
src/nvidia/src/kernel/gpu/gpu.c), or "vGPU type is not supported" (a profile the guest OS or
GPU cannot run). Either way the guest's driver is what must change (skypilot-org/skypilot#10468:
an R535 GRID guest driver on an Azure A10 host running vGPU 18, neither nvidia-smi nor a
container saw the GPU until the R570 guest driver was installed). So an Xid 78 line in the
node's kernel log is a finding against the driver, of the class its message falls in (the
version mismatch for the first string). The Xid check leaves it alone: its catalog entry names
no GPU cause.

A ticket quotes the line without the kernel's head ("Xid 78: Guest driver is incompatible with
host driver"); that form is read only where one of the driver's own two messages follows, so
prose naming the code stays prose.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpunode.checks.base import check, kernel_log_holds
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import line_finding
from gpunode.decisive import Decisive
from gpunode.model import Finding, Status
from gpunode.relazy import lazy_compile

#: The driver's Xid for a vGPU that did not start.
VGPU_START_ERROR = 78
#: The Xid's two messages, quoted without the kernel's "NVRM: Xid (PCI:...): " head.
_QUOTED = lazy_compile(
    r"(?<![\w:(])Xid 78[:,] (?:Guest driver is incompatible with host driver|vGPU type is not supported)\b")
_LITERAL = "Xid 78"


#: Both ways in need the kernel log's "Xid " and a "78": a parsed Xid event (read only from a
#: log holding "Xid ") and the quoted form. "78" alone is in a third of the logs.
_may_find = kernel_log_holds(("Xid ", "78"))


@check("driver", may_find=_may_find)
def vgpu_start_refused(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The last Xid 78 of the node's kernel log (the module docstring says why it is the
    driver's)."""
    hit: tuple[int, str] | None = None
    log = ctx.kernel_log
    for event in log.xids if log is not None else ():
        if event.xid == VGPU_START_ERROR:
            hit = (event.line_no, event.line.strip())
    text = ctx.obs.cmd.get("dmesg.txt") or ""
    if hit is None and _LITERAL in text:
        split = ctx.text_lines("cmd", "dmesg.txt")
        for index, line in enumerate(split[0] if split is not None else ()):
            if _LITERAL in line and _QUOTED.search(line):
                hit = (index + 1, line.strip())
    if hit is None:
        return
    line_no, line = hit
    where = f"{ctx.obs.path_of('cmd', 'dmesg.txt')}:{line_no}"
    yield line_finding(ctx.kb, component, Status.FAILED, Decisive(line_no, line, 1), where,
                       verb="cannot start its vGPU in the kernel log", standalone="true")
