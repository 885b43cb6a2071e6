"""A GPU job that stopped inside HAMi-core: hung at its start on a driver newer than the library
knows, or killed by a segmentation fault right after the library's own lines.

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

A process whose output is the library's own lines and then the shell's "Segmentation fault",
with no line of the program between them, crashed inside the library before the program said
anything (4paradigm/k8s-vgpu-scheduler#14: nvidia-smi in a pod given two vGPUs printed the
library's "Initializing..." and "vdevices_pci=..." and segfaulted, the plugin's Allocate answer
being what the library could not map). That is the plugin's library, in the catch-all class. A
segfault after the program's own output, or with no library line before it, stays the job's.

A bare segfault that ends a job's log after a container of the plugin's pod on the node ended
while the job's container was already running is the same library swapped under the job: the
plugin copies libvgpu.so into the host directory its containers mount each time it starts, and
the processes that have the old copy mapped crash when it is replaced (Project-HAMi/HAMi#727 and
#753, filed by a maintainer: every vGPU pod broke when the plugin pod restarted). The plugin,
error_unclassified. A plugin that ended before the job started, or no timestamps to compare,
say nothing.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpunode.bundle.kube import Pod
from gpunode.checks.base import any_logged_workload, check
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import line_finding
from gpunode.checks.devices_lost import _running
from gpunode.checks.versions import driver_branch
from gpunode.decisive import MAX_LINE, Decisive
from gpunode.facts import LogFile
from gpunode.model import Evidence, Finding, Status
from gpunode.relazy import lazy_compile

#: HAMi-core's own start line at its message or debug level (libvgpu.c's initialisation and
#: hook.c's NVML init hijack), as its log prefix writes it ("4pdvGPU" in the releases of
#: 4paradigm's k8s-vgpu-scheduler, HAMi's predecessor).
_START = lazy_compile(r"\[(?:HAMI-core|4pdvGPU) (?:Msg|Debug|Info)\([\d:]+(?:libvgpu|hook)\.c:\d+\)\]: "
                      r"(?:Initializing\b|Hijacking nvmlInit\w*|nvmlInit\w*\s*$)")
#: Any line the library prints under its own prefix below error level (its work, not a fault).
_OWN_LINE = lazy_compile(r"^\s*\[(?:HAMI-core|4pdvGPU) (?:Msg|Debug|Info|Warn)\([\d:]+\w+\.c:\d+\)\]: ")
#: The shell's report of a child killed by SIGSEGV ("Segmentation fault", "(core dumped)").
_SEGFAULT = lazy_compile(r"^\s*(?:[\w./-]+: line \d+: +\d+ )?Segmentation fault(?: \(core dumped\))?\s*$")
#: The first driver branch the older HAMi-core releases hang on.
_HANG_FROM = 570
#: The plugins that ship HAMi-core into the containers they serve.
PLUGINS = ("hami-device-plugin", "volcano-device-plugin")
_CAUSE = "error_version_mismatch"


def _last_lines(lines: tuple[str, ...], count: int) -> list[int]:
    """The indexes of the log's last ``count`` non-empty lines, last first."""
    return [i for i in range(len(lines) - 1, -1, -1) if lines[i].strip()][:count]


def start_hang(lines: tuple[str, ...]) -> int | None:
    """The index of the log's last line where that line is HAMi-core's start, else None."""
    last = _last_lines(lines, 1)
    if not last or not _START.search(lines[last[0]]):
        return None
    return last[0]


def crash_in_library(lines: tuple[str, ...]) -> int | None:
    """The index of the log's last line where it is a segmentation fault and the line before
    it is the library's own, else None."""
    last = _last_lines(lines, 2)
    if len(last) < 2 or not _SEGFAULT.match(lines[last[0]]) or not _OWN_LINE.match(lines[last[1]]):
        return None
    return last[0]


def _plugin_ended_after(ctx: NodeContext, component: str, started: str) -> str | None:
    """When a container of the plugin's pods here last ended, where that was after ``started``
    (RFC 3339 times of the API, which order as text); None otherwise."""
    ends = [cs.last_state.terminated.finished_at for sp in ctx.stack_pods(component)
            for cs in sp.pod.status.container_statuses
            if cs.last_state.terminated is not None and cs.last_state.terminated.finished_at]
    later = [end for end in ends if end and end > started]
    return max(later) if later else None


def _swapped_under(ctx: NodeContext, component: str, pod: Pod, log: LogFile) -> str | None:
    """The plugin's restart time where a bare segfault ends the job's log and a container of
    the plugin ended after the job's container started."""
    last = _last_lines(log.lines, 1)
    if not last or not _SEGFAULT.match(log.lines[last[0]]):
        return None
    started = next((cs.state.running.started_at for cs in pod.status.container_statuses
                    if cs.name == log.container and cs.state.running is not None), None)
    return _plugin_ended_after(ctx, component, started) if started else None


def _hung_finding(ctx: NodeContext, component: str) -> Finding | None:
    if not ctx.stack_pods(component) or any(ctx.stack_pods(c) for c in PLUGINS if c != component):
        return None  # not this plugin's, or both ship the library here and the line names neither
    major = driver_branch(ctx)
    for pod, log in ctx.workload_logs():
        meta = pod.metadata
        job = f"GPU workload {meta.namespace}/{meta.name}"
        newer = major is not None and major >= _HANG_FROM
        index = start_hang(log.lines) if newer and not log.previous and _running(pod, log.container) else None
        if index is not None:
            found = Decisive(index + 1, log.lines[index].strip()[:MAX_LINE], 1)
            said = (f"driver {major}.x; the job's last line is HAMi-core's start, nothing after it "
                    f"while the container runs")
            return line_finding(ctx.kb, component, Status.FAILED, found, f"{log.path}:{index + 1}",
                                verb=f"ships a HAMi-core that hangs {job}",
                                line_class=_CAUSE, evidence=(Evidence(log.path, said),), standalone="true",
                                namespace=meta.namespace, pod=meta.name, container=log.container)
        index = crash_in_library(log.lines)
        if index is not None:
            found = Decisive(index + 1, log.lines[index].strip()[:MAX_LINE], 1)
            said = "the line before the crash is HAMi-core's own; the program printed nothing between"
            return line_finding(ctx.kb, component, Status.FAILED, found, f"{log.path}:{index + 1}",
                                verb=f"ships a HAMi-core that crashes {job}",
                                evidence=(Evidence(log.path, said),), standalone="true",
                                namespace=meta.namespace, pod=meta.name, container=log.container)
        ended = _swapped_under(ctx, component, pod, log)
        if ended is not None:
            index = _last_lines(log.lines, 1)[0]
            found = Decisive(index + 1, log.lines[index].strip()[:MAX_LINE], 1)
            said = f"a container of {component} ended at {ended}, while the job was running"
            return line_finding(ctx.kb, component, Status.FAILED, found, f"{log.path}:{index + 1}",
                                verb=f"restarted and swapped the HAMi-core mapped by {job}",
                                evidence=(Evidence(f"pods of {component} on {ctx.name}", said),),
                                standalone="true", namespace=meta.namespace, pod=meta.name,
                                container=log.container)
    return None


# (both read only GPU workloads' logs: the shared gate spares their calls on nodes with none)
@check("hami-device-plugin", may_find=any_logged_workload)
def hami_core_start_hang(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """HAMi's plugin ships a HAMi-core that hangs a job at its start on this node's driver."""
    found = _hung_finding(ctx, component)
    if found is not None:
        yield found


@check("volcano-device-plugin", may_find=any_logged_workload)
def volcano_core_start_hang(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """Volcano's vGPU plugin ships a HAMi-core that hangs a job at its start on this driver."""
    found = _hung_finding(ctx, component)
    if found is not None:
        yield found
