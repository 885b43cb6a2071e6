"""GPU workloads in trouble: which user pods that asked for GPUs were hit, and what they said.

A workload's own error line (an admission the kubelet refused, "Failed to initialize
NVML: Unknown Error", a CUDA init failure) is already a finding of the stack component it
names (``checks.decisive.workload_findings``). This lists every troubled GPU workload of
the nodes reported, with its state, its own error line and the stack root cause it leads
down to, so the report says which workloads were hit, also when no stack cause is found.

A workload *fails* when the kubelet refused or ended it (phase Failed), a container cannot
be created, pulled or kept running, a container's last run ended in an error less than an
hour before collection, or it has not started and a warning event other than the
scheduler's says why. One that only waits to be scheduled (the cluster is full, a taint or
a selector keeps it off) or that recovered long ago is listed but does not fail: a busy
healthy cluster always has pods waiting for GPUs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime

from gpunode.bundle.kube import Event, Pod
from gpunode.checks.base import MESSAGE
from gpunode.checks.decisive import pod_texts, workload_names
from gpunode.checks.pod_env import own_request
from gpunode.checks.pods import RECENT_RESTART, collection_time, display_state, pod_problem
from gpunode.decisive import decisive_line, shown
from gpunode.facts import ClusterFacts
from gpunode.kb import KnowledgeBase
from gpunode.model import Finding, NodeReport, Status, WorkloadIssue
from gpunode.podenv import nvidia_env

#: Causes of pod_problem that only say the pod has not started yet.
_NOT_STARTED = frozenset({"pod_pending", "container_create_failed"})
#: Container waits that are a pod's normal way to start (no error in them by themselves).
_STARTING = frozenset({"ContainerCreating", "PodInitializing", ""})
#: Causes of pod_problem that are not a failure of the workload (a readiness probe it sets).
_NOT_FAILING = frozenset({"pod_not_ready"})
#: Event reasons that say a pod waits to be placed, not that it failed.
_SCHEDULING = frozenset({"FailedScheduling", "Unschedulable", "NotTriggerScaleUp", "TriggeredScaleUp",
                         "Preempted"})


def workload_issues(facts: ClusterFacts, kb: KnowledgeBase,
                    nodes: Sequence[NodeReport]) -> tuple[WorkloadIssue, ...]:
    """Troubled GPU workloads on the reported nodes, in node order, failing ones first per node."""
    troubled = facts.troubled_workloads_by_node
    logged = facts.logged_workloads_by_node
    if not troubled and not logged:
        return ()
    now = collection_time(facts.manifest.collected_at)
    out: list[WorkloadIssue] = []
    for node in nodes:
        pods = troubled.get(node.name, [])
        issues = [_issue(facts, kb, node, pod, now) for pod in pods]
        fine = [p for p in logged.get(node.name, ()) if p not in pods]  # troubled ones are listed
        issues += _hit_in_logs(node, fine)
        out.extend(sorted(issues, key=lambda w: (not w.failing, w.namespace, w.name)))
    return tuple(out)


def _hit_in_logs(node: NodeReport, pods: Sequence[Pod]) -> Iterator[WorkloadIssue]:
    """Running GPU workloads whose own log holds the line of one of the node's root causes
    (checks.workload_logs: NVML lost its devices, NCCL fell back to sockets): hit by the
    stack though their pod shows no trouble."""
    by_key = {(p.metadata.namespace, p.metadata.name): p for p in pods}
    for rc in node.root_causes:
        where = rc.decisive.source if rc.decisive is not None else next(
            (e.source for e in rc.evidence if e.source.startswith("logs/")), "")
        parts = where.split("/")
        pod = by_key.pop((parts[1], parts[2]), None) if len(parts) > 3 and parts[0] == "logs" else None
        if pod is None:
            continue
        line = rc.decisive.message if rc.decisive is not None else next(
            (e.excerpt for e in rc.evidence if e.source == where), None)
        yield WorkloadIssue(
            node=node.name, namespace=pod.metadata.namespace, name=pod.metadata.name,
            state=display_state(pod), failing=rc.status == Status.FAILED,
            message=shown(line) if line else None, source=where,
            line_class=rc.decisive.line_class if rc.decisive is not None else None,
            component=rc.component, root_cause=rc.component)


def _issue(facts: ClusterFacts, kb: KnowledgeBase, node: NodeReport, pod: Pod,
           now: datetime | None) -> WorkloadIssue:
    meta = pod.metadata
    events = facts.events_for("Pod", meta.namespace, meta.name)
    found = _error_line(facts, kb, pod, events)
    component = found[3] if found else None
    if found and _leads_to(node, component) is None and _own_request(pod, found[2]):
        component = None  # the pod's own NVIDIA env explains its line: it names no stack component
    return WorkloadIssue(
        node=node.name,
        namespace=meta.namespace,
        name=meta.name,
        state=display_state(pod),
        failing=failing(pod, events, now),
        message=shown(found[2]) if found else None,
        source=found[0] if found else None,
        line_class=kb.class_of(found[2]) if found else None,
        component=component,
        root_cause=_leads_to(node, component),
    )


def failing(pod: Pod, events: Sequence[Event], now: datetime | None) -> bool:
    """Whether a troubled workload fails (module docstring), rather than waits or recovered."""
    if pod.status.phase == "Failed" or _ended_in_error_lately(pod, now):
        return True
    problem = pod_problem(pod, "workload", now)
    if problem is None or problem.cause in _NOT_FAILING:
        return False
    if problem.cause in _NOT_STARTED and _only_starting(pod):
        return any(ev.type == "Warning" and ev.reason not in _SCHEDULING for ev in events)
    return True


def _ended_in_error_lately(pod: Pod, now: datetime | None) -> bool:
    """A container whose run ended in an error less than ``RECENT_RESTART`` before collection."""
    if now is None:
        return False
    for cs in pod.status.container_statuses:
        for ended in (cs.state.terminated, cs.last_state.terminated):
            if ended is None or ended.exit_code == 0:
                continue
            finished = collection_time(ended.finished_at)
            if finished is not None and now - finished <= RECENT_RESTART:
                return True
    return False


def _only_starting(pod: Pod) -> bool:
    """No container waits for a reason other than being created."""
    statuses = (*pod.status.init_container_statuses, *pod.status.container_statuses)
    return all(cs.state.waiting is None or cs.state.waiting.reason in _STARTING for cs in statuses)


def _error_line(facts: ClusterFacts, kb: KnowledgeBase, pod: Pod,
                events: Sequence[Event]) -> tuple[str, str, str, str | None] | None:
    """The workload's own error line: where, the line, its message, and the stack component
    it names (``checks.decisive.workload_names``)."""
    for text in pod_texts(pod, (), events, ""):
        found = decisive_line(text.lines, kb.class_of)
        if found is not None:
            where = f"{text.where}:{found.line_no}" if text.numbered else text.where
            return where, found.line, found.message, workload_names(facts.catalog, text, found.line)
    return None


def _own_request(pod: Pod, message: str) -> bool:
    """Whether the pod's only container's NVIDIA env explains its error line
    (``checks.pod_env``); asked only where the node has no root cause the line leads to, so a
    line the node's diagnosis kept as the stack's (CDI injecting by default) keeps its component."""
    if len(pod.spec.containers) != 1:
        return False
    finding = Finding("", Status.FAILED, "", (), {MESSAGE: message})
    return own_request(nvidia_env(pod.spec.containers[0]), finding, lambda: False)


def _leads_to(node: NodeReport, component: str | None) -> str | None:
    """The node's root cause (component) the workload's error leads down to: the named
    component itself when it is a root cause, else the root cause it is blocked by."""
    if component is None or not node.root_causes:
        return None
    roots = {rc.component for rc in node.root_causes}
    if component in roots:
        return component
    for comp in node.components:
        if comp.component == component:
            return next((b for b in comp.blocked_by if b in roots), None)
    return None


def failing_nodes(issues: Sequence[WorkloadIssue]) -> Iterator[str]:
    """Nodes with a failing GPU workload, each once, in report order."""
    return iter(dict.fromkeys(w.node for w in issues if w.failing))
