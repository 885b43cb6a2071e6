"""Markdown output, for tickets and chat: the same content as the table."""

from __future__ import annotations

from rich.console import Console

from gpunode.model import ComponentReport, Report, RootCause


def render_diagnosis(report: Report, console: Console) -> None:
    console.file.write("\n".join(diagnosis_lines(report)) + "\n")


def render_stack(report: Report, console: Console) -> None:
    lines = [f"# GPU stack — {report.cluster.name or 'cluster'}", ""]
    for node in report.nodes:
        lines += [f"## {node.name} ({node.status.value})", "", *_component_table(node.components), ""]
    console.file.write("\n".join(lines) + "\n")


def diagnosis_lines(report: Report) -> list[str]:
    lines = [f"# gpunode diagnosis — {report.cluster.name or 'cluster'}", ""]
    for rc in report.cluster.root_causes:
        lines += _root_cause("cluster", rc, [])
    for node in report.nodes:
        for rc in node.root_causes:
            blocked = [c.component for c in node.components if rc.component in c.blocked_by]
            lines += _root_cause(node.name, rc, blocked)
    lines += ["## Fleet summary", "", "| root cause | component | nodes |", "| --- | --- | --- |"]
    lines += [f"| `{g.cause}` | {g.component} | {', '.join(g.nodes)} |" for g in report.groups]
    healthy = [n.name for n in report.nodes if not n.root_causes]
    if healthy:
        lines.append(f"| (none) | | {', '.join(healthy)} |")
    return lines


def _root_cause(where: str, rc: RootCause, blocked: list[str]) -> list[str]:
    lines = [
        f"## {where}: `{rc.cause}` — {rc.title}",
        "",
        f"- layer {rc.layer}, component `{rc.component}`, status {rc.status.value}",
    ]
    if blocked:
        lines.append(f"- blocks: {', '.join(blocked)}")
    lines += ["", "Evidence:", ""]
    lines += [f"- `{ev.source}`: {ev.excerpt}" for ev in rc.evidence]
    if rc.fix:
        lines += ["", f"Fix: {rc.fix}"]
    if rc.next_steps:
        lines += ["", "Next steps:", "", "```sh", *rc.next_steps, "```"]
    return [*lines, ""]


def _component_table(components: tuple[ComponentReport, ...]) -> list[str]:
    rows = ["| layer | component | status | summary |", "| --- | --- | --- | --- |"]
    for comp in sorted(components, key=lambda c: c.layer):
        blocked = f" (blocked by {', '.join(comp.blocked_by)})" if comp.blocked_by else ""
        rows.append(f"| {comp.layer} | {comp.component} | {comp.status.value} | {comp.summary}{blocked} |")
    return rows
