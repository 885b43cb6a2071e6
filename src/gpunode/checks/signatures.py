"""Knowledge-base signatures found in a node's raw text, scoped per component.

A log signature counts only in the logs of its own component's containers;
event signatures look at events about the node and its stack pods; node
command output and files are matched by name. Scoping is what keeps a stray
line in an unrelated container from naming a root cause.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from fnmatch import fnmatchcase
from itertools import chain
from operator import attrgetter
from weakref import WeakKeyDictionary

import msgspec

from gpunode.bundle.kube import ContainerState, ContainerStatus, Event, Node, Pod
from gpunode.checks.admission import asks_none_of, refused_at_admission
from gpunode.checks.context import NodeContext
from gpunode.checks.runtime_class import NOT_DEFAULT_RUNTIME, runtime_requested
from gpunode.checks.tegra import nvml_only_failure
from gpunode.decisive import clipped, message_of
from gpunode.facts import ClusterFacts, LogFile, workload_stuck
from gpunode.kb import (
    Cause,
    GateLiteral,
    KnowledgeBase,
    Match,
    MatchSource,
    TextHit,
    decisive_hit,
    first_hits,
    literal_gate,
    may_match,
    scan_lines,
    scan_split_lines,
)
from gpunode.model import Evidence, Finding
from gpunode.parse.gpu_ref import bus_id_above, bus_id_in_line, gpu_values


def signature_findings(ctx: NodeContext, component: str) -> list[Finding]:
    """Every KB signature of ``component`` seen in this node's observations, plus the
    generic ("*") causes' signatures in events about the component's own pods.

    Only the scans that may find something on this node run (``_node_plan``): most
    nodes have no event, no stopped container and no log whose text holds a literal
    of the component's signatures."""
    findings: list[Finding] = []
    for scanner, matchers in _node_plan(ctx, component):
        findings.extend(scanner(ctx, component, matchers))
    return findings


def _scans(kb: KnowledgeBase, component: str) -> list[_Scan]:
    """The scanners with signatures for ``component``, with them and their literal gate
    (the same for every node)."""
    known = _SCANS.get(component)
    if known is None or known[0] is not kb:
        scans = [(source, scanner, matchers) for source, scanner in _SCANNERS.items()
                 if (matchers := kb.matchers(component, source))]
        if generic := kb.matchers("*", "event"):
            scans.append(("event", _own_events, generic))
        gated = [(source, scanner, matchers, literal_gate(tuple(m.pattern for _, m in matchers)))
                 for source, scanner, matchers in scans]
        known = _SCANS[component] = (kb, gated)
    return known[1]


#: Per component: the knowledge base the scans were listed for, and the scans.
_SCANS: dict[str, tuple[KnowledgeBase, list[_Scan]]] = {}

def _node_plan(ctx: NodeContext, component: str) -> list[tuple[Scanner, Matchers]]:
    """The scans of ``component`` worth running on this node.

    A scan of events, stopped containers' states or node conditions is left out when
    the node's whole text of that kind (every line any component's scan could read,
    joined once per node) holds no literal of the scan's signatures
    (``kb.literal_gate``): no line can match then. A log scan is left out when no pod
    on the node has a log line, unless the component has a cluster-wide pod with log
    lines (``ClusterFacts.side_logged``). Most nodes have none of these, and the same texts (no
    event, init containers that completed, a ready kubelet): their plan is shared."""
    known = ctx.memo.get(_PLAN_KEY)  # (``_plan_of`` without a call: asked for every component)
    plan: _Plan = _plan_of(ctx) if known is None else known  # type: ignore[assignment]  # (no cast() call)
    runs = plan.runs.get(component)
    if runs is None:
        runs = plan.runs[component] = [
            (scanner, matchers) for source, scanner, matchers, gate in _scans(ctx.kb, component)
            if plan.worth_scanning(component, source, gate)]
    return runs


def scanning(ctx: NodeContext, components: tuple[str, ...]) -> frozenset[str]:
    """Those of ``components`` with a scan worth running on this node (``_node_plan``): the
    others' ``signature_findings`` is empty there. Once per shared plan (nodes whose texts
    are alike), so the node pass asks it once per node instead of once per component."""
    plan = _plan_of(ctx)
    known = plan.scanning.get(components)
    if known is None:
        known = plan.scanning[components] = frozenset([c for c in components if _node_plan(ctx, c)])
    return known


def _plan_of(ctx: NodeContext) -> _Plan:
    plan = ctx.memo.get(_PLAN_KEY)
    if plan is None:
        plan = ctx.memo[_PLAN_KEY] = _shared_plan(ctx)
    assert isinstance(plan, _Plan)
    return plan


_PLAN_KEY = "signature_plan"


class _Plan:
    """The scans worth running on nodes whose texts are these, by component."""

    def __init__(self, kb: KnowledgeBase, texts: dict[MatchSource, str], logged: bool,
                 side_logged: frozenset[str]) -> None:
        self.kb, self.texts, self.logged, self.side_logged = kb, texts, logged, side_logged
        self.runs: dict[str, list[tuple[Scanner, Matchers]]] = {}
        #: ``scanning``'s answers, by the components asked about.
        self.scanning: dict[tuple[str, ...], frozenset[str]] = {}

    def worth_scanning(self, component: str, source: MatchSource,
                       gate: tuple[GateLiteral, ...] | None) -> bool:
        if source == "log":
            return self.logged or component in self.side_logged
        text = self.texts.get(source)
        return text is None or may_match(text, gate)

    def may_trace(self, m: Match) -> bool:
        """Whether a traced signature (``traced_findings``) may be seen on these nodes: in
        a log of a pod on the node or, if decisive, of a cluster-wide pod; in the state
        of a stopped container."""
        if m.source == "log":
            return self.logged or (m.while_running and bool(self.side_logged))
        if m.source == "waiting":
            return may_match(self.texts["waiting"], literal_gate((m.pattern,)))
        return True


def _shared_plan(ctx: NodeContext) -> _Plan:
    texts, logged = _node_texts(ctx)
    side = ctx.facts.side_logged
    if sum(map(len, texts.values())) > _PLAN_TEXT_MAX:
        return _Plan(ctx.kb, texts, logged, side)  # a node of its own: not kept
    key = (id(ctx.kb), side, logged, texts["event"], texts["waiting"], texts["node_condition"])
    plan = _PLANS.get(key)
    if plan is None or plan.kb is not ctx.kb:
        if len(_PLANS) >= _PLANS_MAX:
            _PLANS.clear()
        plan = _PLANS[key] = _Plan(ctx.kb, texts, logged, side)
    return plan


#: Plans by what decides them; bounded so a fleet of distinct texts cannot grow it, and
#: kept only for nodes whose texts are short (a node with many events has a plan of its own).
_PLANS: dict[tuple[object, ...], _Plan] = {}
_PLANS_MAX = 256
_PLAN_TEXT_MAX = 4096
#: The component whose runtime class a pod asks for (the NVIDIA runtime it registers).
_TOOLKIT = "container-toolkit"


def _node_texts(ctx: NodeContext) -> tuple[dict[MatchSource, str], bool]:
    """Everything the event, waiting and condition scans of any component may read on
    this node, each kind joined into one text, and whether a pod on it has a log line."""
    pods = [*map(_POD, chain.from_iterable(ctx.facts.pods_by_node.get(ctx.name, {}).values()))]
    events = "\n".join(ev.message for _source, _ctx, found in _node_event_groups(ctx)
                       for ev in found) if ctx.facts.events_by_object else ""
    stopped: list[str] = []
    for pod in pods:
        _stopped_lines(pod.status.init_container_statuses, stopped)
        _stopped_lines(pod.status.container_statuses, stopped)
    node = ctx.node
    conditions = "\n".join(_condition_lines(node)) if node is not None else ""
    logged = any(map(_LINES, chain.from_iterable(map(ctx.logs_of, pods))))  # (in C)
    return {"event": events, "waiting": "\n".join(stopped), "node_condition": conditions}, logged


#: Readers in C for the node pass (a comprehension is a function of its own a node).
_POD = attrgetter("pod")
_LINES = attrgetter("lines")


def _stopped_lines(statuses: Iterable[ContainerStatus], out: list[str]) -> None:
    """The lines ``_waiting`` reads of these containers (none for a running one)."""
    for cs in statuses:
        state, last = cs.state, cs.last_state
        if state.waiting or state.terminated:
            out.extend(_state_lines(state))
        if last.waiting or last.terminated:
            out.extend(_state_lines(last))


Matchers = list[tuple[Cause, Match]]
Scanner = Callable[[NodeContext, str, Matchers], Iterable[Finding]]
#: A scan: what it reads, the scanner, its signatures, and their ``literal_gate``.
_Scan = tuple[MatchSource, Scanner, Matchers, tuple[GateLiteral, ...] | None]


def traced_findings(ctx: NodeContext, failing: Collection[str]) -> Iterator[Finding]:
    """Other components' causes read in the pods of failing components (``seen_in``).

    A container that cannot load NVML or sees no GPU is a symptom: the line names the
    layer below. A higher component's binary failing inside a lower one's pod (the
    validator in the toolkit's init container) names that higher component. Only pods
    of components already failing are read, and running pods only for their decisive
    (``while_running``) lines; the finding is the named component's and proves a
    problem on its own."""
    catalog = ctx.facts.catalog
    plan = _plan_of(ctx)
    if not failing and not plan.logged:  # most nodes: nothing fails and no pod here has a log line
        return  # (running pods speak only in their logs)
    for cause, m in ctx.kb.traced:
        if not plan.may_trace(m):
            continue
        below = catalog.dependencies(cause.component)
        sources = [c for c in _trace_sources(ctx, m, failing) if c != cause.component]
        if cause.component in failing:
            # A failing component's own findings name it; only a lower failing pod where its
            # cause shows (and which it explains) is read further.
            sources = [c for c in sources if c in below and c in failing]
        for seen in sources:
            if seen not in below and _runtime_served(ctx, cause.component) and _own_spec_at_fault(ctx, seen):
                continue
            if cause.code == NOT_DEFAULT_RUNTIME and _runtime_not_at_issue(ctx, seen):
                continue
            if seen in failing:
                found = (_logs if m.source == "log" else _waiting)(ctx, seen, [(cause, m)])
            else:  # a running pod: only its decisive lines (while_running) speak
                found = (f for sp in ctx.stack_pods(seen) for log in ctx.logs_of(sp.pod)
                         for f in log_findings(seen, log, [(cause, m)], decisive_only=True))
            for finding in found:
                ctx_vals = {**finding.context, "standalone": "true", "seen_in": seen}
                yield msgspec.structs.replace(finding, component=cause.component, context=ctx_vals)


def _runtime_not_at_issue(ctx: NodeContext, seen: str) -> bool:
    """The pod's hint at the default runtime names no layer below: the pod asks for the NVIDIA
    runtime itself, or it is an NVML-only plugin on Tegra, which no runtime gives NVML."""
    return runtime_requested(ctx, seen) or nvml_only_failure(ctx, seen) is not None


def _trace_sources(ctx: NodeContext, m: Match, failing: Collection[str]) -> list[str]:
    """Components whose pods are read for a traced signature: the failing ones, and for a
    ``while_running`` signature also the running ones."""
    on_node = ctx.facts.pods_by_node.get(ctx.name, {})
    candidates = dict.fromkeys([*failing, *(on_node if m.while_running else ())])
    return [c for c in candidates if "*" in m.seen_in or c in m.seen_in]


def cluster_event_findings(facts: ClusterFacts, kb: KnowledgeBase, component: str) -> list[Finding]:
    """A cluster component's event signatures in the events of the stack's DaemonSets.

    The DaemonSet controller reports why it could not create an operand pod (pod
    security refusal, quota) on the DaemonSet itself, not on a pod that never existed.
    Only the DaemonSets of the component's own operands speak for it (their component is
    ``deployed_by`` it, or its chart put them in its own namespace, as the GPU Operator's
    NFD subchart): a logging agent's DaemonSet refused by pod security is its owner's.
    """
    matchers = kb.matchers(component, "event")
    if not matchers:
        return []
    by_id = facts.catalog.by_id
    home = {sp.pod.metadata.namespace for sp in facts.cluster_side.get(component, ())}
    groups = (
        (f"daemonset {ds.metadata.namespace}/{ds.metadata.name}", {"namespace": ds.metadata.namespace},
         facts.events_for("DaemonSet", ds.metadata.namespace, ds.metadata.name))
        for cid, sets in facts.daemonsets.items()
        for ds in sets
        if (cid in by_id and by_id[cid].deployed_by == component) or ds.metadata.namespace in home
    )
    return list(_scan_events(component, groups, matchers))


def _runtime_served(ctx: NodeContext, component: str) -> bool:
    """Whether a pod's runtime class can decide that it meets the component: the NVIDIA
    runtime (the container toolkit) and what it hands a container (the driver below it). A
    host's NIC, its links and their VFs are the same for a pod with or without one."""
    catalog = ctx.facts.catalog
    return component == _TOOLKIT or component in catalog.dependencies(_TOOLKIT)


def _own_spec_at_fault(ctx: NodeContext, component: str) -> bool:
    """The component's pod asks for no runtime class while running neighbours that ask
    for one work: the layer below serves pods that request it, so this pod's spec is
    the fault, not the layer below."""
    pods = ctx.stack_pods(component)
    if not pods or any(sp.pod.spec.runtime_class_name for sp in pods):
        return False
    return any(
        sp.pod.spec.runtime_class_name and sp.pod.status.phase == "Running"
        for comp, others in ctx.facts.pods_by_node.get(ctx.name, {}).items()
        if comp != component
        for sp in others
    )


def _logs(ctx: NodeContext, component: str, matchers: Matchers) -> Iterator[Finding]:
    for sp in ctx.stack_pods(component):
        for log in ctx.logs_of(sp.pod):
            if not log.previous and _succeeded(sp.pod, log.container):
                continue  # what it said before it succeeded: failures it retried past
            yield from log_findings(component, log, matchers, fits=ctx.kb.fits)
    decisive = [(c, m) for c, m in matchers if m.while_running]
    if decisive:
        # A cluster-wide pod of the component (nfd-master) speaks of every node; only its
        # decisive lines count here, never a stray line that would merely refine.
        for sp in ctx.cluster_side_pods(component):
            for log in ctx.logs_of(sp.pod):
                yield from _cluster_side_findings(component, log, decisive)


def _succeeded(pod: Pod, container: str) -> bool:
    """The container ran to completion with exit 0 (an init container's check that passed,
    the validator's driver validation after its retries): the failures its log tells of
    are ones it got past, not the component's state."""
    for cs in (*pod.status.init_container_statuses, *pod.status.container_statuses):
        if cs.name == container:
            ended = cs.state.terminated
            return ended is not None and ended.exit_code == 0 and ended.reason in ("Completed", "")
    return False


def _cluster_side_findings(component: str, log: LogFile, decisive: Matchers) -> tuple[Finding, ...]:
    """What a cluster-wide pod's log says is the same for every node: read once, not once
    per node (a fleet of 1,000 nodes would search nfd-master's log 1,000 times). The memo
    lives as long as the log does (the bundle's facts)."""
    memo = _SHARED.setdefault(log, {})
    key = (component, tuple((c.code, c.status, c.specificity, c.standalone, m) for c, m in decisive))
    if key not in memo:
        memo[key] = tuple(log_findings(component, log, decisive, decisive_only=True))
    return memo[key]


_SHARED: WeakKeyDictionary[LogFile, dict[object, tuple[Finding, ...]]] = WeakKeyDictionary()


def log_findings(component: str, log: LogFile, matchers: Matchers, *,
                 decisive_only: bool = False,
                 fits: Callable[[Cause, str], bool] | None = None) -> Iterator[Finding]:
    """Signatures in one container log. ``while_running`` ones in a current log prove a
    problem on their own (``decisive_hit``); unless ``decisive_only``, the others (and
    those in a previous log) are found as usual: they refine a component failing anyway.
    ``fits`` (``KnowledgeBase.fits``) drops a refining hit on a line of a more specific
    class than its cause's own example: that line's class says more than the cause does."""
    scoped = [(c, m) for c, m in matchers if not m.containers or log.container in m.containers]
    ctx_vals = {"namespace": log.namespace, "pod": log.pod, "container": log.container}
    decided: set[str] = set()
    for cause, m in scoped:
        hit = decisive_hit(log.lines, cause, m) if m.while_running and not log.previous else None
        if hit is not None and cause.code not in decided:
            decided.add(cause.code)
            where = f"{log.path}:{hit.line_no}"
            yield _finding(component, hit, where, {**ctx_vals, "standalone": "true"})
    if decisive_only:
        return
    # A decisive signature said its word on a current log: cancelled by a later line, it
    # refines nothing either (a standalone cause would otherwise ignore its ``unless``).
    rest = [(c, m) for c, m in scoped
            if c.code not in decided and not (m.while_running and not log.previous)]
    for hit in scan_split_lines(log.lines, rest, reverse=True):
        if fits is not None and not fits(hit.cause, message_of(hit.line)):
            continue
        line_no = len(log.lines) - hit.line_no + 1
        yield _finding(component, hit, f"{log.path}:{line_no}", ctx_vals)


def cluster_log_findings(facts: ClusterFacts, kb: KnowledgeBase, component: str) -> list[Finding]:
    """A cluster component's log signatures in its own pods' logs (the operator's
    controller log): a decisive line there is a cluster root cause while the pod runs."""
    matchers = kb.matchers(component, "log")
    return [
        finding
        for sp in facts.cluster_pods.get(component, [])
        for log in facts.cluster_logs.get(sp.key, ())
        for finding in log_findings(component, log, matchers)
    ]


def _events(ctx: NodeContext, component: str, matchers: Matchers) -> Iterator[Finding]:
    anywhere = [(c, m) for c, m in matchers if not m.own]
    own = [(c, m) for c, m in matchers if m.own]
    if anywhere:
        yield from _scan_events(component, _answered_by(ctx, component, _node_event_groups(ctx)), anywhere)
    if own:
        yield from _own_events(ctx, component, own)


def _answered_by(ctx: NodeContext, component: str, groups: list[EventGroup]) -> list[EventGroup]:
    """``groups`` without the refusals at admission where a plugin that replaces ``component``
    runs on the node: the kubelet's UnexpectedAdmissionError relays the answer of the plugin
    that serves the pod's resource (the device manager calls its Allocate), which is the
    replacer there (HAMi's plugin, Project-HAMi/HAMi#71), so NVIDIA's plugin's signatures do
    not speak for it; the admission check names the plugin that answered (checks.admission)."""
    catalog = ctx.facts.catalog
    own = catalog.get(component).advertises
    if not any(ctx.stack_pods(c.id) and _shares(own, c.advertises) for c in catalog.replacers(component)):
        return groups
    return [(source, vals, [ev for ev in events if not refused_at_admission(ev.reason)])
            for source, vals, events in groups]


def _shares(ours: Sequence[str], theirs: Sequence[str]) -> bool:
    """Whether two components advertise a resource in common (their ``advertises`` globs meet):
    a replacer that serves claims instead (the DRA driver) answers no Allocate for ours."""
    return any(fnmatchcase(a, b) or fnmatchcase(b, a) for a in ours for b in theirs)


def _own_events(ctx: NodeContext, component: str, matchers: Matchers) -> Iterator[Finding]:
    if not _stack_events(ctx):
        return
    groups = (_pod_group(ctx, sp.pod) for sp in ctx.stack_pods(component) if ctx.events_for_pod(sp.pod))
    yield from _scan_events(component, groups, matchers)


def _scan_events(
    component: str, groups: Iterable[tuple[str, dict[str, str], list[Event]]], matchers: Matchers
) -> Iterator[Finding]:
    for source, ctx_vals, events in groups:
        for ev in events:
            scoped = [(c, m) for c, m in matchers if not m.reasons or ev.reason in m.reasons]
            for hit in scan_lines([ev.message], scoped):
                where = f"event {source} reason={ev.reason} count={ev.count or 1}"
                yield _finding(component, hit, where, ctx_vals)


EventGroup = tuple[str, dict[str, str], list[Event]]


def _stack_events(ctx: NodeContext) -> bool:
    """Whether any stack pod on the node has events (most nodes: none), found once per node."""
    found = ctx.memo.get("stack_events")
    if found is None:
        on_node = ctx.facts.pods_by_node.get(ctx.name, {}).values()
        found = ctx.memo["stack_events"] = any(ctx.events_for_pod(sp.pod) for pods in on_node for sp in pods)
    return bool(found)


def _node_event_groups(ctx: NodeContext) -> list[EventGroup]:
    """``_event_groups``, gathered once per node: every component with event signatures
    reads the same groups."""
    groups = ctx.memo.get("event_groups")
    if groups is None:
        groups = ctx.memo["event_groups"] = list(_event_groups(ctx))
    return groups  # type: ignore[return-value]


def _event_groups(ctx: NodeContext) -> Iterator[tuple[str, dict[str, str], list[Event]]]:
    # Pods without events are passed over before their group is built: most have none,
    # and this runs for every component with event signatures on every node.
    yield f"node/{ctx.name}", {}, ctx.node_events()
    for pods in ctx.facts.pods_by_node.get(ctx.name, {}).values():
        for sp in pods:
            if ctx.events_for_pod(sp.pod):
                yield _pod_group(ctx, sp.pod)
    for pod in ctx.facts.workloads_by_node.get(ctx.name, ()):
        if not ctx.events_for_pod(pod):
            continue
        # A GPU workload that cannot start shows the runtime's failure in its own events;
        # the stuck workload is the failure state its signature explains.
        source, ctx_vals, events = _pod_group(ctx, pod)
        # A refusal of a resource the pod asks none of is the kubelet's alone (admission.py).
        events = [ev for ev in events
                  if not (refused_at_admission(ev.reason) and asks_none_of(pod, ev.message))]
        if workload_stuck(pod):
            ctx_vals = {**ctx_vals, "standalone": "true"}
        yield source, ctx_vals, events


def _pod_group(ctx: NodeContext, pod: Pod) -> tuple[str, dict[str, str], list[Event]]:
    meta = pod.metadata
    events = ctx.events_for_pod(pod)
    if _runs_ready(pod):
        events = [ev for ev in events if ev.reason not in _SANDBOX_EVENTS]
    return f"pod {meta.namespace}/{meta.name}", _pod_ctx(pod, ""), events


#: Events about creating a pod's sandbox: a pod that runs has one, so they are its past (the
#: device plugin's sandbox refused while the toolkit was still installing the nvidia runtime,
#: NVIDIA/gpu-operator#413: expected until the toolkit is up, gone after).
_SANDBOX_EVENTS = frozenset({"FailedCreatePodSandBox"})


def _runs_ready(pod: Pod) -> bool:
    """The pod runs with every container ready: whatever kept its sandbox from being created
    was overcome since (an event names the pod, not the sandbox attempt)."""
    statuses = pod.status.container_statuses
    return pod.status.phase == "Running" and bool(statuses) and all(cs.ready for cs in statuses)


def _waiting(ctx: NodeContext, component: str, matchers: Matchers) -> Iterator[Finding]:
    for sp in ctx.stack_pods(component):
        statuses = (*sp.pod.status.init_container_statuses, *sp.pod.status.container_statuses)
        for cs in statuses:
            lines = [*_state_lines(cs.state), *_state_lines(cs.last_state)]
            if not lines:  # a running container that never stopped
                continue
            for hit in scan_lines(lines, matchers):
                where = f"pod {sp.pod.metadata.namespace}/{sp.pod.metadata.name} status[{cs.name}]"
                yield _finding(component, hit, where, _pod_ctx(sp.pod, cs.name))


def _state_lines(state: ContainerState) -> Iterator[str]:
    if state.waiting:
        yield f"{state.waiting.reason}: {state.waiting.message}"
    if state.terminated:
        yield f"{state.terminated.reason}: {state.terminated.message} (exit {state.terminated.exit_code})"


def _node_text(kind: str) -> Scanner:
    source: MatchSource = "node_cmd" if kind == "cmd" else "node_file"

    def scan(ctx: NodeContext, component: str, matchers: Matchers) -> Iterator[Finding]:
        """The hits ``scan_split_lines`` finds, from the lines where any signature of the
        file may match (searched once per node for every component: ``text_candidates``)."""
        for name, group in _by_name(matchers).items():
            found = ctx.text_candidates(kind, name, ctx.kb.node_text_patterns[(source, name)])
            if not found:
                continue
            split = ctx.text_lines(kind, name)
            assert split is not None
            lines = split[0]
            for hit in first_hits(((i + 1, lines[i]) for i in found), group):
                where = f"{ctx.obs.path_of(kind, name)}:{hit.line_no}"
                gpu = bus_id_in_line(hit.line) or bus_id_above(lines, hit.line_no)
                yield _finding(component, hit, where, gpu_values(gpu, ctx.gpu_indices))

    return scan


def _by_name(matchers: Matchers) -> dict[str, Matchers]:
    """Node-file signatures by the file they search (the same for every node)."""
    key = id(matchers)
    known = _BY_NAME.get(key)
    if known is None or known[0] is not matchers:
        by_name: dict[str, Matchers] = {}
        for cause, m in matchers:
            by_name.setdefault((m.name or "").lstrip("/"), []).append((cause, m))
        known = _BY_NAME[key] = (matchers, by_name)
    return known[1]


#: Grouped matchers by the identity of the knowledge base's list (kept alive by the entry).
_BY_NAME: dict[int, tuple[Matchers, dict[str, Matchers]]] = {}


def _conditions(ctx: NodeContext, component: str, matchers: Matchers) -> Iterator[Finding]:
    node = ctx.node
    if node is None:
        return
    for hit in scan_lines(_condition_lines(node), matchers):
        yield _finding(component, hit, f"node/{ctx.name} status.conditions", {})


def _condition_lines(node: Node) -> list[str]:
    return [f"{c.type}={c.status} {c.reason} {c.message}" for c in node.status.conditions]


def _finding(component: str, hit: TextHit, where: str, context: dict[str, str]) -> Finding:
    extra = {"standalone": "true"} if hit.cause.standalone else {}
    return Finding(
        component,
        hit.cause.severity,
        hit.cause.code,
        (Evidence(where, clipped(hit.line)),),
        {**context, **extra, "signature": "true"},
        hit.cause.specificity,
    )


def _pod_ctx(pod: Pod, container: str) -> dict[str, str]:
    meta = pod.metadata
    return {"namespace": meta.namespace, "pod": meta.name, "container": container}


_SCANNERS: dict[MatchSource, Scanner] = {
    "log": _logs,
    "event": _events,
    "waiting": _waiting,
    "node_cmd": _node_text("cmd"),
    "node_file": _node_text("files"),
    "node_condition": _conditions,
}
