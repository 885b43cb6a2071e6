"""The validation registry: pure checks with an id, a category and a title.

Two shapes of check: cluster checks judge ``ClusterFacts`` once; node checks
judge one GPU node's ``NodeContext`` at a time (so each node's observations are
read once and dropped) and a reducer folds the per-node outcomes into one
result. ``needs`` names cluster lists (``cluster/<resource>``); when one is
absent from the bundle the check is ``unknown``, never ``pass``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpunode.model import Evidence
from gpunode.validation import CATEGORIES, CheckResult, Outcome, Verdict, worst

if TYPE_CHECKING:
    from gpunode.checks.context import NodeContext
    from gpunode.validate.context import ValidationContext

ClusterFn = Callable[["ValidationContext"], Outcome]
NodeFn = Callable[["ValidationContext", "NodeContext"], Outcome | None]
NodeOutcomes = Sequence[tuple[str, Outcome]]
Reducer = Callable[["ValidationContext", NodeOutcomes], Outcome]

MAX_EVIDENCE = 8
MAX_NAMED = 5


@dataclass(frozen=True)
class Validation:
    """A registered check; exactly one of ``cluster_fn`` / ``node_fn`` is set."""

    id: str
    category: str
    title: str
    fix: str
    needs: tuple[str, ...]
    cluster_fn: ClusterFn | None = None
    node_fn: NodeFn | None = None
    reduce: Reducer | None = None
    doc: str = ""
    active: bool = False


REGISTRY: list[Validation] = []


def _register(entry: Validation) -> None:
    if entry.category not in CATEGORIES:
        raise ValueError(f"validation {entry.id}: unknown category {entry.category!r}")
    if any(v.id == entry.id for v in REGISTRY):
        raise ValueError(f"validation {entry.id} registered twice")
    REGISTRY.append(entry)


def validation(
    id: str, category: str, title: str, *, fix: str = "", needs: Sequence[str] = ()
) -> Callable[[ClusterFn], ClusterFn]:
    """Register a cluster-wide check: ``fn(ctx) -> Outcome``."""

    def register(fn: ClusterFn) -> ClusterFn:
        _register(Validation(id, category, title, fix, tuple(needs), cluster_fn=fn, doc=fn.__doc__ or ""))
        return fn

    return register


def node_validation(
    id: str,
    category: str,
    title: str,
    *,
    fix: str = "",
    needs: Sequence[str] = (),
    reduce: Reducer | None = None,
) -> Callable[[NodeFn], NodeFn]:
    """Register a per-GPU-node check: ``fn(ctx, node) -> Outcome | None`` (None: not applicable)."""

    def register(fn: NodeFn) -> NodeFn:
        entry = Validation(
            id, category, title, fix, tuple(needs), node_fn=fn, reduce=reduce, doc=fn.__doc__ or ""
        )
        _register(entry)
        return fn

    return register


def declare_active(id: str, category: str, title: str, *, fix: str, doc: str) -> Validation:
    """Register an active check (run by ``gpunode.validate.active``, only with ``--active``)."""
    entry = Validation(id, category, title, fix, (), doc=doc, active=True)
    _register(entry)
    return entry


def find(check_id: str) -> Validation:
    return next(v for v in REGISTRY if v.id == check_id)


def passed(summary: str, *evidence: Evidence) -> Outcome:
    return Outcome(Verdict.PASS, summary, evidence)


def failed(summary: str, *evidence: Evidence, fix: str = "", nodes: Sequence[str] = ()) -> Outcome:
    return Outcome(Verdict.FAIL, summary, evidence, fix, tuple(nodes))


def warned(summary: str, *evidence: Evidence, fix: str = "", nodes: Sequence[str] = ()) -> Outcome:
    return Outcome(Verdict.WARN, summary, evidence, fix, tuple(nodes))


def skipped(summary: str, *evidence: Evidence) -> Outcome:
    return Outcome(Verdict.SKIP, summary, evidence)


def unknown(summary: str, *evidence: Evidence, nodes: Sequence[str] = ()) -> Outcome:
    return Outcome(Verdict.UNKNOWN, summary, evidence, "", tuple(nodes))


def count(n: int, noun: str) -> str:
    """ "1 node", "3 nodes": counts in summaries read as English."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def named(items: Sequence[str], limit: int = MAX_NAMED) -> str:
    """ "a, b, c (+4 more)": long lists stay one readable line."""
    shown = ", ".join(items[:limit])
    return f"{shown} (+{len(items) - limit} more)" if len(items) > limit else shown


def worst_of_nodes(_ctx: ValidationContext | None, outcomes: NodeOutcomes) -> Outcome:
    """Default reducer: the worst node decides; failing nodes are named first."""
    if not outcomes:
        return skipped("does not apply to any GPU node")
    verdict = worst(o.verdict for _, o in outcomes)
    if verdict in (Verdict.PASS, Verdict.SKIP):
        return _all_alike(verdict, [(n, o) for n, o in outcomes if o.verdict == verdict])
    bad = [(n, o) for n, o in outcomes if o.verdict == verdict]
    others = [(n, o) for n, o in outcomes if o.verdict not in (verdict, Verdict.PASS, Verdict.SKIP)]
    summary = "; ".join(f"{n}: {o.summary}" for n, o in bad[:MAX_NAMED])
    if len(bad) > MAX_NAMED:
        summary += f" (+{len(bad) - MAX_NAMED} more nodes)"
    if others:
        summary += f"; also {named([f'{n} {o.verdict.value}' for n, o in others])}"
    evidence = tuple(ev for _, o in [*bad, *others] for ev in o.evidence)[:MAX_EVIDENCE]
    fix = next((o.fix for _, o in bad if o.fix), "")
    return Outcome(verdict, summary, evidence, fix, tuple(n for n, _ in bad))


def _all_alike(verdict: Verdict, outcomes: NodeOutcomes) -> Outcome:
    summaries = {o.summary for _, o in outcomes}
    names = [n for n, _ in outcomes]
    detail = summaries.pop() if len(summaries) == 1 else f"{len(outcomes)} GPU nodes"
    summary = f"{named(names)}: {detail}" if len(names) > 1 else f"{names[0]}: {detail}"
    evidence = tuple(ev for _, o in outcomes for ev in o.evidence)[:MAX_EVIDENCE]
    return Outcome(verdict, summary, evidence)


def to_result(v: Validation, outcome: Outcome, *, active: bool = False) -> CheckResult:
    """A check's outcome with its identity; the fix shows only on warn or fail."""
    needs_fix = outcome.verdict in (Verdict.WARN, Verdict.FAIL)
    fix = (outcome.fix or v.fix) if needs_fix else ""
    return CheckResult(
        v.id,
        v.category,
        v.title,
        outcome.verdict,
        outcome.summary,
        outcome.evidence,
        fix,
        outcome.nodes,
        active,
    )
