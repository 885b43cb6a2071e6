"""Helpers shared by the checks: per-node values folded into a consistency verdict."""

from __future__ import annotations

from collections import defaultdict

from gpunode.checks.context import NodeContext
from gpunode.model import Evidence
from gpunode.validate.context import ValidationContext
from gpunode.validate.registry import NodeOutcomes, Reducer, failed, named, passed, unknown, warned
from gpunode.validation import Outcome, Verdict


def value_outcome(value: str, *evidence: Evidence) -> Outcome:
    """A node's observed value (e.g. a driver version), for ``consistent_values``."""
    return Outcome(Verdict.PASS, value, evidence)


def consistent_values(what: str, *, severity: str) -> Reducer:
    """Reducer: one value across the nodes passes; several warn (or fail); none is unknown."""

    def reduce(_ctx: ValidationContext, outcomes: NodeOutcomes) -> Outcome:
        groups: dict[str, list[str]] = defaultdict(list)
        evidence: dict[str, Evidence] = {}
        for name, outcome in outcomes:
            if outcome.verdict == Verdict.PASS:
                groups[outcome.summary].append(name)
                evidence.setdefault(outcome.summary, *outcome.evidence[:1])
        missing = [n for n, o in outcomes if o.verdict != Verdict.PASS]
        if not groups:
            return unknown(f"{what} version not observed on any GPU node", nodes=missing)
        ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        shown = [ev for value, _ in ordered if (ev := evidence.get(value)) is not None]
        if len(ordered) > 1:
            summary = f"{len(ordered)} {what} versions: " + "; ".join(
                f"{v} on {named(ns)}" for v, ns in ordered
            )
            odd = [n for _, ns in ordered[1:] for n in ns]
            verdict = failed if severity == "fail" else warned
            return verdict(summary, *shown, nodes=odd)
        value, names = ordered[0]
        if missing:
            return unknown(
                f"{what} {value} on {named(names)}; not observed on {named(missing)}", *shown, nodes=missing
            )
        return passed(f"{what} {value} on all {len(names)} GPU nodes", *shown)

    return reduce


def smi_path(node: NodeContext) -> str:
    return node.obs.path_of("cmd", "nvidia-smi-q.xml")


def dcgm_gpu_label(node: NodeContext, label: str) -> str | None:
    """A label DCGM attaches to every GPU series (e.g. DCGM_FI_DRIVER_VERSION)."""
    for sample in node.dcgm_samples or ():
        if label in sample.labels:
            return sample.labels[label]
    return None
