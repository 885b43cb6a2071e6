"""One GPU that keeps faulting at the same place: a repeated Xid 13 or Xid 31.

Alone, Xid 13 (Graphics Engine Exception) and Xid 31 (GPU memory page fault) are the
application's: NVIDIA's Xid catalog (https://docs.nvidia.com/deploy/xid-errors/index.html)
sends both to the workload first and to DCGM's and the field diagnostics only where the
workload is ruled out. What rules it out is the pattern across jobs: the same exception at
the same engine location of one GPU (GPC/TPC/SM for Xid 13, the faulting ENGINE/GPCCLIENT
for Xid 31) from several different processes, while the node's other GPUs log no such Xid,
is that GPU (the Xid 13 triage of https://plexus.company/guides/gpu-xid-errors/13: suspect
hardware where it recurs across unrelated jobs on one physical GPU; pytorch/pytorch#51382,
repeated Xid 31 at ``ENGINE GRAPHICS GPCCLIENT_T1_10`` from three pids on one GPU of eight,
the job failing only there).

A single report, reports from one process, reports spread over locations or over GPUs, and
a node with no second GPU to hold against stay the application's (checks/xid.py keeps them
as evidence).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from gpunode.checks.base import check, kernel_log_holds, problem
from gpunode.checks.context import NodeContext
from gpunode.decisive import clipped
from gpunode.model import Evidence, Finding, Status
from gpunode.parse.gpu_ref import gpu_values, normal_bus_id
from gpunode.parse.kernel_log import XidEvent
from gpunode.relazy import lazy_compile

CAUSE = "xid_hardware_error"
#: Xids the catalog gives to the application, read here for their place.
PLACED_XIDS = (13, 31)
#: Different processes that must have hit the same place of one GPU.
MIN_PROCESSES = 3
#: "Graphics SM Warp Exception on (GPC 10, TPC 2, SM 0): ..." (the SM is missing on older GPUs).
_SM_PLACE = lazy_compile(r"\bon \((?P<place>GPC \d+, TPC \d+(?:, SM \d+)?)\)")
#: "MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_10 faulted @ ..." (a GPC may stand between).
_MMU_PLACE = lazy_compile(r"\bMMU Fault: (?P<place>ENGINE \S+(?: GPC\d+)? \S+) faulted\b")
_PID = lazy_compile(r"^'?(?P<pid>\d+)'?$")


@dataclass(frozen=True)
class PlacedXid:
    """An Xid 13/31 report with the engine location it names and the process it hit."""

    event: XidEvent
    place: str
    pid: str | None


@dataclass(frozen=True)
class RepeatedPlace:
    """One GPU's repeated fault at one location: the reports and how many processes."""

    pci: str
    xid: int
    place: str
    reports: tuple[XidEvent, ...]
    processes: int


def place_of(event: XidEvent) -> str | None:
    """The engine location an Xid 13 or 31 report names, or None."""
    pattern = _SM_PLACE if event.xid == 13 else _MMU_PLACE if event.xid == 31 else None
    found = pattern.search(event.line) if pattern is not None else None
    return re.sub(r"\s+", " ", found["place"]) if found else None


def _pid(event: XidEvent) -> str | None:
    found = _PID.match((event.pid or "").strip())
    return found["pid"] if found else None


def placed_xids(events: Sequence[XidEvent]) -> list[PlacedXid]:
    """Xid 13/31 reports with a location, each with its process: its own ``pid=``, else the
    pid of the next report on the same GPU that names one (the Xid 43 that ended the channel
    of an Xid 13 printed without a pid)."""
    placed: list[PlacedXid] = []
    for index, event in enumerate(events):
        if event.xid not in PLACED_XIDS or not event.pci:
            continue
        place = place_of(event)
        if place is None:
            continue
        pid = _pid(event) or next(
            (p for later in events[index + 1:] if later.pci == event.pci and (p := _pid(later))), None
        )
        placed.append(PlacedXid(event, place, pid))
    return placed


def repeated_place(events: Sequence[XidEvent], gpus_known: int) -> RepeatedPlace | None:
    """The one GPU whose Xid 13/31 recurs at one location from MIN_PROCESSES processes while
    no other GPU of the node logs that Xid; None where the node has no second GPU."""
    pcis = {e.pci for e in events if e.pci}
    if max(gpus_known, len(pcis)) < 2:
        return None
    groups: dict[tuple[str, int, str], list[PlacedXid]] = {}
    for placed in placed_xids(events):
        groups.setdefault((placed.event.pci, placed.event.xid, placed.place), []).append(placed)
    for (pci, xid, place), reports in groups.items():
        processes = {r.pid for r in reports if r.pid}
        if len(processes) < MIN_PROCESSES:
            continue
        if any(e.xid == xid and e.pci and e.pci != pci for e in events):
            continue
        return RepeatedPlace(pci, xid, place, tuple(r.event for r in reports), len(processes))
    return None


#: Every report the check reads is an Xid line (the shared kernel-log gate).
_may_hold = kernel_log_holds("Xid")


@check("gpu-hardware", may_find=_may_hold)
def xid_at_one_place(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """Xid 13/31 repeated at one location of one GPU by several processes: the GPU."""
    log = ctx.kernel_log
    if log is None:
        return
    found = repeated_place(log.xids, max(ctx.expected_gpus or 0, len(ctx.gpu_indices)))
    if found is None:
        return
    path = ctx.obs.path_of("cmd", "dmesg.txt")
    evidence = [Evidence(f"{path}:{e.line_no}", clipped(e.line.strip())) for e in found.reports[:3]]
    evidence.append(Evidence(path, f"Xid {found.xid} at {found.place} from {found.processes} processes "
                                   f"on PCI:{found.pci} only; no other GPU of the node logs Xid {found.xid}"))
    cause = ctx.kb.get(CAUSE)
    gpu = gpu_values(normal_bus_id(found.pci), ctx.gpu_indices)
    yield problem(component, CAUSE, *evidence, status=Status.DEGRADED, specificity=cause.specificity,
                  xid=str(found.xid), xid_location=found.place, ctx=gpu)
