"""gVisor's runsc with nvproxy: its own refusal of a GPU sandbox, read in its debug log.

Under gVisor a GPU pod's driver calls never reach the host's driver directly: nvproxy, in the
sandbox's kernel, forwards the ioctls it knows for the driver versions it lists. It refuses a
host driver it does not list ("registering nvproxy driver: unsupported Nvidia driver version:
X", the sandbox never boots: the kubelet only relays "cannot read client sync file: waiting for
sandbox to start: EOF") and answers a control command or ioctl it does not implement with an
error the workload sees as no GPU ("nvproxy: unknown control command 0x..."). Both are in
runsc's debug log only, the sandbox's boot log (runsc.toml ``debug-log = "/var/log/runsc/"``:
``runsc.log.<timestamp>.boot.txt``, as google/gvisor#10647 quotes it); the probe keeps the
newest boot logs' tails (``files/var/log/runsc/``). The runtime that the
pod's RuntimeClass handler names is fixed (a runsc that lists the driver or implements the
command), not the driver. Read only for a GPU workload that asks for another runtime than
the node's default and has not started or ended in an error: nvproxy warns of commands
that a running workload may never need.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpunode.checks.base import FilesMatching, check
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import line_finding
from gpunode.decisive import MAX_LINE, NVPROXY_UNKNOWN_CALL, Decisive
from gpunode.model import Finding, Status
from gpunode.relazy import lazy_compile

#: Where the probe keeps runsc's debug logs (one file per command a sandbox ran).
RUNSC_LOG_DIR = "var/log/runsc/"
#: Any other place ``--debug-log`` names: a folder (gVisor's debugging guide uses /tmp/runsc/,
#: one file per command: https://gvisor.dev/docs/user_guide/debugging) or one file all
#: commands append to (/tmp/runsc.log; "--debug-log=/persist/gvisor-debug-nostrace.log" in
#: https://gist.github.com/gabriel-v/fbfbe486487ca6c4d3ea20629ccf7575): a file or its folder
#: named for runsc or gVisor.
_RUNSC_NAMED = lazy_compile(r"(?:^|/)(?:runsc|gvisor)[^/]*(?:/[^/]+)?$", re.I)
#: The gate of the reader of those logs: a node with none of them (nearly every one) is passed over.


def runsc_named(path: str) -> bool:
    """Whether a collected file is one of runsc's logs by its name or its folder's."""
    return _RUNSC_NAMED.search(path) is not None


_RUNSC_LOGS = FilesMatching(f"^{re.escape(RUNSC_LOG_DIR)}|{_RUNSC_NAMED.pattern}", re.I)
#: nvproxy refusing the host driver's version at the sandbox's boot (runsc's nvproxy.go).
_DRIVER_REFUSED = lazy_compile(r"\bregistering nvproxy driver: unsupported nvidia driver version\b", re.I)
#: nvproxy answering a call it does not implement: an unknown control command or ioctl
#: (frontend.go, "nvproxy: unknown control command 0x20803801 (paramsSize=1928)"), or one it
#: names as not supported.
_CALL_REFUSED = lazy_compile(
    rf"{NVPROXY_UNKNOWN_CALL}|\bnvproxy: .{{0,80}}\b(?:not supported|unsupported)\b", re.I)


def _sandboxed_troubled(ctx: NodeContext) -> bool:
    """A GPU workload on the node that names a RuntimeClass (other than NVIDIA's, whose
    handler is the NVIDIA runtime) and has not started or ended in an error."""
    return any(pod.spec.runtime_class_name and not pod.spec.runtime_class_name.startswith("nvidia")
               for pod in ctx.facts.troubled_workloads_by_node.get(ctx.name, ()))


def _refusal(lines: list[str]) -> tuple[int, str] | None:
    """The decisive refusal of one log: the driver version refused (the sandbox did not boot),
    else the last call refused; with its index."""
    for index, line in enumerate(lines):
        if _DRIVER_REFUSED.search(line):
            return index, "error_version_mismatch"
    last = next((i for i in range(len(lines) - 1, -1, -1) if _CALL_REFUSED.search(lines[i])), None)
    return None if last is None else (last, "error_not_found")


@check("container-runtime", may_find=_RUNSC_LOGS)
def nvproxy_refused(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """runsc's nvproxy refusing the node's driver or a call a failing GPU workload made,
    newest log first (file names carry runsc's timestamp, so they sort by time)."""
    names = sorted((n for n in ctx.obs.files if n.startswith(RUNSC_LOG_DIR) or _RUNSC_NAMED.search(n)),
                   reverse=True)
    if not names or not _sandboxed_troubled(ctx):
        return
    for name in names:
        split = ctx.text_lines("files", name)
        found = _refusal(split[0]) if split is not None else None
        if split is None or found is None:
            continue
        index, cls = found
        line = split[0][index].strip()[:MAX_LINE]
        where = f"{ctx.obs.path_of('files', name)}:{index + 1}"
        yield line_finding(ctx.kb, component, Status.FAILED, Decisive(index + 1, line, 2), where,
                           verb="refuses a GPU sandbox's driver calls (nvproxy)", line_class=cls,
                           standalone="true")
        return
