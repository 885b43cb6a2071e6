"""Hung tasks stuck inside the NVIDIA driver: the driver's hang, not the kernel's.

The kernel's hung-task detector (kernel/hung_task.c, ``hung_task_timeout_secs`` in
https://docs.kernel.org/admin-guide/sysctl/kernel.html) prints "INFO: task <comm>:<pid> blocked
for more than <n> seconds." and then the task's stack ("Call Trace:"), each frame of a module's
code followed by the module's name in brackets. Where those frames are the NVIDIA modules'
(``[nvidia]``, ``[nvidia_uvm]``, ``[nvidia_modeset]``, ``[nvidia_drm]``, ``[nvidia_peermem]``;
the UVM driver's ``uvm_*`` functions, the resource manager's ``os_acquire_mutex`` and its
``_nv000123rm`` symbols where a write-up quotes the trace without the brackets), the task waits
on a lock the driver never gives back: NVIDIA/k8s-device-plugin#77 (nvidia-container-cli
blocked in ``uvm_gpu_retain_by_uuid [nvidia_uvm]``), NVIDIA/open-gpu-kernel-modules#456 (a job
hung in ``uvm_spin_loop`` under ``uvm_channel_manager_create``), rwth-i6/returnn#1480
(``uvm_ioctl`` waiting on a UVM mutex). Every other task blocked beside it on that node queues
behind the same driver. A hung task whose trace holds no NVIDIA frame (a file system's
``[zfs]``, openzfs/zfs#4106) stays the kernel's reading (``kernel_hung_task`` on its own
signature).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from gpunode.checks.base import check, kernel_log_holds, problem
from gpunode.checks.context import NodeContext
from gpunode.decisive import clipped
from gpunode.model import Evidence, Finding
from gpunode.relazy import lazy_compile

CAUSE = "kernel_hung_task"
_HEADER_WORDS = "blocked for more than"
_HEADER = lazy_compile(r"INFO: task (?P<task>.+?):(?P<pid>\d+) blocked for more than \d+ seconds")
_TRACE = lazy_compile(r"(?i)\bcall trace:")
_TRACE_END = "</TASK>"
#: The driver's kernel modules by the names a stack frame gives them in brackets.
NVIDIA_MODULE = r"nvidia(?:_uvm|_modeset|_drm|_peermem)?"
#: A frame of an NVIDIA module: the module's name in brackets, or a name only its code uses.
_NVIDIA_FRAME = lazy_compile(
    rf"\[{NVIDIA_MODULE}\]"
    r"|\b(?:uvm_[a-z]\w*|os_acquire_mutex|os_acquire_rwlock_\w+|_nv\d{6}rm)\b"
)
#: Lines after a header that still belong to its report (the kernel prints it in one burst).
MAX_REPORT_LINES = 80


@dataclass(frozen=True)
class DriverHang:
    """A hung-task report whose stack names an NVIDIA module: its header and that frame."""

    header_no: int
    header: str
    frame_no: int
    frame: str


def driver_hangs(lines: Sequence[str]) -> list[DriverHang]:
    """Each hung-task report in ``lines`` whose call trace holds an NVIDIA frame (1-based
    line numbers). The report runs from its header to the next header, the end of the
    trace (``</TASK>``) or MAX_REPORT_LINES lines; frames count only from "Call Trace:"."""
    hangs: list[DriverHang] = []
    for index, line in enumerate(lines):
        if _HEADER_WORDS not in line or not _HEADER.search(line):
            continue
        frame = _nvidia_frame(lines, index)
        if frame is not None:
            hangs.append(DriverHang(index + 1, line.strip(), frame + 1, lines[frame].strip()))
    return hangs


def _nvidia_frame(lines: Sequence[str], header: int) -> int | None:
    in_trace = False
    for index in range(header + 1, min(len(lines), header + 1 + MAX_REPORT_LINES)):
        line = lines[index]
        if _HEADER_WORDS in line and _HEADER.search(line):
            return None
        trace = _TRACE.search(line)
        if trace is not None:
            in_trace = True
            line = line[trace.end():]
        if not in_trace:
            continue
        if _NVIDIA_FRAME.search(line):
            return index
        if _TRACE_END in line:
            return None
    return None


def node_driver_hangs(ctx: NodeContext) -> list[DriverHang]:
    """``driver_hangs`` of the node's kernel log (read once per node; none without one)."""
    known = ctx.memo.get("driver_hangs")
    if known is None:
        text = ctx.obs.cmd.get("dmesg.txt") or ""
        split = ctx.text_lines("cmd", "dmesg.txt") if _HEADER_WORDS in text else None
        known = ctx.memo["driver_hangs"] = driver_hangs(split[0]) if split is not None else []
    assert isinstance(known, list)
    return known


#: A hung task's header is the first line the check reads (the shared kernel-log gate).
_may_hold = kernel_log_holds(_HEADER_WORDS)


@check("driver", may_find=_may_hold)
def hung_in_driver(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A task hung with NVIDIA frames on its stack: the driver is stuck."""
    hangs = node_driver_hangs(ctx)
    if not hangs:
        return
    first = hangs[0]
    path = ctx.obs.path_of("cmd", "dmesg.txt")
    evidence = (Evidence(f"{path}:{first.header_no}", clipped(first.header)),
                Evidence(f"{path}:{first.frame_no}", clipped(first.frame)))
    cause = ctx.kb.get(CAUSE)
    yield problem(component, CAUSE, *evidence, status=cause.severity, specificity=cause.specificity,
                  standalone="true")
