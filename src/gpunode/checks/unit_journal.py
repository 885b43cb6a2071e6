"""Host services judged by their own journals: Fabric Manager and IMEX.

Both run as systemd units on the host (``nvidia-fabricmanager``, ``nvidia-imex``), and
when one stops, the reason is in its journal, not in any pod: the probe and the agent
keep the recent past of each (``cmd/journal-fabricmanager.txt``, ``cmd/journal-imex.txt``,
gpunode.probe.journal). systemd's own lines say whether the unit's last run failed
(its process exited non-zero or was killed, ``Failed with result``, ``Failed to start``)
and no later start followed; then the unit's own decisive line before that failure
(or, where the journal holds none, the last error in the tail of the unit's own log
file, Fabric Manager's ``/var/log/fabricmanager.log``), found by the general rules
(gpunode.decisive) and classed like a container's, is the cause, or a catalogued cause
of the component where its signature matches. A unit that runs, was stopped on purpose
or restarted since stays for the other checks to judge, and a node without the journal
is judged as before (the checks name no need, so its absence is no gap in what was
observed).

Where no line of systemd's tells how the last run ended (a journal cut to the unit's own
lines, Talos's service log put in its place, or only the unit's log file), the unit's
last words decide: a journal or log file whose last line is the unit's own error-level
line ended with that error, since a running unit's last word is not an error it exits on
(Fabric Manager's start script ends 'Kernel module "ib_umad" has not been loaded, fabric
manager cannot be started', CanvOS#700; its log ends '[ERROR] failed to configure all the
available GPUs or NVSwitches', pytorch/ci-infra#552). A unit whose process the probe sees
running is not judged so.

Fabric Manager that finds no NVSwitch to manage (``NV_WARN_NOTHING_TO_DO`` from the NVSwitch
driver) exits non-zero on any board; only where the board has NVSwitches is that a failure
(an HGX baseboard whose switches the driver did not bring up). The node's facts decide
(``nvswitch_board``): NVSwitch device nodes or a GPU registered in a fabric say the board
has them, GPUs that are all PCIe cards (an A40 pair on an NVLink bridge) say it has none, and
without either the unit is ``unknown``, never failed (NVIDIA/gpu-operator#610).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Sequence

import msgspec

from gpunode.checks.base import STATE, check, not_deployed, problem, reads, unknown
from gpunode.checks.board import nvswitch_board
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import HOST_JOURNALS, as_catalogued, line_finding
from gpunode.checks.named import default_errno_dropped, hook_layer, runtime_own_error, sandbox_own_refusal
from gpunode.decisive import MAX_LINE, Decisive, decisive_line, severity, without_prefix
from gpunode.model import Evidence, Finding, Status
from gpunode.relazy import lazy_compile

#: Component -> its journal in the bundle and the state cause when no line says more.
UNIT_JOURNALS: dict[str, tuple[str, str]] = {
    "fabric-manager": ("journal-fabricmanager.txt", "fabric_manager_not_running"),
    "imex": ("journal-imex.txt", "imex_not_running"),
}
#: The unit's own log file (its LOG_FILE_NAME), read where its journal holds only systemd's
#: lines: the probe keeps the tail of Fabric Manager's (``files/var/log/fabricmanager.log``).
UNIT_LOGS: dict[str, str] = {"fabric-manager": "var/log/fabricmanager.log"}
#: How far back the unit's log file is read for its last run's error.
_LOG_TAIL = 50

#: systemd's own lines about the unit (``systemd[1]: ...``), in any journal output format.
_SYSTEMD = lazy_compile(r"(?:^|\s)systemd\[1\]: ")
#: A start that ended: the unit's process exited non-zero, was killed or dumped core,
#: systemd gave the unit up, or the start job failed.
#: Older systemd writes the first in lower case and ends a failed run with 'Unit kubelet.service
#: entered failed state.' and 'kubelet.service failed.' (kubernetes/kubelet#9).
_FAILED = lazy_compile(
    r"systemd\[1\]: (?:[\w@.:-]+\.service: (?:[Mm]ain|[Cc]ontrol) process exited, "
    r"code=(?:exited, status=[1-9]|killed, status=(?!15/)|dumped)|[\w@.:-]+\.service: Failed with result|"
    r"Failed to start |"
    r"Unit [\w@.:-]+\.service entered failed state|[\w@.:-]+\.service failed\.)")
#: The same end in the unit's own name where a pasted journal cut systemd's prefix off
#: ("nvidia-fabricmanager.service: Control process exited, code=exited, status=1", as
#: spectrocloud/CanvOS b764b30 quotes Fabric Manager's start wrapper failing): systemd names the
#: unit first in its lines about it, and a unit's own journal holds no other unit's.
_OWN_UNIT_FAILED = {
    component: lazy_compile(
        rf"^\s*{unit}\.service: (?:(?:[Mm]ain|[Cc]ontrol) process exited, "
        r"code=(?:exited, status=[1-9]|killed, status=(?!15/)|dumped)|Failed with result)")
    for component, unit in (("fabric-manager", "nvidia-fabricmanager"), ("imex", "nvidia-imex"))
}
#: A start that succeeded, or began (the unit's lines after it belong to its new run).
_STARTED = lazy_compile(r"systemd\[1\]: Started ")
#: Stopped on purpose (``systemctl stop``): not a failure of the unit's own.
_STOPPED = lazy_compile(r"systemd\[1\]: (?:Stopping|Stopped) ")
_STARTING = lazy_compile(r"systemd\[1\]: Starting ")
#: The unit's process as the probe lists it: seen running, its last error did not end it.
UNIT_PROCESSES: dict[str, str] = {"fabric-manager": "nv-fabricmanager", "imex": "nvidia-imex"}


#: Fabric Manager's words for a board without NVSwitches: the NVSwitch driver answered the
#: query for its devices with NV_WARN_NOTHING_TO_DO ("request to query NVSwitch device
#: information from NVSwitch driver failed with error:WARNING Nothing to do
#: [NV_WARN_NOTHING_TO_DO]").
_NOTHING_TO_DO = lazy_compile(r"\bNV_WARN_NOTHING_TO_DO\b|\bNothing to do\b")
def _nothing_to_do(ctx: NodeContext, component: str, found: Decisive) -> Finding | None:
    """What Fabric Manager's finding no NVSwitch means on this board: nothing where the
    board has none, unknown where the facts do not say; None where the board has NVSwitches
    (or the line says something else), and the line stands as the failure."""
    if component != "fabric-manager" or not _NOTHING_TO_DO.search(found.line):
        return None
    board = nvswitch_board(ctx)
    if board is None:
        return unknown(component, "Fabric Manager found no NVSwitch to manage; whether this board has "
                       "NVSwitches is not known (no NVSwitch device, fabric state or GPU model read)")
    if board:
        return None
    return not_deployed(component, "no NVSwitch on this board (PCIe GPUs): Fabric Manager has nothing to "
                        "manage (NV_WARN_NOTHING_TO_DO)")


#: The words a host service's own unit names hold: kubelet.service, containerd.service,
#: crio.service, docker.service, and the distributions' units that run both (k3s(-agent),
#: rke2-server/-agent, k0sworker, microk8s's snap daemons, kubelite).
_UNIT_WORDS: dict[str, re.Pattern[str]] = {
    "kubelet": lazy_compile(r"(?i:kubelet|kubelite|k3s|rke2|k0s|microk8s)"),
    "container-runtime": lazy_compile(r"(?i:containerd|cri-?o|docker|k3s|rke2|k0s|microk8s)"),
}
#: The unit a systemd line is about, where the line names it ('etcd.service: Main process
#: exited', 'Unit kubelet.service entered failed state', newer systemd's 'Failed to start
#: etcd.service - etcd.'); older systemd's 'Failed to start <description>.' names none.
_UNIT_NAMED = lazy_compile(r"systemd\[1\]: (?:Unit |Failed to start )?([\w@.:-]+)\.service\b")
#: How many lines after a unit's named failure line an unnamed one ('Failed to start Etcd
#: Server.') may follow and still be the same unit's record of the same end.
_SAME_RECORD = 3


def other_unit(line: str, component: str) -> bool | None:
    """Whether systemd's ``line`` is about a unit other than the host service's own (None
    where it names no unit): a journal pasted without ``-u`` holds every unit's lines, and a
    service the runtime runs (kubespray's etcd.service, a ``docker run`` wrapped in a unit)
    exiting non-zero is that service's failure, not the runtime's or the kubelet's."""
    words = _UNIT_WORDS.get(component)
    named = _UNIT_NAMED.search(line)
    if words is None or named is None:
        return None
    return not words.search(named.group(1))


def _own_failures(lines: Sequence[str], component: str) -> list[int]:
    """Indexes of systemd's lines that end a run of the host service's own units; a line
    naming no unit is the unit's of the named failure line just before it (the same end)."""
    own: list[int] = []
    other_at: int | None = None
    for i, line in enumerate(lines):
        if not _FAILED.search(line):
            continue
        other = other_unit(line, component)
        if other is None:
            other = other_at is not None and i - other_at <= _SAME_RECORD
        other_at = i if other else None
        if not other:
            own.append(i)
    return own


def _judge_unit(ctx: NodeContext, component: str, host: bool = False) -> Iterator[Finding]:
    """``host``: one of the host's own services (``HOST_UNITS``), judged by systemd's lines
    alone."""
    name, state = HOST_UNITS[component] if host else UNIT_JOURNALS[component]
    split = ctx.text_lines("cmd", name)
    lines = split[0] if split is not None else []
    bare = _OWN_UNIT_FAILED.get(component)
    failing = _own_failures(lines, component) if host else [
        i for i, line in enumerate(lines) if _FAILED.search(line) or (bare is not None and bare.search(line))]
    failed = failing[-1] if failing else None
    if failed is None:
        if not host:
            yield from _last_words(ctx, component, lines)
        return
    if max(_last(lines, _STARTED) or -1, _last(lines, _STOPPED) or -1) > failed:
        return  # never failed in the window, started again or stopped on purpose since
    path = ctx.obs.path_of("cmd", name)
    begun = _last(lines[:failed], _STARTING)
    first = 0 if begun is None else begun + 1
    end = next(i for i in failing if first <= i <= failed)  # how the run ended
    # a host unit's last words may reach the journal after systemd's line on its exit
    # (kubernetes/kubelet#9: the kubelet's F line between 'main process exited' and 'failed')
    last = failed if host else end
    if host and _ran_again(lines, first, last):
        return
    ended = Evidence(f"{path}:{end + 1}", lines[end].strip())
    own = [line if not _SYSTEMD.search(line) else "" for line in lines[first:last]]
    found = decisive_line(own, ctx.kb.class_of)
    where = f"{path}:{first + found.line_no}" if found is not None else ""
    if found is None:
        found, where = _log_file_line(ctx, component)
    rank = ctx.kb.get(state).specificity  # the state's, which the line explains
    if found is None:
        yield problem(component, state, ended, specificity=rank)
        return
    if (instead := _nothing_to_do(ctx, component, found)) is not None:
        yield instead
        return
    said = line_finding(ctx.kb, component, Status.FAILED, found, where, verb="fails in its journal",
                        specificity=rank + 1, evidence=(ended,), standalone="true")
    said = msgspec.structs.replace(said, context={**said.context, STATE: state})
    yield as_catalogued(ctx.kb, said)


def _last_words(ctx: NodeContext, component: str, journal: Sequence[str]) -> Iterator[Finding]:
    """The unit failed where no systemd line says how its run ended, but its journal (or,
    without one of its own lines, its log file) ends with its own error-level line."""
    if _seen_running(ctx, component):
        return
    state = UNIT_JOURNALS[component][1]
    found, where = _ending_error(ctx, component, ("cmd", UNIT_JOURNALS[component][0]), journal)
    if found is None and not any(line.strip() and not _SYSTEMD.search(line) for line in journal):
        log = UNIT_LOGS.get(component)
        split = ctx.text_lines("files", log) if log is not None else None
        if log is not None and split is not None:
            found, where = _ending_error(ctx, component, ("files", log), split[0][-_LOG_TAIL:],
                                         len(split[0]))
    if found is None:
        return
    if (instead := _nothing_to_do(ctx, component, found)) is not None:
        yield instead
        return
    rank = ctx.kb.get(state).specificity
    said = line_finding(ctx.kb, component, Status.FAILED, found, where, verb="ends its log with",
                        specificity=rank + 1, standalone="true")
    said = msgspec.structs.replace(said, context={**said.context, STATE: state})
    yield as_catalogued(ctx.kb, said)


def _ending_error(ctx: NodeContext, component: str, where: tuple[str, str], lines: Sequence[str],
                  total: int | None = None) -> tuple[Decisive | None, str]:
    """The decisive line of the unit's last run where the text's last line is the unit's own
    error (systemd's lines and a start before them cut the run off), and where it is: the
    last line itself where a catalogued cause of the component knows it (the unit's own
    words for giving up, after the errors that led there)."""
    kind, name = where
    kept = [line for line in lines if line.strip()]
    if not kept or _SYSTEMD.search(kept[-1]):
        return None, ""
    # a last line a catalogued cause knows is the unit's own word for giving up, whether or
    # not its error words survived (a pasted journal cut mid-line)
    known = ctx.kb.catalogued_in(component, kept[-1]) is not None
    if not known and not severity(kept[-1]):
        return None, ""
    begun = max(_last(lines, _STARTED) or -1, _last(lines, _STARTING) or -1)
    own = [line if not _SYSTEMD.search(line) else "" for line in lines[begun + 1:]]
    found = decisive_line(own, ctx.kb.class_of)
    last = max((i for i, line in enumerate(own) if line.strip()), default=None)
    if known and last is not None:
        found = Decisive(last + 1, own[last].strip()[:MAX_LINE], severity(own[last]))
    if found is None:
        return None, ""
    offset = (total - len(lines) if total is not None else 0) + begun + 1
    return found, f"{ctx.obs.path_of(kind, name)}:{offset + found.line_no}"


def _seen_running(ctx: NodeContext, component: str) -> bool:
    """Whether the probe lists the unit's process running (then an error it logged did not
    end it)."""
    probe = ctx.probe
    process = UNIT_PROCESSES.get(component)
    return probe is not None and process is not None and bool(probe.host.processes.get(process))


def _log_file_line(ctx: NodeContext, component: str) -> tuple[Decisive | None, str]:
    """The last error of the unit's own log file's tail, and where it is."""
    name = UNIT_LOGS.get(component)
    split = ctx.text_lines("files", name) if name is not None else None
    if name is None or split is None:
        return None, ""
    lines = split[0]
    start = max(0, len(lines) - _LOG_TAIL)
    found = decisive_line(lines[start:], ctx.kb.class_of)
    if found is None:
        return None, ""
    return found, f"{ctx.obs.path_of('files', name)}:{start + found.line_no}"


#: A journal line's program and process id (``crio[1967]: ``), in the short formats.
_PROCESS = lazy_compile(r"(?:^|\s)[\w.@/-]+\[(\d+)\]: ")


def _ran_again(lines: Sequence[str], first: int, end: int) -> bool:
    """Whether a process other than the failed run's logged after its end: a new run whose
    start systemd's lines (cut from the journal) do not show, or another unit of the same
    journal (containerd beside a failed dockerd) that runs; either way the failure is not
    the journal's last word."""
    ran = {m.group(1) for line in lines[first:end] if not _SYSTEMD.search(line)
           and (m := _PROCESS.search(line))}
    return any((m := _PROCESS.search(line)) and m.group(1) not in ran
               for line in lines[end + 1:] if not _SYSTEMD.search(line))


def _last(lines: Sequence[str], pattern: re.Pattern[str]) -> int | None:
    """Index of the last line ``pattern`` finds in, or None."""
    return next((i for i in range(len(lines) - 1, -1, -1) if pattern.search(lines[i])), None)


#: The host's own services, the kubelet and the container runtime: their journals
#: (gpunode.probe.journal) and the state a failed last run leaves. A service whose systemd
#: lines end its last run in failure (its process exited non-zero, 'Failed with result',
#: 'start request repeated too quickly', 'Failed to start') with no start, stop or run of
#: its own since is down, with its own last error before the exit as the reason (cri-o
#: exiting on 'level=fatal msg="Validating runtime config: ..."', cri-o/cri-o#3776; the
#: kubelet's 'F... failed to run Kubelet: ...', kubernetes/kubelet#9). Unlike Fabric
#: Manager's, their last words alone decide nothing: a running kubelet or containerd logs
#: errors it goes on after.
HOST_UNITS: dict[str, tuple[str, str]] = {
    "kubelet": (HOST_JOURNALS["kubelet"], "node_not_ready"),
    "container-runtime": (HOST_JOURNALS["container-runtime"], "container_runtime_down"),
}


@check("kubelet", may_find=reads(f"cmd/{HOST_JOURNALS['kubelet']}"))
def kubelet_journal(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The kubelet service's last run failed, in its own journal."""
    yield from _judge_unit(ctx, component, host=True)


@check("container-runtime", may_find=reads(f"cmd/{HOST_JOURNALS['container-runtime']}"))
def runtime_journal(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The container runtime's service (containerd, CRI-O, dockerd) last run failed, in its
    own journal."""
    yield from _judge_unit(ctx, component, host=True)


#: Where the runtime's own failures to run a container are written: its journal, and the
#: kubelet's, which logs the CRI's answer to each container it could not create or exec into.
_RUNTIME_FAILURES_IN = ("container-runtime", "kubelet")
#: How many journal lines either side may hold the rest of the same record: the kubelet's and
#: k3s's multi-line errors put a hook's words ('nvidia-container-cli: device error: ...') on a
#: line of their own before the runtime's wrapper of them (NVIDIA/nvidia-container-toolkit#108).
_RECORD_SPAN = 3


@check("container-runtime", may_find=reads(*(f"cmd/{HOST_JOURNALS[host]}" for host in _RUNTIME_FAILURES_IN)))
def runtime_own_failures(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A running container runtime that failed to run a container by its own doing: the last
    error-level line of its journal or the kubelet's that is the runtime's own failure in its
    own words (``runtime_own_error``: CRI-O's 'Container creation error: writing file
    `devices.allow`: Operation not permitted', the CRI's 'OCI runtime exec failed: ... cannot
    exec in a stopped container'), with no hook or other layer named in it, is degraded with
    that line. A failed run of the service is ``runtime_journal``'s; a line that only says
    a container ended or a retry is not read (it is no error, or it names no failure)."""
    for host in _RUNTIME_FAILURES_IN:
        name = HOST_JOURNALS[host]
        split = ctx.text_lines("cmd", name)
        if split is None:
            continue
        lines = split[0]
        for index in range(len(lines) - 1, -1, -1):
            line = lines[index]
            near = lines[max(0, index - _RECORD_SPAN):index + _RECORD_SPAN + 1]
            if not runtime_own_error(line) or any(_names_other(ctx, other) for other in near):
                continue
            found = decisive_line([line], ctx.kb.class_of)
            if found is None and sandbox_own_refusal(line):
                found = Decisive(1, line.strip()[:MAX_LINE], 2)
            if found is None:
                continue
            found = dataclasses.replace(found, line_no=index + 1)
            where = f"{ctx.obs.path_of('cmd', name)}:{index + 1}"
            yield as_catalogued(ctx.kb, line_finding(ctx.kb, component, Status.DEGRADED, found, where,
                                                     verb="fails running a container", standalone="true"),
                                line)
            return


def _names_other(ctx: NodeContext, line: str) -> bool:
    """The line names a layer other than the runtime (a hook's words, NVIDIA's CLI, a CDI
    device, a seccomp rule refused where NVIDIA's runtime is the default and rewrote the spec:
    ``checks.named.default_errno_dropped``): that layer's check judges it."""
    named = (hook_layer(ctx.facts.catalog.named_in, line) or ctx.facts.catalog.named_in(line)
             or default_errno_dropped(ctx, line))
    return named is not None and named != "container-runtime"


@check("fabric-manager", may_find=reads(f"cmd/{UNIT_JOURNALS['fabric-manager'][0]}",
                                        f"files/{UNIT_LOGS['fabric-manager']}"))
def fabric_manager_journal(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """nvidia-fabricmanager's last run failed, in its own journal."""
    yield from _judge_unit(ctx, component)


@check("imex", may_find=reads(f"cmd/{UNIT_JOURNALS['imex'][0]}"))
def imex_journal(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """nvidia-imex's last run failed, in its own journal."""
    yield from _judge_unit(ctx, component)


#: A Go program's crash record as its own line, after a journal's prefix: the runtime's
#: ``panic: `` or ``fatal error: `` (an unrecovered panic, a map written concurrently), or
#: apimachinery's ``Observed a panic:`` (HandleCrash logs it, then re-panics: the kubelet runs
#: with ReallyCrash on). A klog header may stand before it ('runtime.go:78] ').
_GO_CRASH_LINE = lazy_compile(r"^(?:[IEWF]\d{4} [\d:.]+\s+\d+ )?(?:[\w.-]+\.go:\d+\] )?"
                              r"(?:panic: |fatal error: |Observed a panic: )")
#: The first line of the trace after it: the goroutine header the Go runtime prints as the
#: process dies, or (apimachinery before 1.16) a frame's source file and line.
_GOROUTINE = lazy_compile(r"^goroutine \d+ \[[\w ,]+\]:|^/\S+\.(?:go|s):\d+$")
#: A journal line's unit and process id with the time and host cut off ('kubelet[6048]: '),
#: as reports paste it.
_BARE_UNIT = lazy_compile(r"^[\w.@/-]{1,60}\[\d+\]: ")
#: How much of a crash record's message an error line before it must hold to be its own words.
_SAME_WORDS = 60
#: How many lines after the crash record its trace must begin within (Go prints the panic's
#: value, '[recovered]' lines and a blank line before it).
_TRACE_WITHIN = 4


@check("kubelet", may_find=reads(f"cmd/{HOST_UNITS['kubelet'][0]}"))
def kubelet_crashed(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The kubelet died of a Go panic or fatal error in the recent past, in its own journal."""
    yield from _go_crash(ctx, component)


@check("container-runtime", may_find=reads(f"cmd/{HOST_UNITS['container-runtime'][0]}"))
def runtime_crashed(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """containerd, CRI-O or dockerd died of a Go panic or fatal error in the recent past."""
    yield from _go_crash(ctx, component)


def _go_crash(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A host service written in Go whose journal holds a crash record followed by the
    goroutine trace the runtime prints as it ends the process (kubernetes/kubernetes#102517,
    #103838, #131688: the kubelet's device manager writing a map concurrently or into a nil
    one) crashed: the trace is the process ending, whatever systemd's lines say, and a crash
    of the program's own is a bug that comes back (a restart since does not heal it), so the
    service is degraded with that line; where nothing of it ran since, it is down, failed with
    that line as the reason (as a failed run in ``_judge_unit``). Errors it logs and goes on
    after are not crashes."""
    name = HOST_UNITS[component][0]
    split = ctx.text_lines("cmd", name)
    if split is None:
        return
    lines = split[0]
    index = next((i for i in range(len(lines) - 1, -1, -1) if _crash_record(lines, i)), None)
    if index is None:
        return
    again = (_last(lines, _STARTED) or -1) > index or _ran_again(lines, 0, index) or _posting(ctx, component)
    index = _logged_before(lines, index)
    line = lines[index].strip()
    found = Decisive(index + 1, line[:MAX_LINE], 2)
    where = f"{ctx.obs.path_of('cmd', name)}:{index + 1}"
    if again:  # restarted since: it crashed in the recent past
        yield as_catalogued(ctx.kb, line_finding(ctx.kb, component, Status.DEGRADED, found, where,
                                                 verb="crashed", standalone="true"), line)
        return
    state = HOST_UNITS[component][1]  # not run since: down, and the crash is why (as _judge_unit)
    said = line_finding(ctx.kb, component, Status.FAILED, found, where, verb="crashed",
                        specificity=ctx.kb.get(state).specificity + 1, standalone="true")
    yield as_catalogued(ctx.kb, msgspec.structs.replace(said, context={**said.context, STATE: state}), line)


def _posting(ctx: NodeContext, component: str) -> bool:
    """The kubelet posts the node Ready: it runs (an apimachinery panic it recovered from,
    kubernetes/kubernetes#88779, or a run since whose lines the journal does not hold)."""
    node = ctx.node
    return component == "kubelet" and node is not None and any(
        c.type == "Ready" and c.status == "True" for c in node.status.conditions)


def _logged_before(lines: Sequence[str], index: int) -> int:
    """The error line just before the crash record that logged the error the program then
    panicked with, and says more (the kubelet's 'E... "Could not initialize pod allocation
    checkpoint manager" err="could not restore state ..."' before 'panic: could not restore
    state ...', kubernetes/kubernetes#135711); else the crash record itself."""
    said = _GO_CRASH_LINE.sub("", _own_text(lines[index]), count=1).strip()[:_SAME_WORDS]
    if len(said) < _SAME_WORDS // 2:
        return index
    for before in range(index - 1, max(-1, index - 1 - _TRACE_WITHIN), -1):
        if said in lines[before] and severity(lines[before]):
            return before
    return index


def _crash_record(lines: Sequence[str], index: int) -> bool:
    """Line ``index`` is a Go crash record whose goroutine trace follows it."""
    if not _GO_CRASH_LINE.match(_own_text(lines[index])):
        return False
    after = lines[index + 1:index + 1 + _TRACE_WITHIN]
    return any(_GOROUTINE.match(_own_text(line)) for line in after)


def _own_text(line: str) -> str:
    """The line as the service wrote it, without the journal's prefix in either form."""
    return _BARE_UNIT.sub("", without_prefix(line.strip()), count=1)
