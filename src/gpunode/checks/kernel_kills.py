"""Stack processes the kernel killed for memory or refused by a security module.

A component whose process the kernel's OOM killer ended ("Memory cgroup out of memory:
Killed process 41822 (nv-hostengine) ...", "oom-kill:...,task=dcgm-exporter,pid=...") lost
its work, however its pod looks now: the kill is its recent past (issue 20, item 4). A
process AppArmor or SELinux refused ('apparmor="DENIED" ... comm="nvidia-device-p"',
'avc:  denied  { read write } ... comm="nvidia-smi" ... permissive=0') could not do what
it tried. The kernel names a process by its comm, the executable's name cut to 15
characters; ``data/processes.toml`` maps those names to catalog components. A process no
component runs (a user's job, a shell, ruby) changes nothing, and so does:

* a kill older than the recent past (more than an hour before the kernel log's last
  stamped line, uptime or ``dmesg -T``'s clock, the bound docs/design.md gives a
  container's error exit);
* a denial the module only reported: AppArmor's ``ALLOWED`` (complain mode) or ``AUDIT``,
  an SELinux denial with ``permissive=1``.

A kernel module's load refused (SELinux's ``{ module_load }`` for modprobe) is the failure of
the component the module's path names (nvidia.ko: the driver, NVIDIA/gpu-operator#553), where
its catalogued cause, if any, then names it. A container's NVIDIA program refused an object of
the container runtime's own SELinux type is the toolkit's, whose hook made that object in the
container without the container's label (``_RUNTIME_MADE``).

A kill at a memory cgroup's limit ("Memory cgroup out of memory", ``CONSTRAINT_MEMCG``) is
``oom_killed``: the component's limit is too low. A kill by the node's own OOM killer ("Out of
memory: Killed process", ``global_oom``, a constraint other than ``CONSTRAINT_MEMCG``) is the
node running out of memory (or of the memory its cpuset allows), a resource
exhausted, whose fix is not the component's limit; a bare "Killed process" line (before 4.19
the second line of one kill) takes the kind of the kill line before it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime

from gpunode.checks.base import check
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import line_finding
from gpunode.decisive import Decisive
from gpunode.model import Finding, Status
from gpunode.processes import process_owners
from gpunode.relazy import lazy_compile

#: The recent past the bundle keeps for a component's trouble, in seconds.
RECENT_S = 3600.0
OOM = "oom_killed"
NODE_OOM = "error_resource_exhausted"
DENIED = "error_permission_denied"


#: The OOM killer's victim: "Killed process <pid> (<comm>) total-vm:..." (with "Memory cgroup
#: out of memory: " or "Out of memory: " before it since 4.19; after "... Kill process <pid>
#: (<comm>) score <n> or sacrifice child" before), and its one-line summary since 5.0
#: ("oom-kill:constraint=...,task=<comm>,pid=<pid>,uid=<uid>").
_OOM = lazy_compile(r"\bKill(?:ed)? process \d+ \((?P<comm>[^()\n]{1,15})\)|"
                    r"\boom-kill:constraint=\S*?\btask=(?P<task>[^,\n]{1,15}),pid=\d+")
#: Where a kill says which OOM killer chose it: a memory cgroup at its limit, or the node's.
_CGROUP_KILL = lazy_compile(r"Memory cgroup out of memory|constraint=CONSTRAINT_MEMCG|"
                            r"killed as a result of limit of")
_NODE_KILL = lazy_compile(
    r"(?<!cgroup )\bOut of memory\b|constraint=CONSTRAINT_(?:NONE|CPUSET|MEMORY_POLICY)|"
    r"\bglobal_oom\b")
#: An AppArmor denial (enforce mode) or an SELinux AVC denial, naming the process.
_APPARMOR = lazy_compile(r'apparmor="DENIED"')
_AVC = lazy_compile(r"\bavc:\s+denied\b")
_PERMISSIVE = lazy_compile(r"\bpermissive=1\b")
#: A kernel module's load a security module refused, and the object a denial names.
_MODULE_LOAD = lazy_compile(r"\{ module_load \}|operation=\"module_load\"")
_OBJECT = lazy_compile(r'\b(?:path|name)="(?P<object>[^"\n]+)"')
_COMM = lazy_compile(r'\bcomm="(?P<comm>[^"\n]{1,15})"')
#: An SELinux denial of a container's process (a container domain, not the runtime's own
#: container_runtime_t) on an object that carries the container runtime's own type
#: (container_runtime_tmpfs_t): the object was made inside the container by a program running
#: in the runtime's domain, not labelled for the container. NVIDIA's hook is such a program:
#: libnvidia-container mounts a tmpfs with the driver's files over the container's
#: /proc/driver/nvidia, and a GPU program in an unprivileged pod is then refused it
#: (NVIDIA/libnvidia-container#126: comm="nvidia-smi" name="params" on OpenShift). Only where
#: the denial names NVIDIA's program or object is that hook the one that made it.
_RUNTIME_MADE = lazy_compile(r"\bscontext=\S*?:(?!container_runtime_)(?:container_\w*t|svirt_\w+_t):"
                             r".*\btcontext=\S*?:container_runtime_\w+_t:")
_NVIDIA_NAMED = lazy_compile(r'\b(?:comm|name|path)="[^"\n]*nvidia')
TOOLKIT = "container-toolkit"
#: dmesg's uptime stamp: "[ 7063.247407] ...", also inside a journal's "kernel: [...]".
_STAMP = lazy_compile(r"\[\s*(?P<s>\d+\.\d+)\]")
#: ``dmesg -T``'s wall-clock stamp: "[Mon Jul 25 16:46:04 2022] ...".
_CLOCK = lazy_compile(r"^\[(?P<t>[A-Z][a-z]{2} [A-Z][a-z]{2} {1,2}\d{1,2} \d\d:\d\d:\d\d \d{4})\]")
_LITERALS = ("Kill process", "Killed process", "oom-kill:", 'apparmor="DENIED"', "avc:")


def _hit(line: str, node_oom: bool) -> tuple[str, str] | None:
    """(comm, class) of a kill or an enforced denial on ``line``, else None; ``node_oom``: the
    last kill line that said which OOM killer it was came from the node's."""
    oom = _OOM.search(line)
    if oom is not None:
        return (oom["comm"] or oom["task"]).strip(), NODE_OOM if node_oom else OOM
    if _APPARMOR.search(line) or (_AVC.search(line) and not _PERMISSIVE.search(line)):
        comm = _COMM.search(line)
        return (comm["comm"], DENIED) if comm else None
    return None


def _stamp(line: str) -> tuple[str, float] | None:
    """The line's uptime stamp, or its wall-clock one (seconds since the epoch), by kind:
    only stamps of one kind are compared."""
    found = _STAMP.search(line)
    if found is not None:
        return "uptime", float(found["s"])
    clock = _CLOCK.search(line)
    if clock is None:
        return None
    try:
        return "clock", datetime.strptime(clock["t"], "%a %b %d %H:%M:%S %Y").replace(tzinfo=UTC).timestamp()
    except ValueError:
        return None


def _owner(line: str, hit: tuple[str, str], owners: dict[str, str],
           named_in: Callable[[str], str | None] | None) -> str | None:
    """The component whose process ``hit`` names; for a kernel module's load refused by a
    security module (SELinux's ``{ module_load }``, run by modprobe whoever asked), the
    component the module's path names (nvidia.ko: the driver)."""
    owner = owners.get(hit[0])
    if owner is None and hit[1] == DENIED and named_in is not None and _MODULE_LOAD.search(line):
        target = _OBJECT.search(line)
        owner = named_in(target["object"]) if target else None
    if owner is None and hit[1] == DENIED and _RUNTIME_MADE.search(line) and _NVIDIA_NAMED.search(line):
        owner = TOOLKIT  # what NVIDIA's hook put in the container, without the container's label
    return owner


def kernel_hits(text: str, owners: dict[str, str],
                named_in: Callable[[str], str | None] | None = None) -> dict[str, tuple[int, str, str]]:
    """Component -> (line number, line, class) of the last recent kill or denial of one of its
    processes in a kernel log. A line without a stamp counts as recent: the bundle keeps the
    log's tail, and a line quoted bare has no age to tell."""
    if not any(map(text.__contains__, _LITERALS)):  # (in C: asked on every node)
        return {}
    lines = text.splitlines()
    last: dict[str, float] = {}
    for line in lines:
        if (stamped := _stamp(line)) is not None:
            last[stamped[0]] = stamped[1]
    out: dict[str, tuple[int, str, str]] = {}
    node_oom = False
    for index, line in enumerate(lines):
        if _CGROUP_KILL.search(line):
            node_oom = False
        elif _NODE_KILL.search(line):
            node_oom = True
        hit = _hit(line, node_oom)
        if hit is None or (component := _owner(line, hit, owners, named_in)) is None:
            continue
        stamp = _stamp(line)
        if stamp is not None and last[stamp[0]] - stamp[1] > RECENT_S:
            continue
        known = out.get(component)
        if known is None or known[2] == DENIED or hit[1] != DENIED:  # a kill outranks a denial
            out[component] = (index + 1, line.strip(), hit[1])
    return out


def _hits(ctx: NodeContext) -> dict[str, tuple[int, str, str]]:
    known = ctx.memo.get("kernel_kills")
    if known is None:
        text = ctx.obs.cmd.get("dmesg.txt") or ""
        known = ctx.memo["kernel_kills"] = kernel_hits(text, process_owners(), ctx.facts.catalog.named_in)
    assert isinstance(known, dict)
    return known


_VERBS = {OOM: "was killed at its memory limit", NODE_OOM: "was killed as the node ran out of memory",
          DENIED: "was refused by a kernel security module"}


def kernel_kills(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """``component`` degraded by the kernel's recent kill or refusal of one of its processes,
    the kernel's line its evidence and decisive line."""
    found = _hits(ctx).get(component)
    if found is None:
        return
    line_no, line, cls = found
    where = f"{ctx.obs.path_of('cmd', 'dmesg.txt')}:{line_no}"
    verb = _VERBS[cls]
    yield line_finding(ctx.kb, component, Status.DEGRADED, Decisive(line_no, line, 1), where,
                       verb=verb, standalone="true", line_class=cls)


def _any_kill(ctx: NodeContext) -> bool:
    """Whether the node's kernel log holds a recent kill or denial of any stack process (on
    nearly every node none: ``kernel_kills`` is then called for none of its components)."""
    text = ctx.obs.cmd.get("dmesg.txt") or ""
    # (in C: on nearly every node no literal, and kernel_hits would answer nothing)
    return any(map(text.__contains__, _LITERALS)) and bool(_hits(ctx))


for _component in sorted(set(process_owners().values())):
    check(_component, may_find=_any_kill)(kernel_kills)
