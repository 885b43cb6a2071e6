"""A running component that waits: its log ends in a wait, so it is not done.

A pod runs and is ready, yet its job never finishes: GKE's driver installer that could
not find a driver for the GPU logs ``Waiting for GPU driver libraries to be available.``
for ever, and the device plugin above it stays in init. Neither shows a state of its own
below the waiting one, so the bottom-up reading stops at the pod that waits and blames
it. This follows the dependency down: a running component whose current log ends in a
wait is degraded when

- an error line stands among the last lines before that wait (it gave up and waits), or
- a component that depends on it is stuck in init waiting for a lower layer (nothing
  below that one is failing, so the wait is what it waits for); then the line before
  the wait says what it waits on.

A wait with neither (the MIG manager waiting for its next label change, a validator
waiting for its marker) is the component's steady state, and stays unread.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from gpunode.checks.base import STATE
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import as_catalogued, line_finding
from gpunode.decisive import Decisive, decisive_line, message_of
from gpunode.facts import LogFile
from gpunode.model import PROBLEMS, Finding, Status
from gpunode.relazy import lazy_compile

#: A log's last line that says the program waits for something to appear that another
#: step should have put there ("Waiting for GPU driver libraries to be available."); a
#: daemon idling until it is told something ("Waiting for signal", "for change to the
#: label") is no such wait.
_WAIT = lazy_compile(
    r"^\W*(?:[Ww]aiting|[Ss]till waiting) (?:for|until)\b.{0,120}?\b(?:to be (?:available|"
    r"ready|loaded|installed|present|created)|to (?:appear|exist|come up|become available))\b")
#: How many lines before the wait an error may stand and still be why it waits.
_BEFORE = 5
_INIT_BLOCKED = "init_blocked"


def waiting_findings(ctx: NodeContext, problems: Mapping[str, Sequence[Finding]]) -> Iterator[Finding]:
    """Degraded findings of running components whose log ends in a wait (module doc);
    ``problems`` are the node's problem findings so far, by failing component."""
    catalog = ctx.facts.catalog
    failing = {cid for cid, found in problems.items() if found}
    blocked_on: set[str] = set()
    for cid in failing:
        causes = {f.cause for f in problems[cid]}
        waits = _INIT_BLOCKED in causes and all(ctx.kb.get(cause).state for cause in causes)
        if waits and not catalog.dependencies(cid) & failing:
            said = _init_words(ctx, cid, problems[cid])
            if said is not None:  # its own init container says why
                yield said
            else:
                blocked_on |= catalog.dependencies(cid)
    here = ctx.components_here
    for cid in catalog.ids:
        if cid not in here or problems.get(cid):  # (no pod here: no running log)
            continue
        for log in _running_logs(ctx, cid):
            finding = _waits(ctx, cid, log, cid in blocked_on)
            if finding is not None:
                yield finding
                break


def _init_words(ctx: NodeContext, component: str, problems: Sequence[Finding]) -> Finding | None:
    """A component stuck in init while nothing below it fails: no lower layer is what its
    init container waits for, so that container's own last error says why it does not
    finish (the toolkit's driver-validation that cannot create the device nodes of a host
    driver whose /proc/devices names it does not know, NVIDIA/gpu-operator#1015)."""
    state = max(problems, key=lambda f: f.specificity)
    for sp in ctx.stack_pods(component):
        running = {cs.name for cs in sp.pod.status.init_container_statuses if cs.state.running is not None}
        for log in ctx.logs_of(sp.pod):
            found = decisive_line(log.lines, ctx.kb.class_of) if log.container in running else None
            if found is None or log.previous:
                continue
            return as_catalogued(ctx.kb, line_finding(
                ctx.kb, component, Status.FAILED, found, f"{log.path}:{found.line_no}",
                verb=f"init container {log.container} fails", specificity=state.specificity + 1,
                evidence=state.evidence, **{**state.context, STATE: state.cause}))
    return None


def _running_logs(ctx: NodeContext, component: str) -> Iterator[LogFile]:
    for sp in ctx.stack_pods(component):
        running = {cs.name for cs in sp.pod.status.container_statuses if cs.state.running is not None}
        for log in ctx.logs_of(sp.pod):
            if not log.previous and log.container in running:
                yield log


def _waits(ctx: NodeContext, component: str, log: LogFile, awaited: bool) -> Finding | None:
    lines = [(i, line) for i, line in enumerate(log.lines) if line.strip()]
    if len(lines) < 2 or not _WAIT.search(message_of(lines[-1][1])):
        return None
    before = lines[-1 - _BEFORE:-1]
    found = decisive_line([line for _, line in before], ctx.kb.class_of)
    if found is not None:
        index = before[found.line_no - 1][0]
    elif awaited:
        index = before[-1][0]
        found = Decisive(1, before[-1][1], 1)
    else:
        return None
    where = f"{log.path}:{index + 1}"
    return as_catalogued(ctx.kb, line_finding(
        ctx.kb, component, Status.DEGRADED, Decisive(index + 1, found.line, found.strength), where,
        verb="waits after", standalone="true", namespace=log.namespace, pod=log.pod,
        container=log.container))


def problems_by_component(findings: Mapping[str, Sequence[Finding]]) -> dict[str, list[Finding]]:
    """Each failing component's problem findings; a component without any is left out (so
    a node where nothing fails, most of them, gives an empty mapping)."""
    out: dict[str, list[Finding]] = {}
    for cid, found in findings.items():
        for finding in found:  # (no list made for a component without a problem: most of them)
            if finding.status in PROBLEMS:
                out[cid] = [f for f in found if f.status in PROBLEMS]
                break
    return out
