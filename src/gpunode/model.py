"""The vocabulary shared by checks, diagnosis and reporters.

Everything here is plain data (msgspec Structs), so a report can be encoded to
JSON without a translation layer and compared in tests.
"""

from __future__ import annotations

from enum import StrEnum

import msgspec

from gpunode import __version__
from gpunode.fleet.model import ChangesSince, DiffReport, FleetAnalysis, Trend


class Status(StrEnum):
    """A component's health on one node; ``unknown`` when the facts are missing."""

    OK = "ok"
    DEGRADED = "degraded"
    FAILED = "failed"
    NOT_DEPLOYED = "not-deployed"
    UNKNOWN = "unknown"

    @property
    def is_problem(self) -> bool:
        """Failed and degraded components can be root causes; the rest cannot."""
        return self in PROBLEMS


#: Statuses that are problems (a set: asked about every finding of every node).
PROBLEMS = frozenset({Status.FAILED, Status.DEGRADED})


# Worst first: used to pick a component's status from several findings.
STATUS_RANK = {
    Status.FAILED: 0,
    Status.DEGRADED: 1,
    Status.UNKNOWN: 2,
    Status.OK: 3,
    Status.NOT_DEPLOYED: 4,
}

LAYER_NAMES = {
    0: "host",
    1: "hardware enablement",
    2: "container integration",
    3: "Kubernetes resource exposure",
    4: "observability & ops",
    5: "cluster control",
}


class Evidence(msgspec.Struct, frozen=True):
    """Where a finding came from: a bundle path or object field, and what it said; ``open``:
    what the user opens to see it (gpunode.report.openref: the bundle file, or live the
    kubectl command)."""

    source: str
    excerpt: str
    #: the bundle path that exists (offline) or the command that shows it (live); added in report v1
    open: str | None = None


class Finding(msgspec.Struct, frozen=True):
    """One judgement a check made about one component.

    ``specificity`` ranks competing findings for the same component: a matched
    log signature (high) beats a generic pod state (low).
    """

    component: str
    status: Status
    cause: str
    evidence: tuple[Evidence, ...] = ()
    context: dict[str, str] = {}
    specificity: int = 0


class DecisiveLine(msgspec.Struct, frozen=True):
    """The line that decides a root cause: what the component itself said, and where.

    ``line_class`` is the general class the line falls in (``error_*`` codes, also for
    a catalogued cause); ``state`` the pod or component state it explains, when the
    line replaced one (``crash_loop``, ``init_failed``, ``device_plugin_zero_gpus``)."""

    source: str
    line: str
    message: str
    line_class: str
    state: str | None = None


class RootCause(msgspec.Struct, frozen=True):
    """A failed or degraded component none of whose dependencies failed."""

    component: str
    layer: int
    cause: str
    title: str
    status: Status
    evidence: tuple[Evidence, ...]
    next_steps: tuple[str, ...]
    explanation: str = ""
    fix: str = ""
    unverified_below: tuple[str, ...] = ()
    supporting: tuple[str, ...] = ()
    since: str | None = None
    #: the component's own line that decides this cause (added in report v1)
    decisive: DecisiveLine | None = None


class PodRef(msgspec.Struct, frozen=True):
    """A pod as shown in the stack view."""

    namespace: str
    name: str
    phase: str
    ready: str
    restarts: int
    state: str


class ComponentReport(msgspec.Struct, frozen=True):
    """One component on one node (or cluster-wide), with why it has that status."""

    component: str
    layer: int
    title: str
    status: Status
    summary: str
    blocked_by: tuple[str, ...] = ()
    cause: str | None = None
    version: str | None = None
    pods: tuple[PodRef, ...] = ()


class MissingInput(msgspec.Struct, frozen=True):
    """Data a node's checks needed and did not have, why, and the components it left unknown."""

    data: str
    path: str
    reason: str
    components: tuple[str, ...] = ()


class NodeReport(msgspec.Struct, frozen=True):
    """The verdict for one GPU node."""

    name: str
    status: Status
    root_causes: tuple[RootCause, ...]
    components: tuple[ComponentReport, ...]
    roles: tuple[str, ...] = ()
    gpus: int | None = None
    gpu_product: str | None = None
    #: what left components unknown on this node, and why (added in report v1)
    missing_data: tuple[MissingInput, ...] = ()
    #: of ``gpus``, those a pod can get now (gpunode.gpucount; added in report v1)
    gpus_usable: int | None = None


class Group(msgspec.Struct, frozen=True):
    """Nodes that share the same root cause, for the fleet summary."""

    cause: str
    component: str
    title: str
    nodes: tuple[str, ...]


class ClusterReport(msgspec.Struct, frozen=True):
    """Cluster-wide findings, reported once instead of once per node."""

    name: str | None
    root_causes: tuple[RootCause, ...]
    components: tuple[ComponentReport, ...]


class SourceInfo(msgspec.Struct, frozen=True):
    """What the report was made from, and what could not be seen."""

    kind: str
    location: str
    collected_at: str | None = None
    partial: bool = False
    warnings: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    context: str | None = None
    path: str | None = None


class NotGpuNode(msgspec.Struct, frozen=True):
    """A node asked for by name that has no GPU evidence: it is not diagnosed."""

    name: str
    reason: str


class LeftOutNode(msgspec.Struct, frozen=True):
    """A GPU node that ``-l`` or the node names left out (not diagnosed), and what makes it
    look sick from the cluster lists (gpunode.leftout; empty: nothing seen)."""

    name: str
    signs: tuple[str, ...] = ()


class Selection(msgspec.Struct, frozen=True):
    """How the reported nodes were chosen and the GPU nodes that choice left out."""

    #: the label selector (``-l``), the command's or the one the bundle was collected with
    selector: str | None = None
    #: the node names given on the command line
    names: tuple[str, ...] = ()
    #: GPU nodes not reported, sick-looking ones first
    left_out: tuple[LeftOutNode, ...] = ()


class GpuClass(msgspec.Struct, frozen=True):
    """GPUs usable and lost among the nodes of one GPU product (gpunode.gpucount)."""

    product: str
    nodes: int
    gpus: int
    usable: int
    lost: int
    #: counted nodes with GPUs lost
    losing: tuple[str, ...] = ()
    #: failing nodes whose GPUs no source counted
    uncounted: tuple[str, ...] = ()


class GpuCount(msgspec.Struct, frozen=True):
    """What an operator counts first: GPUs usable of those counted on the reported nodes."""

    gpus: int
    usable: int
    lost: int
    losing: tuple[str, ...] = ()
    uncounted: tuple[str, ...] = ()
    classes: tuple[GpuClass, ...] = ()


class WorkloadIssue(msgspec.Struct, frozen=True):
    """A GPU workload (a pod that asked for GPUs) in trouble on a reported node, and what
    it said (gpunode.workloads); ``failing`` ones make ``diagnose`` exit 1."""

    node: str
    namespace: str
    name: str
    #: the STATUS column of ``kubectl get pods`` (UnexpectedAdmissionError, CrashLoopBackOff, …)
    state: str
    #: True: it fails (refused, cannot start, keeps ending in errors); False: it waits to be
    #: scheduled or recovered long ago
    failing: bool
    #: its own error line, as a person reads it; None when it said none
    message: str | None = None
    #: where that line is (a bundle path, or an object and field)
    source: str | None = None
    #: the class of that line (``error_*`` codes of the knowledge base)
    line_class: str | None = None
    #: the stack component the line names (``named_by`` in the catalog)
    component: str | None = None
    #: the node's root cause (its component) that line leads down to
    root_cause: str | None = None


#: ``gpunode diff -o json``, the second document of docs/report.schema.json (gpunode.schema)
DIFF_REPORT: type[DiffReport] = DiffReport


class NodeWithoutPod(msgspec.Struct, frozen=True):
    """A reported GPU node where a stack DaemonSet's component has no pod, and why (its
    verdict there: the label its selector needs, a taint it does not tolerate, …)."""

    node: str
    status: Status
    reason: str
    #: the knowledge-base cause of that verdict, when it has one
    cause: str | None = None


class DaemonSetRow(msgspec.Struct, frozen=True):
    """One GPU-stack DaemonSet: what its status says it should run and runs
    (desiredNumberScheduled, currentNumberScheduled, numberReady, numberMisscheduled), and
    the reported GPU nodes its component is missing from (gpunode.daemonsets)."""

    namespace: str
    name: str
    component: str
    desired: int
    current: int
    ready: int
    misscheduled: int
    gpu_nodes_without_pod: tuple[NodeWithoutPod, ...] = ()

    @property
    def complete(self) -> bool:
        """Every node it selects runs its pod, ready, and no reported GPU node lacks one."""
        return (self.desired == self.current == self.ready and not self.misscheduled
                and not self.gpu_nodes_without_pod)


class Report(msgspec.Struct, frozen=True, kw_only=True):
    """The report JSON v1 (docs/report-format.md); fields are only ever added."""

    schema: str = "gpunode.report/v1"
    generated_by: str = "gpunode"
    gpunode_version: str = __version__
    source: SourceInfo
    cluster: ClusterReport
    nodes: tuple[NodeReport, ...]
    groups: tuple[Group, ...]
    not_gpu_nodes: tuple[NotGpuNode, ...] = ()
    #: GPU workloads in trouble on the reported nodes (added in report v1)
    gpu_workloads: tuple[WorkloadIssue, ...] = ()
    #: how ``-l`` or node names chose the nodes, and the GPU nodes left out (added in report v1)
    selection: Selection | None = None
    #: GPUs usable and lost, for the reported nodes and per GPU class (added in report v1)
    gpus: GpuCount | None = None
    #: patterns across the reported nodes: outliers, shared factors, wedges (added in report v1)
    fleet: FleetAnalysis = FleetAnalysis()
    #: ``diagnose --since``: what each node's agent history says changed since then; absent
    #: without --since (added in report v1)
    changes_since: ChangesSince | msgspec.UnsetType = msgspec.UNSET
    #: the agent's ``/report`` only: trends over its history of the node (docs/agent.md,
    #: "History and trends"); absent elsewhere (added in report v1)
    trends: tuple[Trend, ...] | msgspec.UnsetType = msgspec.UNSET
    #: every GPU-stack DaemonSet, desired vs scheduled vs ready, with the reported GPU nodes
    #: its component has no pod on and why; absent while every one is complete (added in
    #: report v1)
    daemonsets: tuple[DaemonSetRow, ...] | msgspec.UnsetType = msgspec.UNSET

    @property
    def has_failures(self) -> bool:
        """True when any root cause exists anywhere, or any GPU workload fails: the CLI
        exits 1 then (a cluster whose GPU workloads fail is never reported healthy)."""
        return (bool(self.cluster.root_causes) or any(n.root_causes for n in self.nodes)
                or any(w.failing for w in self.gpu_workloads))
