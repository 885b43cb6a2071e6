"""Failing checks grouped under the root cause they share (from the diagnosis of the same bundle).

"5 checks fail because driver kernel_headers_missing on gpu-wk-02": one fix, many red
lines; the reader should see the one fix first.
"""

from __future__ import annotations

from collections import defaultdict

import msgspec

from gpunode.model import Report
from gpunode.validate.model import CheckResult, ValidationReport, Verdict

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
    """Failing and warning checks, grouped by the root causes on the nodes they name; largest first."""
    causes_by_node = {
        n.name: tuple((rc.component, rc.cause) for rc in n.root_causes)
        for n in (diagnosis.nodes if diagnosis else ())
    }
    buckets: dict[tuple[tuple[str, str], ...], list[CheckResult]] = defaultdict(list)
    nodes: dict[tuple[tuple[str, str], ...], set[str]] = defaultdict(set)
    for check in report.checks():
        if check.verdict not in FAILING:
            continue
        hit = [n for n in check.nodes if causes_by_node.get(n)]
        key = tuple(sorted({c for n in hit for c in causes_by_node[n]}))
        buckets[key].append(check)
        nodes[key].update(hit)
    groups = [CheckGroup(k, tuple(sorted(nodes[k])), tuple(v)) for k, v in buckets.items()]
    return sorted(groups, key=lambda g: (not g.causes, -len(g.checks)))
