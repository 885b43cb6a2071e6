"""An OCI hook that finds the container's /proc empty: the runtime ran it before the mounts.

The OCI runtime spec orders a container's mounts before its ``createContainer`` hooks, so a
hook sees the container's procfs. NVIDIA's CDI hook ``disable-device-node-modification``
overmounts ``/proc/driver/nvidia/params`` in the container and opens it through runc's
libcontainer ``utils.WithProcfd`` (securejoin in the root filesystem, then "open o_path
procfd: %w"). Where that open finds nothing under ``<rootfs>/proc`` while the runtime's journal
or runsc's log relays it, the runtime ran the hooks before it mounted /proc: a crun that
moved its mounts after pivot_root (containers/crun#2167, fixed in crun#2168), or runsc, whose
sentry serves /proc only inside the sandbox (google/gvisor#13283, fixed in runsc by skipping
the hook). The fix is in the OCI runtime, not in the driver the path names. Read only while a
workload on the node has not started or ended in an error; a volume target the runtime
itself could not open this way lies outside /proc and is not read here. The class is
``error_not_found``: what the hook looked up was not created yet (the container's procfs), not
a host file in the wrong state.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpunode.checks.base import check
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import HOST_JOURNALS, line_finding
from gpunode.checks.runsc_log import RUNSC_LOG_DIR, runsc_named
from gpunode.decisive import MAX_LINE, Decisive
from gpunode.model import Finding, Status
from gpunode.relazy import lazy_compile

#: The literal every relayed failure holds (most journals: none).
_WORDS = "o_path procfd"
#: The hook's open of a path under the container's /proc, in its root filesystem (the
#: bundle's ``rootfs`` or an overlay's ``merged``), finding nothing; relayed lines may wrap.
_PROC_ABSENT = lazy_compile(
    r"open o_path procfd:\s{0,8}open (?P<path>\S*/(?:rootfs|merged)/proc/[\w/.-]+):"
    r"\s{0,8}no such file or directory")


def _texts(ctx: NodeContext) -> Iterator[tuple[str, str, str]]:
    """(kind, name, text) of the runtime's journal and runsc's logs that hold ``_WORDS``."""
    journal = HOST_JOURNALS["container-runtime"]
    text = ctx.obs.cmd.get(journal)
    if text and _WORDS in text:
        yield "cmd", journal, text
    for name in sorted(ctx.obs.files, reverse=True):
        if name.startswith(RUNSC_LOG_DIR) or runsc_named(name):
            body = ctx.obs.files.get(name)
            if body and _WORDS in body:
                yield "files", name, body


@check("container-runtime")
def hook_before_proc(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The runtime's journal or runsc's log relaying a hook that found the container's /proc
    empty, while a workload on the node fails to start: the runtime's hook ordering."""
    if not ctx.facts.troubled_workloads_by_node.get(ctx.name):
        return
    for kind, name, text in _texts(ctx):
        found = None
        for match in _PROC_ABSENT.finditer(text):
            found = match  # the last one: the newest relayed failure
        if found is None:
            continue
        line_no = text.count("\n", 0, found.start()) + 1
        line = " ".join(found.group(0).split())[:MAX_LINE]
        where = f"{ctx.obs.path_of(kind, name)}:{line_no}"
        yield line_finding(ctx.kb, component, Status.FAILED, Decisive(line_no, line, 2), where,
                           verb="ran an OCI hook before mounting the container's /proc",
                           line_class="error_not_found", standalone="true")
        return
