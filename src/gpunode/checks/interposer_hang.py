"""A GPU job that stopped inside HAMi-core's start, on a driver newer than the library knows.

HAMi's device plugin and Volcano's vGPU device plugin both mount HAMi-core (libvgpu.so) into the
containers they serve and preload it; at each process's first CUDA or NVML call the library
prints its own start ("[HAMI-core Msg(...:libvgpu.c:837)]: Initializing.....", and at debug
level "Hijacking nvmlInit_v2", "Hijacking nvmlInitWithFlags"), then hands the call on. Releases
of the library built before the 570 driver branch hang right there on 570 and later drivers: the
process never returns and nothing follows the start line (Project-HAMi/HAMi-core#59 on 570.124.06,
fixed by HAMi-core commit 0749777; #52 on 570.86.16 / CUDA 12.8; Project-HAMi/HAMi#1010 and
Project-HAMi/volcano-vgpu-device-plugin#57, where newer plugin images with a newer HAMi-core cured
it). The library is the plugin's, so the plugin's release is what is too old for the driver:
``error_version_mismatch`` of the plugin that ships it here.

Read only where every part holds: the job's container is still running, the last line of its
current log is the library's own start, one of the two plugins runs on the node, and the node's
driver is of the 570 branch or later. A job that printed anything after the start line got past
it; on an older driver, or with no driver version collected, the line is a start like any other
and nothing is said.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpunode.checks.base import check
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import line_finding
from gpunode.checks.devices_lost import _running
from gpunode.checks.nvml_symbol import _driver_major
from gpunode.decisive import MAX_LINE, Decisive
from gpunode.model import Evidence, Finding, Status
from gpunode.relazy import lazy_compile

#: HAMi-core's own start line at its message or debug level (libvgpu.c's initialisation and
#: hook.c's NVML init hijack), as its log prefix writes it.
_START = lazy_compile(r"\[HAMI-core (?:Msg|Debug|Info)\([\d:]+(?:libvgpu|hook)\.c:\d+\)\]: "
                      r"(?:Initializing\b|Hijacking nvmlInit\w*|nvmlInit\w*\s*$)")
#: The first driver branch the older HAMi-core releases hang on.
_HANG_FROM = 570
#: The plugins that ship HAMi-core into the containers they serve.
PLUGINS = ("hami-device-plugin", "volcano-device-plugin")
_CAUSE = "error_version_mismatch"


def start_hang(lines: tuple[str, ...]) -> int | None:
    """The index of the log's last line where that line is HAMi-core's start, else None."""
    last = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].strip()), None)
    if last is None or "HAMI-core" not in lines[last] or not _START.search(lines[last]):
        return None
    return last


def _hung_finding(ctx: NodeContext, component: str) -> Finding | None:
    if not ctx.stack_pods(component) or any(ctx.stack_pods(c) for c in PLUGINS if c != component):
        return None  # not this plugin's, or both ship the library here and the line names neither
    major = _driver_major(ctx)
    if major is None or major < _HANG_FROM:
        return None
    for pod, log in ctx.workload_logs():
        if log.previous or not _running(pod, log.container):
            continue
        index = start_hang(log.lines)
        if index is None:
            continue
        meta = pod.metadata
        found = Decisive(index + 1, log.lines[index].strip()[:MAX_LINE], 1)
        said = (f"driver {major}.x; the job's last line is HAMi-core's start, nothing after it "
                f"while the container runs")
        return line_finding(ctx.kb, component, Status.FAILED, found, f"{log.path}:{index + 1}",
                            verb=f"ships a HAMi-core that hangs GPU workload {meta.namespace}/{meta.name}",
                            line_class=_CAUSE, evidence=(Evidence(log.path, said),),
                            standalone="true",
                            namespace=meta.namespace, pod=meta.name, container=log.container)
    return None


@check("hami-device-plugin")
def hami_core_start_hang(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """HAMi's plugin ships a HAMi-core that hangs a job at its start on this node's driver."""
    found = _hung_finding(ctx, component)
    if found is not None:
        yield found


@check("volcano-device-plugin")
def volcano_core_start_hang(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """Volcano's vGPU plugin ships a HAMi-core that hangs a job at its start on this driver."""
    found = _hung_finding(ctx, component)
    if found is not None:
        yield found
