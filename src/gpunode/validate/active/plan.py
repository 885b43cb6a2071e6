"""Which GPU nodes the active checks exercise, and how (pure, from the passive facts)."""

from __future__ import annotations

from dataclasses import dataclass

from gpunode.bundle.kube import Node
from gpunode.facts import ClusterFacts
from gpunode.validate.active.manifests import HOSTNAME_LABEL, Json, Placement
from gpunode.validate.context import condition_status, quantity

GPU = "nvidia.com/gpu"
RUNTIME_CLASS = "nvidia"


@dataclass(frozen=True)
class Target:
    """One GPU node to test; ``skip_reason`` is set when it cannot be tested now."""

    node: str
    placement: Placement
    gpus: int
    rdma: tuple[str, ...] = ()
    skip_reason: str = ""


def plan_targets(facts: ClusterFacts, expect_gpus: int | None = None) -> list[Target]:
    """Every GPU node known to the API, with its GPU count, tolerations and RDMA resources."""
    runtime_class = (
        RUNTIME_CLASS if any(rc.metadata.name == RUNTIME_CLASS for rc in facts.runtime_classes) else None
    )
    return [
        _target(node, runtime_class, expect_gpus)
        for name in facts.gpu_nodes()
        if (node := facts.nodes.get(name)) is not None
    ]


def _target(node: Node, runtime_class: str | None, expect_gpus: int | None) -> Target:
    name = node.metadata.name
    placement = Placement(
        node=name,
        hostname=node.metadata.labels.get(HOSTNAME_LABEL, name),
        tolerations=tuple(_tolerations(node)),
        runtime_class=runtime_class,
    )
    gpus = expect_gpus or node_gpus(node)
    rdma = tuple(
        sorted(k for k, v in node.status.allocatable.items() if k.startswith("rdma/") and quantity(v) > 0)
    )
    return Target(name, placement, gpus, rdma, _skip_reason(node, gpus))


def node_gpus(node: Node) -> int:
    """All of the node's GPUs: the GFD count or capacity, else what is allocatable."""
    labelled = quantity(node.metadata.labels.get("nvidia.com/gpu.count"))
    capacity = quantity(node.status.capacity.get(GPU))
    return max(labelled, capacity) or quantity(node.status.allocatable.get(GPU))


def _tolerations(node: Node) -> list[Json]:
    """Tolerate the node's own (administrator) taints, never cordon or condition taints."""
    return [
        {"key": t.key, "operator": "Exists", "effect": t.effect}
        for t in node.spec.taints
        if t.effect in ("NoSchedule", "NoExecute") and not t.key.startswith("node.kubernetes.io/")
    ]


def _skip_reason(node: Node, gpus: int) -> str:
    if condition_status(node, "Ready") != "True":
        return "node not Ready"
    if node.spec.unschedulable:
        return "node cordoned"
    if gpus <= 0:
        return "no GPU count known for the node"
    return ""
