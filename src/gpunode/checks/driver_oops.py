"""A kernel oops whose faulting instruction lies in an NVIDIA module: the driver crashed in
the kernel.

The kernel reports a fault in its own code with a header line and then the faulting
instruction (arch/x86/mm/fault.c ``show_fault_oops`` and arch/x86/kernel/dumpstack.c; arm64's
arch/arm64/mm/fault.c ``die_kernel_fault``): "BUG: unable to handle kernel NULL pointer
dereference at …" (before 4.19), "BUG: kernel NULL pointer dereference, address: …", "BUG:
unable to handle page fault for address: …", "general protection fault: 0000 [#1] SMP" (with
", probably for non-canonical address …" since 5.x), "kernel BUG at <file>:<line>!", arm64's
"Unable to handle kernel NULL pointer dereference at virtual address …"; the instruction is
``IP: [<addr>] fn+0x1f/0x170 [module]`` (before 4.x), ``RIP: 0010:fn+0x1f/0x170 [module]``
or arm64's ``pc : fn+0x1f/0x170 [module]``, the module's name in brackets. Where that module is
one of the driver's (nvidia, nvidia_uvm, nvidia_modeset, nvidia_drm, nvidia_peermem), the
driver's own code faulted: the task that entered it (often nvidia-smi or the container CLI
opening the device) died in the kernel, and the driver is not to be trusted until the node
reboots (Microsoft's support article 4023409, "GPU is disabled on Azure N-series VMs running
Ubuntu 16.04 kernel 4.4.0-75": a NULL dereference in ``_nv011740rm [nvidia]`` under
``rm_init_adapter`` when nvidia-smi opened the GPU). An oops whose faulting instruction is
elsewhere (a file system's, the kernel's own) is not the driver's, whatever modules the report
lists as linked in, and a program's own crash (``traps: <comm>[pid] general protection fault
ip:… in libnvidia…``, a user-space fault the kernel only relays) is read by checks.crashes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from gpunode.checks.base import check, kernel_log_holds
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import line_finding
from gpunode.checks.hung_driver import NVIDIA_MODULE
from gpunode.decisive import Decisive
from gpunode.model import Evidence, Finding, Status
from gpunode.relazy import lazy_compile

#: Literals one of which every oops header holds (the gate, and the test before the pattern).
_HEADER_WORDS = ("BUG: ", "kernel BUG at ", "general protection fault", "Unable to handle kernel")
_HEADER = lazy_compile(
    r"\bBUG: (?:unable to handle (?:kernel|page fault)|kernel NULL pointer dereference)"
    r"|(?<!\] )\bgeneral protection fault(?:, probably for non-canonical address \w+)?: [0-9a-f]{4} \[#\d+\]"
    r"|\bkernel BUG at \S+:\d+!"
    r"|\bUnable to handle kernel (?:NULL pointer dereference|paging request)"
)
#: The faulting instruction's line, where its function is in an NVIDIA module.
_FAULT_IN_DRIVER = lazy_compile(rf"\b(?:RIP|IP|pc) ?: ?.{{0,120}}?\[(?P<module>{NVIDIA_MODULE})\]")
_FAULT_LINE = lazy_compile(r"\b(?:RIP|IP|pc) ?: ")
_REPORT_END = "end trace"
#: Lines after a header that still belong to its report (the faulting instruction comes early).
MAX_REPORT_LINES = 40


@dataclass(frozen=True)
class DriverOops:
    """An oops report whose faulting instruction is in an NVIDIA module (1-based lines)."""

    header_no: int
    header: str
    fault_no: int
    fault: str
    module: str


def driver_oopses(lines: Sequence[str]) -> list[DriverOops]:
    """Each oops in ``lines`` whose first faulting-instruction line names an NVIDIA module."""
    found: list[DriverOops] = []
    for index, line in enumerate(lines):
        if not any(word in line for word in _HEADER_WORDS) or not _HEADER.search(line):
            continue
        fault = _fault_line(lines, index)
        if fault is not None:
            match = _FAULT_IN_DRIVER.search(lines[fault])
            if match is not None:
                found.append(DriverOops(index + 1, line.strip(), fault + 1, lines[fault].strip(),
                                        match["module"]))
    return found


def _fault_line(lines: Sequence[str], header: int) -> int | None:
    """The report's first faulting-instruction line, before the next header or its end."""
    for index in range(header + 1, min(len(lines), header + 1 + MAX_REPORT_LINES)):
        line = lines[index]
        if _REPORT_END in line or (any(w in line for w in _HEADER_WORDS) and _HEADER.search(line)):
            return None
        if _FAULT_LINE.search(line):
            return index
    return None


@check("driver", may_find=kernel_log_holds(*_HEADER_WORDS))
def driver_oopsed(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The kernel oopsed in the driver's code: the driver crashed, and the node needs a reboot
    (and a driver built for its kernel) before the GPUs are trusted again."""
    split = ctx.text_lines("cmd", "dmesg.txt")
    if split is None:
        return
    oopses = driver_oopses(split[0])
    if not oopses:
        return
    first = oopses[0]
    where = ctx.obs.path_of("cmd", "dmesg.txt")
    yield line_finding(ctx.kb, component, Status.FAILED, Decisive(first.header_no, first.header, 2),
                       f"{where}:{first.header_no}", verb=f"crashed in the kernel ({first.module})",
                       evidence=(Evidence(f"{where}:{first.fault_no}", first.fault[:300]),))


def _driver_restarted(ctx: NodeContext, component: str) -> bool:
    """Whether a container of the driver's pods on the node has restarted."""
    return any(status.restart_count > 0 for sp in ctx.stack_pods(component)
               for status in sp.pod.status.container_statuses)


@check("driver", may_find=kernel_log_holds(*_HEADER_WORDS))
def driver_restarts_beside_unplaced_oops(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A kernel BUG or oops report whose faulting instruction the kernel log does not show (a
    header pasted or kept alone), on a node whose driver container keeps restarting: the oops
    cannot be placed in another module, and the driver's restarts are read with it as their
    decisive line, ``degraded`` (the line's class, not a crash proven in the driver's code).
    A lab's OpenShift GPU worker (ESXi VM, Tesla P40) rebooting every few minutes with "kernel
    BUG at lib/list_debug.c:23!" while the GPU Operator's 550 driver was loaded, its driver pod
    restarted 18 times, fixed by the 535 driver (damoke012/dareoke's GPU troubleshooting
    guide). An oops placed elsewhere by its faulting instruction, or a driver that never
    restarted, says nothing here."""
    split = ctx.text_lines("cmd", "dmesg.txt")
    if split is None or not _driver_restarted(ctx, component):
        return
    lines = split[0]
    for index, line in enumerate(lines):
        if not any(word in line for word in _HEADER_WORDS) or not _HEADER.search(line):
            continue
        if _fault_line(lines, index) is not None:
            return  # the report places the fault: driver_oopsed reads it where it is the driver's
        where = f"{ctx.obs.path_of('cmd', 'dmesg.txt')}:{index + 1}"
        yield line_finding(ctx.kb, component, Status.DEGRADED, Decisive(index + 1, line.strip(), 2), where,
                           verb="restarts beside a kernel BUG", standalone="true")
        return
