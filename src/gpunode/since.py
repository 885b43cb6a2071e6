"""When a root cause started: the earliest timestamp the facts give for the failing component.

Used for the "since" column of the fleet summary. Only timestamps the API
recorded are used (events, container terminations, node conditions); when none
exists the answer is ``None`` and the report says nothing rather than guess.
"""

from __future__ import annotations

from collections.abc import Iterable

from gpunode.bundle.kube import ContainerStatus, Pod
from gpunode.checks.context import NodeContext

# Components judged from the node object rather than from pods of their own.
_NODE_LEVEL = frozenset({"kernel", "gpu-hardware", "container-runtime", "kubelet"})


def failing_since(ctx: NodeContext, component: str) -> str | None:
    """Earliest RFC 3339 time at which the component's trouble shows in the facts."""
    stamps = [*_pod_stamps(ctx, component)]
    if component in _NODE_LEVEL:
        stamps += _node_stamps(ctx)
    return min(stamps) if stamps else None


def _pod_stamps(ctx: NodeContext, component: str) -> Iterable[str]:
    for sp in ctx.stack_pods(component):
        if _healthy(sp.pod):
            continue
        for event in ctx.events_for_pod(sp.pod):
            if event.type == "Warning":
                stamp = event.first_timestamp or event.event_time or event.last_timestamp
                if stamp:
                    yield stamp
        for status in (*sp.pod.status.init_container_statuses, *sp.pod.status.container_statuses):
            yield from _termination(status)


def _termination(status: ContainerStatus) -> Iterable[str]:
    for state in (status.last_state, status.state):
        if state.terminated is not None and state.terminated.finished_at:
            yield state.terminated.finished_at


def _healthy(pod: Pod) -> bool:
    statuses = pod.status.container_statuses
    return pod.status.phase == "Running" and bool(statuses) and all(s.ready for s in statuses)


def _node_stamps(ctx: NodeContext) -> Iterable[str]:
    node = ctx.node
    if node is None:
        return
    for cond in node.status.conditions:
        bad = cond.status != "True" if cond.type == "Ready" else cond.status == "True"
        if bad and cond.last_transition_time:
            yield cond.last_transition_time
