"""``diagnose --watch``: re-evaluate on an interval and say what changed since the last look."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime

from gpunode.commands.output import ReportFormat
from gpunode.model import Report
from gpunode.report.options import RenderOptions

Key = tuple[str, str, str]


def root_causes(report: Report) -> dict[Key, str]:
    """(node, component, cause) -> title, for every root cause in the report."""
    out = {("(cluster)", rc.component, rc.cause): rc.title for rc in report.cluster.root_causes}
    out.update({(n.name, rc.component, rc.cause): rc.title for n in report.nodes for rc in n.root_causes})
    return out


def changes(before: dict[Key, str], after: dict[Key, str]) -> list[str]:
    """Lines for root causes that appeared (+) or went away (-)."""
    new = sorted(after.keys() - before.keys())
    lines = [f"+ {n}  {comp}  {cause} — {after[(n, comp, cause)]}" for n, comp, cause in new]
    lines += [f"- {n}  {comp}  {cause} (resolved)" for n, comp, cause in sorted(before.keys() - after.keys())]
    return lines


def watch_reports(
    evaluate: Callable[[], Report],
    output: ReportFormat,
    options: RenderOptions,
    *,
    interval: float,
    count: int,
) -> int:
    """The full report once, then one stamped block of changes per evaluation; the last exit code."""
    from gpunode.cli import emit
    from gpunode.report import DIAGNOSE_REPORTERS

    report = evaluate()
    code = emit(report, DIAGNOSE_REPORTERS, output, options)
    seen = root_causes(report)
    done = 1
    while count == 0 or done < count:
        time.sleep(interval)
        report = evaluate()
        current = root_causes(report)
        stamp = datetime.now(UTC).strftime("%H:%M:%SZ")
        lines = changes(seen, current) or [f"no change ({len(current)} root causes)"]
        print(f"--- {stamp}", *lines, sep="\n", flush=True)
        seen, code, done = current, 1 if report.has_failures else 0, done + 1
    sys.stdout.flush()
    return code
