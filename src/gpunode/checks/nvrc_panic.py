"""NVRC's panic relayed in the container runtime's journal: the Kata GPU guest died at boot.

NVRC, the NVIDIA init (PID 1) of the Kata Containers GPU guest image, installs a panic hook
that writes "NVRC panic: <panic info>" to the guest's /dev/kmsg and powers the guest off
(NVIDIA/nvrc, its panic hook), so the sandbox never comes up and every GPU pod of the runtime
class waits in ContainerCreating. The shim relays the guest's console into the runtime's
journal, where the host holds it (kata-containers/kata-containers#13432: the in-guest Fabric
Manager could not open its NVSwitch topology file, NVRC panicked waiting for FM; fixed in the
Kata guest image). The guest's setup is the sandbox runtime's, so the panic is the container
runtime's failure; the line that says why is the last error the guest wrote before the panic
(the service NVRC waited on), else the panic's own message (Rust prints it on the line after
"panicked at <file>:<line>:<col>:"). Read only while a GPU workload on the node has not
started: a panic of a guest long gone says nothing of the pods running now. The kernel log's
NVRC lines are read in ``checks.kernel``.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpunode.checks.base import check, reads
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import HOST_JOURNALS, line_finding
from gpunode.decisive import MAX_LINE, Decisive, decisive_line
from gpunode.model import Finding, Status
from gpunode.relazy import lazy_compile

_JOURNAL = HOST_JOURNALS["container-runtime"]
#: NVRC's panic hook's prefix.
_WORDS = "NVRC panic: "
#: Its panic where Rust put the location first and the message on the next line.
_LOCATION_ONLY = lazy_compile(r"NVRC panic: panicked at \S+:\d+:\d+:\s*$")
#: How many lines before the panic are read for the guest's own reason.
_BEFORE = 20


@check("container-runtime", may_find=reads(f"cmd/{_JOURNAL}"))
def nvrc_panicked(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The runtime's journal relaying NVRC's panic while a GPU workload waits to start."""
    text = ctx.obs.cmd.get(_JOURNAL)
    if not text or _WORDS not in text or not ctx.facts.troubled_workloads_by_node.get(ctx.name):
        return
    split = ctx.text_lines("cmd", _JOURNAL)
    if split is None:
        return
    lines = split[0]
    at = max(i for i, line in enumerate(lines) if _WORDS in line)
    start = max(at - _BEFORE, 0)
    before = [line for line in lines[start:at] if _WORDS not in line]
    found = decisive_line(before, ctx.kb.class_of) if before else None
    if found is not None:
        found = Decisive(start + found.line_no, found.line, found.strength)
    elif _LOCATION_ONLY.search(lines[at]) and at + 1 < len(lines) and lines[at + 1].strip():
        found = Decisive(at + 2, lines[at + 1].strip()[:MAX_LINE], 2)
    else:
        found = Decisive(at + 1, lines[at].strip()[:MAX_LINE], 2)
    where = f"{ctx.obs.path_of('cmd', _JOURNAL)}:{found.line_no}"
    yield line_finding(ctx.kb, component, Status.FAILED, found, where,
                       verb="lost its GPU guest (NVRC panicked)", standalone="true")
