"""The check registry: pure functions from a node's facts to findings.

A check declares the component it judges and the observations it needs
(``needs``). When a needed observation is absent from the bundle the check is
not run and the runner records what was missing, so the component ends up
``unknown`` rather than silently ``ok``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache

from gpunode.catalog import Catalog
from gpunode.checks.context import NodeContext
from gpunode.model import Evidence, Finding, Status

CheckFn = Callable[[NodeContext, str], Iterable[Finding]]
ALL_POD_COMPONENTS = "*"


@dataclass(frozen=True)
class Check:
    """A registered check: which component it judges and what it needs."""

    name: str
    component: str
    needs: tuple[str, ...]
    fn: CheckFn

    def missing(self, ctx: NodeContext) -> tuple[str, ...]:
        """Needed observations this node's facts do not have."""
        return ctx.missing(self.needs)


REGISTRY: list[Check] = []


#: Finding context key: the lower component whose failure the finding explains (a toolkit
#: drop-in that stops containerd): that component is then blocked by the finding's.
EXPLAINS = "explains"
#: Context keys a decisive finding carries (read by the diagnosis for its root cause).
LINE, MESSAGE, SOURCE, VERB, STATE = (
    "decisive_line", "decisive_message", "decisive_source", "decisive_verb", "decisive_state")


def check(component: str, *, needs: Iterable[str] = ()) -> Callable[[CheckFn], CheckFn]:
    """Register a check for ``component`` ("*" for every pod-run component).

    The function receives the node context and the component id it judges.

    ``needs`` names observations: ``cluster/<resource>`` (a cluster list),
    ``cmd/<name>``, ``files/<path>``, ``metrics/<name>`` (node observations).
    """

    def register(fn: CheckFn) -> CheckFn:
        REGISTRY.append(Check(fn.__name__, component, tuple(needs), fn))
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


#: One component's part of a node's run: its id, the functions of its checks whose needs
#: the node has (in order), and what the others lacked (``Judgement.unobserved``).
ComponentRun = tuple[str, tuple[CheckFn, ...], tuple[str, ...]]


@dataclass(frozen=True)
class NodePlan:
    """What runs for every node: each node-scoped component with its checks, in catalog
    order, and every distinct ``needs`` among them (looked up once per node)."""

    components: tuple[tuple[str, tuple[Check, ...]], ...]
    needs: tuple[tuple[str, ...], ...]
    #: ``runs`` by what the node lacks of each ``needs``: nodes mostly lack the same.
    _runs: dict[tuple[tuple[str, ...], ...], tuple[ComponentRun, ...]] = field(
        default_factory=dict, compare=False, repr=False)

    def runs(self, lacking: Mapping[tuple[str, ...], tuple[str, ...]]) -> tuple[ComponentRun, ...]:
        """Each component's run on a node that lacks ``lacking[needs]`` of each ``needs``:
        the checks to call and, in check order, the observations the others lacked. Made
        once per distinct ``lacking`` rather than sorted out check by check on every node."""
        key = tuple(lacking[needs] for needs in self.needs)
        known = self._runs.get(key)
        if known is None:
            if len(self._runs) >= _RUNS_MAX:
                self._runs.clear()
            known = self._runs[key] = tuple(
                (cid, tuple(c.fn for c in checks if not lacking[c.needs]),
                 tuple(need for c in checks for need in lacking[c.needs]))
                for cid, checks in self.components)
        return known


#: Distinct ``lacking`` kept per plan (a fleet's nodes lack one or a few sets of files).
_RUNS_MAX = 64


def node_plan(catalog: Catalog) -> NodePlan:
    """The plan for ``catalog``: the same for every node, so made once per catalog and
    registry size."""
    known = _PLANS.get(id(catalog))
    if known is None or known[0] is not catalog or known[1] != len(REGISTRY):
        components = tuple((c.id, checks_for(c.id, c.kind)) for c in catalog.node_components())
        needs = tuple(dict.fromkeys(chk.needs for _, found in components for chk in found))
        known = _PLANS[id(catalog)] = (catalog, len(REGISTRY), NodePlan(components, needs))
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
