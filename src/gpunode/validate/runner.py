"""Run the registered checks over a bundle's facts and fold them into a report.

Cluster checks run once. Node checks run per GPU node on one NodeContext,
built once per node and dropped before the next, so memory stays bounded on
large fleets; each check's per-node outcomes are then reduced to one result.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import cast

from gpunode.checks.context import NodeContext
from gpunode.diagnose import ObservationReader, diagnose
from gpunode.doubt import PROBE_FILE, probe_doubts, skipped_behind
from gpunode.facts import ClusterFacts
from gpunode.kb import load_kb
from gpunode.model import Report, SourceInfo
from gpunode.validate import checks as _checks  # noqa: F401  (registers the checks)
from gpunode.validate.context import ValidationContext, ValidationOptions
from gpunode.validate.registry import REGISTRY, Validation, to_result, unknown, worst_of_nodes
from gpunode.validation import (
    CATEGORIES,
    CheckResult,
    Outcome,
    ValidationReport,
    Verdict,
    category_result,
    cluster_verdict,
)


def selected(categories: Sequence[str] = (), *, active: bool = False) -> list[Validation]:
    """Registered passive (or active) checks in the chosen categories (all when none is chosen)."""
    return [v for v in REGISTRY if v.active == active and (not categories or v.category in categories)]


#: Cluster checks that read the stack diagnosis (``ValidationContext.diagnosis``).
DIAGNOSIS_CHECKS = frozenset({"gpu.stack-diagnosis"})


def run_passive(ctx: ValidationContext, chosen: Sequence[Validation]) -> list[CheckResult]:
    """Every chosen check's result, in registration order.

    When the diagnosis is wanted too, node checks run inside its pass over the
    nodes, on the node contexts it built: each node's files are read and parsed once.
    """
    node_checks = [v for v in chosen if v.node_fn is not None]
    if node_checks and any(v.id in DIAGNOSIS_CHECKS for v in chosen):
        per_node = _run_nodes_with_diagnosis(ctx, node_checks)
    else:
        per_node = _run_nodes(ctx, node_checks)
    outcomes = {v.id: _run_cluster(ctx, v) for v in chosen if v.cluster_fn is not None}
    for v in node_checks:
        outcomes[v.id] = _reduce(ctx, v, per_node[v.id])
    return [to_result(v, _not_on_skipped(ctx, v, outcomes[v.id])) for v in chosen]


def _not_on_skipped(ctx: ValidationContext, v: Validation, outcome: Outcome) -> Outcome:
    """A fail or warn that read a list with items skipped as malformed is unknown, with what
    it would have said and why: the skipped item may be the one it found missing (a node's
    CSINode, the default StorageClass). Items of another node do not count (gpunode.doubt)."""
    if outcome.verdict not in (Verdict.FAIL, Verdict.WARN):
        return outcome
    behind = skipped_behind(ctx.facts, v.needs, outcome.nodes)
    if not behind:
        return outcome
    summary = f"not judged: {'; '.join(behind)} (it would say: {outcome.summary})"
    return unknown(summary, *outcome.evidence, nodes=outcome.nodes)


def _run_cluster(ctx: ValidationContext, v: Validation) -> Outcome:
    missing = [n for n in v.needs if not ctx.facts.has(n.removeprefix("cluster/"))]
    if missing:
        return unknown("not observed: " + ", ".join(f"{m}.json" for m in missing))
    assert v.cluster_fn is not None
    return v.cluster_fn(ctx)


def _run_nodes(ctx: ValidationContext, chosen: Sequence[Validation]) -> dict[str, list[tuple[str, Outcome]]]:
    out: dict[str, list[tuple[str, Outcome]]] = defaultdict(list)
    if not chosen:
        return out
    kb = load_kb()
    for name in ctx.gpu_nodes:
        node = NodeContext(ctx.facts, name, ctx.read_observations(ctx.facts, name), kb)
        _keep(out, name, _check_node(ctx, chosen, node))
    return out


def _run_nodes_with_diagnosis(ctx: ValidationContext, chosen: Sequence[Validation]
                              ) -> dict[str, list[tuple[str, Outcome]]]:
    """Node checks run on each node as the diagnosis judges it (same GPU nodes, same order,
    in the same process as that node's diagnosis)."""
    out: dict[str, list[tuple[str, Outcome]]] = defaultdict(list)
    ctx.diagnosis = diagnose(ctx.facts, ctx.read_observations, (),
                             lambda node: _check_node(ctx, chosen, node),
                             lambda name, outcomes: _keep(out, name, outcomes),
                             visited_as=list[tuple[str, Outcome]], node_details=ctx.full_diagnosis)
    return out


def _check_node(ctx: ValidationContext, chosen: Sequence[Validation], node: NodeContext
                ) -> list[tuple[str, Outcome]]:
    """(check id, outcome) of every chosen node check that has something to say about ``node``."""
    found = []
    for v in chosen:
        assert v.node_fn is not None
        outcome = v.node_fn(ctx, node)
        if outcome is not None:
            found.append((v.id, _not_on_unknown_values(node, outcome)))
    return found


def _not_on_unknown_values(node: NodeContext, outcome: Outcome) -> Outcome:
    """A fail or warn read from the node's probe facts alone, where the probe holds values
    gpunode does not know (a port state, a recovery action: gpunode.doubt), is unknown with
    what it would have said: the value it fails on may be one of them."""
    if outcome.verdict not in (Verdict.FAIL, Verdict.WARN) or not outcome.evidence:
        return outcome
    source = node.obs.path_of("cmd", PROBE_FILE)
    probe = node.probe if PROBE_FILE in node.obs.cmd else None
    if probe is None or any(ev.source != source for ev in outcome.evidence):
        return outcome
    doubts = probe_doubts(probe, source)
    if not doubts:
        return outcome
    said = "; ".join(d.reason for d in doubts[:3])
    return unknown(f"not judged: {said} (it would say: {outcome.summary})", *outcome.evidence,
                   nodes=outcome.nodes)


def _keep(out: dict[str, list[tuple[str, Outcome]]], node: str, outcomes: object) -> None:
    for check_id, outcome in cast("list[tuple[str, Outcome]]", outcomes):
        out[check_id].append((node, outcome))


def _reduce(ctx: ValidationContext, v: Validation, outcomes: list[tuple[str, Outcome]]) -> Outcome:
    if not ctx.gpu_nodes:
        return unknown("no GPU node found")
    return (v.reduce or worst_of_nodes)(ctx, outcomes)


def build_report(ctx: ValidationContext, results: Iterable[CheckResult]) -> ValidationReport:
    """Group results by category (in the fixed category order) and decide the cluster verdict."""
    by_category: dict[str, list[CheckResult]] = defaultdict(list)
    for result in results:
        by_category[result.category].append(result)
    categories = tuple(category_result(c, by_category[c]) for c in CATEGORIES if c in by_category)
    return ValidationReport(
        cluster=ctx.facts.manifest.cluster_name,
        verdict=cluster_verdict(categories),
        source=source_info(ctx.facts),
        categories=categories,
    )


def validate_facts(
    facts: ClusterFacts,
    read_observations: ObservationReader,
    options: ValidationOptions | None = None,
    categories: Sequence[str] = (),
    extra: Iterable[CheckResult] = (),
) -> ValidationReport:
    """The passive checks over ``facts`` (plus ``extra`` results, e.g. active checks), as a report."""
    return validate_and_diagnose(facts, read_observations, options, categories, extra,
                                 with_diagnosis=False)[0]


def validate_and_diagnose(
    facts: ClusterFacts,
    read_observations: ObservationReader,
    options: ValidationOptions | None = None,
    categories: Sequence[str] = (),
    extra: Iterable[CheckResult] = (),
    *,
    with_diagnosis: bool = True,
) -> tuple[ValidationReport, Report | None]:
    """``validate_facts``, and the stack diagnosis of every GPU node when a check made it
    (so a command that shows both does not diagnose twice). ``with_diagnosis=False``: the
    caller shows no diagnosis (None comes back), so the workers send back only what the
    stack check reads of each node's report (its verdict and root causes)."""
    ctx = ValidationContext(facts, read_observations, diagnose, options or ValidationOptions(),
                            full_diagnosis=with_diagnosis)
    results = run_passive(ctx, selected(categories))
    diagnosis = ctx.__dict__.get("diagnosis") if with_diagnosis else None  # set only if computed
    return build_report(ctx, [*results, *extra]), diagnosis


def source_info(facts: ClusterFacts) -> SourceInfo:
    """What the verdicts were made from (same shape as the diagnose report's)."""
    m = facts.manifest
    return SourceInfo(m.source, facts.source.location, m.collected_at, m.partial, m.warnings, facts.missing)
