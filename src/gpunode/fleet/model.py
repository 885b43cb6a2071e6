"""The fleet section of report JSON v1 (``fleet``): outliers, shared factors, wedges and
NVLink domains;
and the output of ``gpunode diff -o json`` (``DiffReport``).

Imports nothing of gpunode, so ``gpunode.model`` holds it as a field of the report.
"""

from __future__ import annotations

import msgspec


class Outlier(msgspec.Struct, frozen=True):
    """A node that differs from its peers (the nodes that should be like it) without any
    root cause of its own: fewer GPUs, missing labels, other versions, a narrower link."""

    node: str
    #: the peer class, as a person reads it ("NVIDIA-H100-80GB-HBM3, pool gpu-a")
    peer_class: str = msgspec.field(name="class")
    #: what differs, as a stable id (``gpus.nvml``, ``version.driver``, ``labels.gfd``, …)
    aspect: str
    #: what differs, in words ("fewer GPUs in NVML")
    what: str
    #: the value most of its peers have, and how many of the class have it
    peers_value: str
    value: str
    peers: int
    class_size: int


class Correlation(msgspec.Struct, frozen=True):
    """A factor the nodes failing with one cause share and the others do not:
    "kernel 5.15.0-1071: 40 of 40 nodes on it fail kernel_headers_missing; 0 of 960 others"."""

    factor: str
    value: str
    cause: str
    #: nodes with this value that fail with the cause, and all nodes with this value
    failing_with: int
    nodes_with: int
    #: nodes with another (known) value that fail with the cause, and all of those
    failing_without: int
    nodes_without: int
    #: how exactly the value's nodes are the failing ones (1.0: the same nodes)
    score: float
    text: str


class Wedge(msgspec.Struct, frozen=True):
    """A controller that stopped moving: a state held longer than its transition takes."""

    #: ``driver_upgrade_failed``, ``driver_upgrade_stuck``, ``mig_config_failed``,
    #: ``mig_config_stuck``, ``paused_for_mig_change``, ``pod_stuck_terminating``,
    #: ``validation_marker_stale``, ``labels_stale``
    kind: str
    node: str
    #: the object that holds the state (``node/gpu-wk-01``, ``pod/gpu-operator/nvidia-…``)
    object: str
    #: the state it holds (a label's value, ``Terminating``)
    state: str
    #: when it entered the state, where known; ``age`` as a person reads it ("3d 4h",
    #: "over 2h" when only a lower bound is known; "" unknown)
    since: str | None
    age: str
    age_seconds: int | None
    #: the controller that should move it on
    owner: str
    text: str
    #: the commands that unwedge it
    unwedge: tuple[str, ...] = ()


class DomainFlag(msgspec.Struct, frozen=True):
    """What is wrong with one NVLink domain, judged across its nodes."""

    #: ``node_outside_domain``, ``domain_short``, ``links_one_sided``
    kind: str
    #: the node it is about (None for ``domain_short``: the domain's nodes are listed)
    node: str | None
    text: str


class Domain(msgspec.Struct, frozen=True):
    """One NVLink domain (an NVL rack or a partition of it) and the nodes in it."""

    #: ``<ClusterUUID>.<CliqueId>``, as GPU Feature Discovery's ``nvidia.com/gpu.clique``
    domain: str
    cluster_uuid: str
    clique: str
    #: the GPU product of its nodes, where known
    product: str | None
    nodes: tuple[str, ...]
    #: how many nodes the domains of its product have (the largest, held by at least half of
    #: the others); None for a product's only domain
    usual_nodes: int | None
    flags: tuple[DomainFlag, ...] = ()


class FleetAnalysis(msgspec.Struct, frozen=True):
    """Patterns across the reported nodes (gpunode.fleet); empty on a uniform, healthy fleet."""

    outliers: tuple[Outlier, ...] = ()
    correlations: tuple[Correlation, ...] = ()
    wedges: tuple[Wedge, ...] = ()
    #: NVLink domains and their nodes; left out of the JSON when no node is in one
    domains: tuple[Domain, ...] | msgspec.UnsetType = msgspec.UNSET

    @property
    def nvlink_domains(self) -> tuple[Domain, ...]:
        """``domains``, empty where no node is in an NVLink domain."""
        return () if isinstance(self.domains, msgspec.UnsetType) else self.domains


# --- gpunode diff -o json (gpunode.fleet.diff) ------------------------------------------


class Change(msgspec.Struct, frozen=True):
    """One facet going from ``before`` to ``after`` on ``nodes`` (all of them for a cluster
    setting), with how well it explains the nodes that began to fail."""

    what: str
    before: str
    after: str
    nodes: tuple[str, ...]
    #: ``input`` (versions, images, configs, user labels) or ``output`` (what a failure sets)
    kind: str
    #: failing-since-OLD nodes among ``nodes``, and the score (1.0: exactly those nodes)
    explains: int
    score: float


class RootCauseChange(msgspec.Struct, frozen=True):
    """A root cause that appeared in NEW (or was resolved since OLD), with its nodes."""

    component: str
    cause: str
    title: str
    nodes: tuple[str, ...]


class Side(msgspec.Struct, frozen=True):
    location: str
    collected_at: str | None
    gpu_nodes: int


class DiffReport(msgspec.Struct, frozen=True, kw_only=True):
    """``gpunode diff -o json`` (docs/report.schema.json ``$defs/DiffReport``)."""

    schema: str = "gpunode.diff/v1"
    old: Side
    new: Side
    #: nodes with a root cause in NEW that they did not have in OLD
    began_failing: tuple[str, ...]
    new_root_causes: tuple[RootCauseChange, ...]
    resolved_root_causes: tuple[RootCauseChange, ...]
    #: every change, best explanation of the new failures first
    changes: tuple[Change, ...]

    @property
    def has_new_failures(self) -> bool:
        return bool(self.new_root_causes)


class NodeHistoryChanges(msgspec.Struct, frozen=True):
    """What one node's agent history says changed since the time ``--since`` asked for."""

    node: str
    #: ``changed``, ``unchanged``, or ``no_history`` (no agent history for this node: not
    #: collected, no agent, or its file did not read; ``note`` says which)
    status: str
    #: one line per change, oldest first (verdict, root causes, Xids, counters, restarts)
    changes: tuple[str, ...] = ()
    #: the oldest state the history holds (RFC 3339); null without a history
    history_from: str | None = None
    note: str | None = None


class ChangesSince(msgspec.Struct, frozen=True):
    """``diagnose --since``: each reported node's changes since ``since`` (RFC 3339)."""

    since: str
    nodes: tuple[NodeHistoryChanges, ...]


class Trend(msgspec.Struct, frozen=True, omit_defaults=True):
    """One trend over an agent's history of its node (gpunode.fleet.history), e.g. Xid 79
    three times in 7 days; ``since``: the first time it was seen (RFC 3339)."""

    kind: str
    message: str
    count: int = 0
    since: str | None = None
    gpu: str | None = None
