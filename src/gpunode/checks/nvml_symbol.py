"""A program that cannot resolve an NVML function, read against the node's driver."""

from __future__ import annotations

from collections.abc import Iterator

from gpunode.checks.base import check
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import line_finding
from gpunode.checks.versions import driver_branch
from gpunode.decisive import Decisive
from gpunode.model import Evidence, Finding, Status
from gpunode.relazy import lazy_compile

#: The dynamic loader's words for an NVML function the loaded libnvidia-ml does not export.
_NVML_SYMBOL = lazy_compile(r"undefined symbol: nvml\w+")
#: The oldest driver branch whose NVML current consumers resolve: the device plugin fails on
#: 375 with "undefined symbol: nvmlDeviceGetPciInfo_v3" and works on 384.81
#: (NVIDIA/k8s-device-plugin#108, its documented minimum since); nvtop fails on 340 with
#: "undefined symbol: nvmlDeviceGetPcieThroughput" and works on 384 (Syllo/nvtop#32).
_NVML_FLOOR = 384
_CAUSE = "error_version_mismatch"
def _symbol_line(ctx: NodeContext) -> tuple[str, int, str] | None:
    """The first log line of a stack pod on this node that names an unresolved NVML symbol:
    its log, line number (1-based) and the line."""
    for component in sorted(ctx.components_here):
        for sp in ctx.stack_pods(component):
            for log in ctx.logs_of(sp.pod):
                for no, line in enumerate(log.lines, 1):
                    if _NVML_SYMBOL.search(line):
                        return log.path, no, line.strip()
    return None


@check("driver")
def nvml_symbol_older_driver(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """An unresolved NVML symbol names the library that lacks it, and with it the driver
    that ships that library. Where the node's driver is older than any current NVML
    consumer resolves, the driver is what to change; on a current driver the program was
    built against a newer NVML than the node's and stays its own failure."""
    major = driver_branch(ctx)
    if major is None or major >= _NVML_FLOOR:
        return
    found = _symbol_line(ctx)
    if found is None:
        return
    path, no, line = found
    ev = Evidence(path, f"driver {major}.x is older than the NVML its consumers need (>= {_NVML_FLOOR})")
    yield line_finding(ctx.kb, component, Status.FAILED, Decisive(no, line, 2), f"{path}:{no}",
                       verb="is too old for", line_class=_CAUSE, evidence=(ev,))
