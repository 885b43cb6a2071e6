"""The check registry: pure functions from a node's facts to findings.

A check declares the component it judges and the observations it needs
(``needs``). When a needed observation is absent from the bundle the check is
not run and the runner records what was missing, so the component ends up
``unknown`` rather than silently ``ok``.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from itertools import compress, repeat
from operator import call, not_
from typing import NamedTuple

from gpunode.catalog import Catalog
from gpunode.checks.context import NodeContext
from gpunode.facts import ClusterFacts
from gpunode.lazy import cached_property
from gpunode.model import Evidence, Finding, Status

CheckFn = Callable[[NodeContext, str], Iterable[Finding]]
#: Whether a check may find anything on a node at all (``check``'s ``may_find``).
NodeGate = Callable[[NodeContext], bool]
ALL_POD_COMPONENTS = "*"


@dataclass(frozen=True)
class Check:
    """A registered check: which component it judges and what it needs."""

    name: str
    component: str
    needs: tuple[str, ...]
    fn: CheckFn
    may_find: NodeGate | None = None

    def missing(self, ctx: NodeContext) -> tuple[str, ...]:
        """Needed observations this node's facts do not have."""
        return ctx.missing(self.needs)


class FileGate(ABC):
    """A ``may_find`` gate of the node's files alone (which there are, not what they hold),
    or of the cluster's facts alone (``InFleet``). Nodes collected alike have the same files,
    so such a gate is asked once per set of files (``NodePlan.lacking``), not once per node."""

    @abstractmethod
    def __call__(self, ctx: NodeContext) -> bool:
        """Whether the node's files let the gated check find anything."""


@dataclass(frozen=True)
class Reads(FileGate):
    """Open where the node has any of ``observations`` (``cmd/<name>``, ``files/<path>``,
    ``metrics/<name>``). A check that finds nothing without one of them (a journal's reader,
    a log's) is not called on a node that has none, and, unlike ``needs``, nothing is
    recorded as missing: the file is one the check reads where it is there."""

    observations: tuple[str, ...]

    def __call__(self, ctx: NodeContext) -> bool:
        observed = ctx.observed
        for need in self.observations:  # noqa: SIM110 - (read once per set of files)
            if observed(need):
                return True
        return False


def reads(*observations: str) -> Reads:
    """The gate of a check that finds nothing on a node without any of ``observations``."""
    return Reads(tuple(observations))


@dataclass(frozen=True)
class FilesMatching(FileGate):
    """Open where the path of one of the node's ``files`` (as ``NodeObservations.files``
    names them, without the leading slash) matches ``pattern`` (``re.search``): the gate of
    a check that reads only such files (a runtime's config of a kind, a folder of logs)."""

    pattern: str
    flags: int = 0

    def __call__(self, ctx: NodeContext) -> bool:
        search = re.compile(self.pattern, self.flags).search
        return any(search(path) for path in ctx.obs.files)


@dataclass(frozen=True)
class InFleet(FileGate):
    """Open where ``reading`` of the cluster's facts holds anything: the gate of a check that
    finds nothing where a fleet-wide list is empty (the refused pods, the ComputeDomains, the
    pending workloads), as most bundles' are. Its answer is the same for every node, so it is
    asked with the file gates (``NodePlan.lacking``), once per set of files, not per node."""

    reading: Callable[[ClusterFacts], object]

    def __call__(self, ctx: NodeContext) -> bool:
        return bool(self.reading(ctx.facts))


def in_fleet(reading: Callable[[ClusterFacts], object]) -> InFleet:
    """The gate of a check that finds nothing where ``reading`` of the facts is empty."""
    return InFleet(reading)


class PodsHere(NamedTuple):
    """A ``may_find`` gate: open where ``component`` has a stack pod on the node. A check of
    that component that reads only its pods here (their logs, their statuses) is not called
    on a node where it is not deployed, as on most nodes most of the catalog's components.
    (A named tuple: ``NodePlan.shut`` hashes the shut ones on every node, a tuple's hash in C
    where a frozen dataclass's is a Python function.)"""

    component: str

    def __call__(self, ctx: NodeContext) -> bool:
        return bool(ctx.stack_pods(self.component))


def pods_here(component: str) -> NodeGate:
    """The gate of a check that finds nothing on a node without a pod of ``component``."""
    return PodsHere(component)  # type: ignore[return-value]  # (mypy reads no named tuple as callable)


class LogsHere(NamedTuple):
    """A ``may_find`` gate: open where a stack pod of ``component`` on the node has a log
    collected. A check that reads only that component's pods' logs (a failing build's) finds
    nothing on a node where none was collected, as on most nodes for every component."""

    component: str

    def __call__(self, ctx: NodeContext) -> bool:
        for sp in ctx.stack_pods(self.component):  # noqa: SIM110 - no generator: asked on every node
            if ctx.logs_of(sp.pod):
                return True
        return False


def logs_here(component: str) -> NodeGate:
    """The gate of a check that finds nothing on a node without a log of ``component``'s pods."""
    return LogsHere(component)  # type: ignore[return-value]  # (mypy reads no named tuple as callable)


class KernelLogHolds(NamedTuple):
    """A ``may_find`` gate: open where the node's kernel log (``cmd/dmesg.txt``) holds every
    literal of one of ``groups``, which every line its check reads must hold. One code object
    for every such gate: a healthy node asks each one and runs the same few lines for all."""

    groups: tuple[tuple[str, ...], ...]

    def __call__(self, ctx: NodeContext) -> bool:
        text = ctx.obs.cmd.get("dmesg.txt")
        if not text:
            return False
        for group in self.groups:
            for literal in group:
                if literal not in text:
                    break
            else:
                return True
        return False


def kernel_log_holds(*groups: str | tuple[str, ...]) -> NodeGate:
    """The gate of a check that finds nothing in a kernel log without one of ``groups``: a
    literal, or a tuple of literals the log must all hold."""
    gate = KernelLogHolds(tuple([(g,) if isinstance(g, str) else g for g in groups]))
    return gate  # type: ignore[return-value]  # (mypy reads no named tuple as callable)


def any_logged_workload(ctx: NodeContext) -> bool:
    """Whether a GPU workload pod of this node has a log collected (``NodeContext.
    workload_logs``): the gate of the checks that read only those logs. On nearly every node
    none has, and none of them is called."""
    return bool(ctx.facts.logged_workloads_by_node.get(ctx.name))


REGISTRY: list[Check] = []


#: Finding context key: the lower component whose failure the finding explains (a toolkit
#: drop-in that stops containerd): that component is then blocked by the finding's.
EXPLAINS = "explains"
#: Context keys a decisive finding carries (read by the diagnosis for its root cause).
LINE, MESSAGE, SOURCE, VERB, STATE = (
    "decisive_line", "decisive_message", "decisive_source", "decisive_verb", "decisive_state")
#: Context key of a state finding that quotes its component's own line: the line's class (the
#: state stays the cause; the root cause's title names the state, then quotes the line).
LINE_CLASS = "decisive_class"


def check(component: str, *, needs: Iterable[str] = (),
          may_find: NodeGate | None = None) -> Callable[[CheckFn], CheckFn]:
    """Register a check for ``component`` ("*" for every pod-run component).

    The function receives the node context and the component id it judges.

    ``needs`` names observations: ``cluster/<resource>`` (a cluster list),
    ``cmd/<name>``, ``files/<path>``, ``metrics/<name>`` (node observations).

    ``may_find``: for a check registered on many components that reads one per-node reading
    (the kernel log's failures by owner), whether that reading holds anything for any
    component; where it says False the check is not called on the node for any of them
    (it would yield nothing), which spares a call per component on nearly every node.
    ``reads(...)`` and ``FilesMatching`` are the gates of a check that reads only node files
    that may be absent.
    A gate shared by a family of checks is asked once per node for all of them, so a node
    where it is shut runs none of their code.
    """

    def register(fn: CheckFn) -> CheckFn:
        REGISTRY.append(Check(fn.__name__, component, tuple(needs), fn, may_find))
        return fn

    return register


def checks_for(component: str, kind: str) -> tuple[Check, ...]:
    """Checks judging ``component``: its own, plus the generic ones for pod components
    (looked up once per component and registry size: asked for every node)."""
    return _checks_for(component, kind, len(REGISTRY))


@cache
def _checks_for(component: str, kind: str, _registered: int) -> tuple[Check, ...]:
    generic = kind == "pod"
    return tuple(
        c for c in REGISTRY if c.component == component or (generic and c.component == ALL_POD_COMPONENTS)
    )


#: What a node lacks of each distinct ``needs`` (``NodePlan.lacking``).
Lacking = Mapping[tuple[str, ...], tuple[str, ...]]
#: ``NodePlan.lacking``'s readings in ``ClusterFacts.shared``, under this and what they read.
_LACKING = "lacking"
#: One component's part of a node's run: its id, the functions of its checks whose needs
#: the node has (in order), and what the others lacked (``Judgement.unobserved``).
ComponentRun = tuple[str, tuple[CheckFn, ...], tuple[str, ...]]


@dataclass(frozen=True)
class NodePlan:
    """What runs for every node: each node-scoped component with its checks, in catalog
    order, every distinct ``needs`` among them (looked up once per node) and every distinct
    ``may_find`` gate (asked once per node; a ``FileGate`` once per set of files)."""

    components: tuple[tuple[str, tuple[Check, ...]], ...]
    needs: tuple[tuple[str, ...], ...]
    gates: tuple[NodeGate, ...] = ()
    reads: tuple[FileGate, ...] = ()
    #: ``runs`` by what the node lacks of each ``needs`` and which gates are shut: nodes
    #: mostly lack the same, and the gates are shut on nearly all of them.
    _runs: dict[tuple[object, ...], tuple[ComponentRun, ...]] = field(
        default_factory=dict, compare=False, repr=False)
    #: This plan in ``lacking``'s key: hashed by identity in C, where the plan's ``needs``
    #: and ``reads`` would be hashed on every node (each ``Reads`` by a Python function).
    _token: object = field(default_factory=object, compare=False, repr=False)

    @cached_property
    def ids(self) -> tuple[str, ...]:
        """The components' ids, in catalog order."""
        return tuple([cid for cid, _ in self.components])

    def lacking(self, ctx: NodeContext) -> tuple[Lacking, tuple[tuple[str, ...], ...], frozenset[NodeGate]]:
        """What the node lacks of each ``needs``, the same in ``needs`` order (``runs``'
        key), and the file gates (``reads``) shut on it (none of their files there: ``shut``'s
        ``unread``). It reads which node files the node has and whether its node object is
        there (the cluster lists are the facts'), so it is read once per such set and kept on
        the facts (``ClusterFacts.shared``): a fleet's nodes were collected alike."""
        obs = ctx.obs
        key = (_LACKING, self._token, frozenset(obs.cmd), frozenset(obs.files),
               frozenset(obs.metrics), ctx.node is not None)
        shared = ctx.facts.shared
        known = shared.get(key)
        if known is None:
            lacking = {needs: ctx.missing(needs) for needs in self.needs}
            unread = frozenset([gate for gate in self.reads if not gate(ctx)])
            known = shared[key] = (lacking, tuple([lacking[needs] for needs in self.needs]), unread)
        return known  # type: ignore[return-value]  # (only this reading is kept by this key)

    def runs(self, lacking: Lacking, shut: frozenset[NodeGate] = frozenset(),
             ordered: tuple[tuple[str, ...], ...] | None = None) -> tuple[ComponentRun, ...]:
        """Each component's run on a node that lacks ``lacking[needs]`` of each ``needs``:
        the checks to call (not those whose ``may_find`` gate is in ``shut``: they would
        find nothing there) and, in check order, the observations the others lacked. Made
        once per distinct ``lacking`` and ``shut`` rather than sorted out check by check on
        every node. ``ordered``: ``lacking`` in ``needs`` order, where ``lacking`` gave it."""
        if ordered is None:
            ordered = tuple([lacking[needs] for needs in self.needs])
        key = (ordered, shut)
        known = self._runs.get(key)
        if known is None:
            if len(self._runs) >= _RUNS_MAX:
                self._runs.clear()
            known = self._runs[key] = tuple(
                (cid, tuple(c.fn for c in checks if not lacking[c.needs] and c.may_find not in shut),
                 tuple(need for c in checks for need in lacking[c.needs]))
                for cid, checks in self.components)
        return known

    def shut(self, ctx: NodeContext, unread: frozenset[NodeGate] = frozenset()) -> frozenset[NodeGate]:
        """The gates that say their checks find nothing on this node, with ``unread``
        (``lacking``'s ``reads`` gates shut on it)."""
        opened = map(call, self.gates, repeat(ctx))  # (in C: no comprehension a node)
        return frozenset(compress(self.gates, map(not_, opened))).union(unread)


#: Distinct ``lacking`` kept per plan (a fleet's nodes lack one or a few sets of files).
_RUNS_MAX = 64


def node_plan(catalog: Catalog) -> NodePlan:
    """The plan for ``catalog``: the same for every node, so made once per catalog and
    registry size."""
    known = _PLANS.get(id(catalog))
    if known is None or known[0] is not catalog or known[1] != len(REGISTRY):
        components = tuple((c.id, checks_for(c.id, c.kind)) for c in catalog.node_components())
        needs = tuple(dict.fromkeys(chk.needs for _, found in components for chk in found))
        gates = tuple(dict.fromkeys(chk.may_find for _, found in components for chk in found if chk.may_find))
        known = _PLANS[id(catalog)] = (catalog, len(REGISTRY), NodePlan(
            components, needs, tuple([g for g in gates if not isinstance(g, FileGate)]),
            tuple([g for g in gates if isinstance(g, FileGate)])))
    return known[2]


#: By the catalog's id: the catalog, the registry size and the plan.
_PLANS: dict[int, tuple[Catalog, int, NodePlan]] = {}


def ok(component: str, summary: str, *evidence: Evidence, **context: str) -> Finding:
    """A positive observation: the component works, with what showed it."""
    return Finding(component, Status.OK, "", evidence, {"summary": summary, **context})


def problem(
    component: str,
    cause: str,
    *evidence: Evidence,
    status: Status = Status.FAILED,
    specificity: int = 0,
    ctx: Mapping[str, str] | None = None,
    **context: str,
) -> Finding:
    """A failure or degradation with its cause code, evidence and template values."""
    return Finding(component, status, cause, evidence, {**(ctx or {}), **context}, specificity)


def unknown(component: str, summary: str, *evidence: Evidence) -> Finding:
    """Data exists but does not settle the question (e.g. stale status)."""
    return Finding(component, Status.UNKNOWN, "", evidence, {"summary": summary})


def not_deployed(component: str, summary: str) -> Finding:
    return Finding(component, Status.NOT_DEPLOYED, "", (), {"summary": summary})
