"""Failing checks grouped under the root cause they share (from the diagnosis of the same bundle).

"5 checks fail because driver kernel_headers_missing on gpu-wk-02": one fix, many red
lines; the reader should see the one fix first.
"""

from __future__ import annotations

from collections import defaultdict

import msgspec

from gpunode.model import Report
from gpunode.validation import CheckResult, ValidationReport, Verdict

FAILING = (Verdict.FAIL, Verdict.WARN)


class CheckGroup(msgspec.Struct, frozen=True):
    """Checks that fail on nodes whose diagnosis names the same root cause(s)."""

    causes: tuple[tuple[str, str], ...]  # (component, cause); empty: no shared root cause
    nodes: tuple[str, ...]
    checks: tuple[CheckResult, ...]

    def headline(self) -> str:
        fails = sum(1 for c in self.checks if c.verdict == Verdict.FAIL)
        warns = len(self.checks) - fails
        if fails:
            checks = f"{fails} check{'s' if fails != 1 else ''} fail{'' if fails != 1 else 's'}"
            checks += f" and {warns} warn{'' if warns != 1 else 's'}" if warns else ""
        else:
            checks = f"{warns} check{'s' if warns != 1 else ''} warn{'' if warns != 1 else 's'}"
        if not self.causes:
            return f"{checks} without a root cause on a GPU node"
        because = "; ".join(f"{comp} {cause}" for comp, cause in self.causes)
        return f"{checks} because {because} on {', '.join(self.nodes)}"


def group_failures(report: ValidationReport, diagnosis: Report | None) -> list[CheckGroup]:
    """Failing and warning checks, grouped by the root causes of the nodes they name; largest
    first. A check failing on nodes with different root causes (or on a node with none) is
    split: each group holds the check for its own nodes only (their part of the summary), so
    a finding is never filed under another node's root cause."""
    causes_by_node = {
        n.name: tuple((rc.component, rc.cause) for rc in n.root_causes)
        for n in (diagnosis.nodes if diagnosis else ())
    }
    buckets: dict[tuple[tuple[str, str], ...], list[CheckResult]] = defaultdict(list)
    nodes: dict[tuple[tuple[str, str], ...], set[str]] = defaultdict(set)
    for check in report.checks():
        if check.counted not in FAILING:  # a waived finding is accepted, not a failure
            continue
        by_key: dict[tuple[tuple[str, str], ...], list[str]] = defaultdict(list)
        for node in check.nodes:
            by_key[tuple(sorted(causes_by_node.get(node, ())))].append(node)
        if not by_key:
            by_key[()] = []
        for key, names in by_key.items():
            buckets[key].append(check if len(by_key) == 1 else _narrowed(check, names))
            if key:
                nodes[key].update(names)
    groups = [CheckGroup(k, tuple(sorted(nodes[k])), tuple(v)) for k, v in buckets.items()]
    return sorted(groups, key=lambda g: (not g.causes, -len(g.checks)))


def _narrowed(check: CheckResult, names: list[str]) -> CheckResult:
    """``check`` as it concerns ``names`` only: their ``node: …`` parts of the summary."""
    parts = [part for part in check.summary.split("; ") if part.split(": ", 1)[0] in names]
    summary = "; ".join(parts) if parts else f"{', '.join(names)}: {check.summary}"
    return msgspec.structs.replace(check, nodes=tuple(names), summary=summary)
