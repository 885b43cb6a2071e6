"""The GPU workloads a report found in trouble, as every reporter shows them: which pods
were hit, on which node, what they said, and the stack root cause it leads down to."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from rich.console import Console
from rich.text import Text

from gpunode.model import Report, WorkloadIssue
from gpunode.report.style import paragraph

#: Workloads listed by the table and markdown before "… and N more".
SHOWN = 20


def counts(report: Report) -> tuple[int, int]:
    """Failing GPU workloads, and the nodes they are on."""
    failing = [w for w in report.gpu_workloads if w.failing]
    return len(failing), len({w.node for w in failing})


def verdict(report: Report) -> str:
    """What the workloads add to the verdict line; empty when none fails."""
    failing, nodes = counts(report)
    if not failing:
        return ""
    return f"{_many(failing, 'GPU workload')} failing on {_many(nodes, 'node')}"


def _many(count: int, noun: str) -> str:
    return f"{count} {noun}{'s' if count != 1 else ''}"


def heading(report: Report) -> str:
    failing, _ = counts(report)
    waiting = len(report.gpu_workloads) - failing
    parts = [f"{failing} failing"] + ([f"{waiting} waiting or recovered"] if waiting else [])
    return f"GPU workloads in trouble ({', '.join(parts)})"


def _leads(w: WorkloadIssue) -> str:
    if w.root_cause and w.root_cause != w.component:
        return f" → {w.component} → root cause {w.root_cause}"
    if w.root_cause:
        return f" → root cause {w.root_cause}"
    if w.component:
        return f" → names {w.component}"
    return ""


def _shown(issues: Sequence[WorkloadIssue], expand: bool) -> tuple[Sequence[WorkloadIssue], int]:
    if expand or len(issues) <= SHOWN:
        return issues, 0
    return issues[:SHOWN], len(issues) - SHOWN


def render(report: Report, console: Console, expand: bool) -> None:
    """The table's section: one entry per workload, its line and where it was read."""
    if not report.gpu_workloads:
        return
    console.print()
    console.print(Text(heading(report), style="bold"))
    issues, more = _shown(report.gpu_workloads, expand)
    for w in issues:
        mark, style = ("✗", "bold red") if w.failing else ("·", "dim")
        console.print(Text.assemble(
            (f"  {mark} {w.node}", style), " · ", (f"{w.namespace}/{w.name}", "bold"),
            f" · {w.state}{_leads(w)}"), soft_wrap=True)
        if w.message:
            if w.source:
                console.print(Text(f"      {w.source}", style="cyan"), soft_wrap=True)
            paragraph(console, w.message, 6)
    if more:
        console.print(Text(f"  … and {more} more (--all)", style="dim"))


def markdown(report: Report, expand: bool) -> list[str]:
    """The markdown section (a table), or nothing."""
    if not report.gpu_workloads:
        return []
    lines = [f"## {heading(report)}", "", "| node | workload | state | failing | leads to | error |",
             "| --- | --- | --- | --- | --- | --- |"]
    issues, more = _shown(report.gpu_workloads, expand)
    for w in issues:
        leads = w.root_cause or w.component or ""
        message = (w.message or "").replace("|", "\\|")
        lines.append(f"| {w.node} | {w.namespace}/{w.name} | {w.state} | {'yes' if w.failing else 'no'} "
                     f"| {leads} | {message} |")
    if more:
        lines.append(f"| … and {more} more | | | | | |")
    return [*lines, ""]


def html(report: Report) -> str:
    """The HTML section, or an empty string."""
    if not report.gpu_workloads:
        return ""
    rows = "".join(
        f'<tr class="{"failed" if w.failing else "waiting"}"><td>{escape(w.node)}</td>'
        f"<td>{escape(w.namespace)}/{escape(w.name)}</td><td>{escape(w.state)}</td>"
        f"<td>{escape(w.root_cause or w.component or '')}</td>"
        f"<td><code>{escape(w.message or '')}</code></td></tr>"
        for w in report.gpu_workloads
    )
    return (f'<section id="workloads"><h2>{escape(heading(report))}</h2><table>'
            "<thead><tr><th>node</th><th>workload</th><th>state</th><th>leads to</th><th>error</th></tr>"
            f"</thead><tbody>{rows}</tbody></table></section>")
