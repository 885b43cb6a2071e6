"""CRI-O operands that cannot start before the toolkit has run on the node.

The GPU Operator's operands ask for the ``nvidia`` RuntimeClass; on CRI-O its handler (or
the OCI hook) exists only once the toolkit's container has written it. Until then every
such container fails at creation (Init:CreateContainerError, Init:RunContainerError) and
the operands restart, recovering as soon as the toolkit runs (GPU Operator 25.10.0 known
issue). CRI-O's own words for a handler it has not been given are "failed to find runtime
handler nvidia from runtime list map[crun:... runc:...]" (NVIDIA/gpu-operator#2236,
#1298). The state of those pods is the toolkit's not having configured the runtime yet,
not each operand's.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpunode.bundle.kube import Pod
from gpunode.checks.base import check, problem
from gpunode.checks.context import NodeContext
from gpunode.checks.crio_hooks import NO_GPU_HOOK
from gpunode.model import Evidence, Finding

#: The kubelet's waiting reasons for a container the runtime could not create or start.
_NOT_CREATED = frozenset({"CreateContainerError", "RunContainerError", "CreateContainerConfigError"})


@check("container-toolkit", needs=("cluster/pods",))
def operands_before_toolkit(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """On a CRI-O node whose toolkit container has not started yet, pods asking for a
    RuntimeClass with an NVIDIA handler that wait in a creation error wait for the
    handler the toolkit writes. A toolkit that runs, or a node on another runtime, says
    nothing here (their creation errors have their own messages)."""
    if ctx.runtime_kind != "cri-o" or not _toolkit_pending(ctx, component):
        return
    nvidia = {rc.metadata.name for rc in ctx.facts.runtime_classes if "nvidia" in rc.handler}
    stuck = [
        (sp.pod, reason)
        for pods in ctx.facts.pods_by_node.get(ctx.name, {}).values()
        for sp in pods
        if sp.pod.spec.runtime_class_name in nvidia and (reason := _not_created(sp.pod))
    ]
    if not stuck:
        return
    seen = "; ".join(f"{p.metadata.name}: {reason}" for p, reason in stuck[:3])
    ev = Evidence(f"pods on {ctx.name} with runtimeClassName nvidia",
                  f"{seen} while the container toolkit has not started here")
    yield problem(component, NO_GPU_HOOK, ev, specificity=60)


def _toolkit_pending(ctx: NodeContext, component: str) -> bool:
    """The toolkit's pod here exists but its own containers have never run."""
    pods = ctx.stack_pods(component)
    return bool(pods) and all(
        cs.state.running is None and cs.state.terminated is None and cs.last_state.terminated is None
        for sp in pods
        for cs in sp.pod.status.container_statuses
    )


def _not_created(pod: Pod) -> str:
    for cs in (*pod.status.init_container_statuses, *pod.status.container_statuses):
        waiting = cs.state.waiting
        if waiting is not None and waiting.reason in _NOT_CREATED:
            return waiting.reason
    return ""
