"""What a validation check sees: cluster facts, options, and shared derived views.

Derived views (the stack diagnosis, every pod of the cluster, control-plane
nodes) are computed on first use and cached, so checks stay pure functions of
this context and nothing is parsed twice.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TypeVar, cast

import msgspec

from gpunode.bundle.kube import Node, Pod
from gpunode.errors import BundleError
from gpunode.facts import NETWORK_AGENT_IMAGES, NETWORK_AGENT_OWNERS, ClusterFacts, NodeObservations
from gpunode.limits import MAX_DOC_BYTES
from gpunode.model import Report

CONTROL_PLANE_ROLES = ("node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master")
T = TypeVar("T")
#: How a node's files are read (gpunode.diagnose.ObservationReader).
ObservationReader = Callable[[ClusterFacts, str], NodeObservations]
#: How the stack diagnosis is made: gpunode.diagnose.diagnose, handed in by the runner, so
#: the checks' context sits below the diagnosis rather than above it.
Diagnoser = Callable[[ClusterFacts, ObservationReader], Report]


# Pods outside the GPU stack that checks read: CNI agents (see checks/network.py).
WANTED_OWNERS = NETWORK_AGENT_OWNERS
WANTED_IMAGES = NETWORK_AGENT_IMAGES


@dataclass(frozen=True)
class LiveFacts:
    """What only a live run can know; ``None`` in the context for a bundle run."""

    api_url: str
    answered: bool
    detail: str
    dcgm_fresh: dict[str, tuple[bool, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class ValidationOptions:
    """Command-line expectations that sharpen the checks."""

    expect_gpus: int | None = None
    rdma_rate_gbps: float | None = None
    live: LiveFacts | None = None


@dataclass
class ValidationContext:
    """Read-only inputs of every check."""

    facts: ClusterFacts
    read_observations: ObservationReader
    diagnoser: Diagnoser
    options: ValidationOptions = field(default_factory=ValidationOptions)
    #: False: the diagnosis is read for its verdicts and root causes only (the stack
    #: check), not shown; its node reports then come without their components.
    full_diagnosis: bool = True
    _memo: dict[str, object] = field(default_factory=dict, repr=False)

    @cached_property
    def diagnosis(self) -> Report:
        """The lead's bottom-up stack diagnosis of every GPU node (computed once)."""
        return self.diagnoser(self.facts, self.read_observations)

    @property
    def all_pods(self) -> tuple[Pod, ...]:
        """Pods outside the GPU stack that checks need (CNI agents), kept when the pod
        list was indexed (a 100,000-pod list is decoded once, for both views)."""
        return self.facts.network_pods

    def memo(self, key: str, compute: Callable[[], T]) -> T:
        """A value derived once per run and shared by every node (e.g. cluster-wide sets)."""
        if key not in self._memo:
            self._memo[key] = compute()
        return cast(T, self._memo[key])

    @cached_property
    def pods_by_node(self) -> dict[str, list[Pod]]:
        out: dict[str, list[Pod]] = defaultdict(list)
        for pod in self.all_pods:
            out[pod.spec.node_name].append(pod)
        return dict(out)

    @cached_property
    def binding_modes(self) -> dict[str, str]:
        """StorageClass name → volumeBindingMode (not kept by the slim structs)."""
        where = f"{self.facts.source.location}/cluster/storageclasses.json"
        data = self.facts.source.read("cluster/storageclasses.json", MAX_DOC_BYTES + 1)
        if data is not None and len(data) > MAX_DOC_BYTES:  # read whole, untyped: bounded
            raise BundleError(f"{where}: larger than {MAX_DOC_BYTES >> 20} MiB (the limit for this file)")
        try:
            raw = msgspec.json.decode(data) if data is not None else {}
        except msgspec.DecodeError as exc:
            raise BundleError(f"{where}: {exc}") from exc
        except RecursionError:
            raise BundleError(f"{where}: nested too deeply") from None
        items = raw.get("items", []) if isinstance(raw, dict) else []
        return {
            str(i.get("metadata", {}).get("name", "")): str(i.get("volumeBindingMode", "Immediate"))
            for i in items
            if isinstance(i, dict)
        }

    def binding_mode(self, storage_class: str) -> str:
        return self.binding_modes.get(storage_class, "Immediate")

    @cached_property
    def gpu_nodes(self) -> list[str]:
        return self.facts.gpu_nodes()

    @cached_property
    def control_plane(self) -> list[Node]:
        return [n for n in self.facts.nodes.values() if is_control_plane(n)]

    def node(self, name: str) -> Node | None:
        return self.facts.nodes.get(name)


def is_control_plane(node: Node) -> bool:
    labels = node.metadata.labels
    return any(role in labels for role in CONTROL_PLANE_ROLES)


def condition_status(node: Node, kind: str) -> str | None:
    """``True``/``False``/``Unknown`` of a node condition, None when not reported."""
    cond = next((c for c in node.status.conditions if c.type == kind), None)
    return cond.status if cond else None


def quantity(value: str | None) -> int:
    """Integer resource quantities (GPU, RDMA counts); anything else counts as 0."""
    try:
        return int(value or 0)
    except ValueError:
        return 0
