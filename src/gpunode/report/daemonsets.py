"""The GPU-stack DaemonSets as every reporter shows them, when some are not complete:
desired vs scheduled vs ready per DaemonSet, and the GPU nodes it misses with the reason."""

from __future__ import annotations

import msgspec
from rich.console import Console
from rich.text import Text

from gpunode.model import DaemonSetRow, Report

HEADING = "GPU-stack DaemonSets (desired / scheduled / ready)"


def rows(report: Report) -> tuple[DaemonSetRow, ...]:
    """The report's DaemonSet table, empty when it has none (every DaemonSet complete)."""
    return () if isinstance(report.daemonsets, msgspec.UnsetType) else report.daemonsets


def _counts(row: DaemonSetRow) -> str:
    extra = f", {row.misscheduled} misscheduled" if row.misscheduled else ""
    return f"{row.desired} / {row.current} / {row.ready}{extra}"


def render(report: Report, console: Console) -> None:
    """The table's section: one line per DaemonSet, then each GPU node it misses and why."""
    table = rows(report)
    if not table:
        return
    console.print()
    console.print(Text(HEADING, style="bold"))
    for row in (r for r in table if not r.complete):
        console.print(Text.assemble(
            ("  ✗ ", "bold red"), (f"{row.namespace}/{row.name}", "bold"),
            f" ({row.component}) {_counts(row)}"), soft_wrap=True)
        for gap in row.gpu_nodes_without_pod:
            console.print(Text(f"      no pod on {gap.node} ({gap.status}): {gap.reason}", style="dim"),
                          soft_wrap=True)
    complete = sum(r.complete for r in table)
    if complete:
        console.print(Text(f"  ✓ {complete} more complete (the JSON and markdown list them)", style="dim"))


def markdown(report: Report) -> list[str]:
    """The markdown section (a table), or nothing."""
    table = rows(report)
    if not table:
        return []
    lines = [f"## {HEADING}", "", "| DaemonSet | component | desired | scheduled | ready | misscheduled "
             "| GPU nodes without its pod |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for row in table:
        gaps = "; ".join(f"{g.node}: {g.reason}" for g in row.gpu_nodes_without_pod).replace("|", "\\|")
        lines.append(f"| {row.namespace}/{row.name} | {row.component} | {row.desired} | {row.current} "
                     f"| {row.ready} | {row.misscheduled} | {gaps} |")
    return [*lines, ""]
