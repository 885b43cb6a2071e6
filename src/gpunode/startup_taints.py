"""Startup taints and their owners, read from the Node alone (pure).

A startup taint is put on a node when it is created and removed by the agent it names once that
agent is ready there (checks.startup_taint says whose and why it matters). Kept apart from the
check so the pod and cluster checks that must not charge such a taint to the pods it keeps off
can ask about it without importing the check's reporting.
"""

from __future__ import annotations

from gpunode.bundle.kube import Node, Pod, Taint
from gpunode.relazy import lazy_compile

#: A CSI driver's startup taint: its domain holds a ``csi`` label, its name is agent-not-ready.
_CSI_STARTUP = lazy_compile(r"^(?:[a-z0-9-]+\.)*csi(?:\.[a-z0-9-]+)*/agent-not-ready$")
_BLOCKING = ("NoSchedule", "NoExecute")


def startup_taint_owner(key: str) -> str | None:
    """The component whose readiness a startup taint ``key`` stands for, or None."""
    return "csi-node" if _CSI_STARTUP.match(key) else None


def _ready(pod: Pod) -> bool:
    """The pod runs with every container ready."""
    statuses = pod.status.container_statuses
    return pod.status.phase == "Running" and bool(statuses) and all(
        c.ready and c.state.running is not None for c in statuses)


def left_startup_taint(node: Node, component: str, pods: list[Pod]) -> Taint | None:
    """The blocking startup taint of ``component`` still on ``node`` while a pod of it runs
    ready there, else None (no such taint, or the component not yet ready: the taint's job)."""
    if not pods or not all(_ready(p) for p in pods):
        return None
    return next((t for t in node.spec.taints
                 if t.effect in _BLOCKING and startup_taint_owner(t.key) == component), None)
