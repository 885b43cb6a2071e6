"""The terminal diagnosis: root causes first, then what they block, then the fleet."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console, Group
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from gpunode.model import ComponentReport, NodeReport, Report, RootCause, Status
from gpunode.report.style import STATUS_MARK, STATUS_STYLE, layer_label


def render_diagnosis(report: Report, console: Console) -> None:
    console.print(_header(report))
    if report.cluster.root_causes:
        console.print(Text("Cluster-wide root causes", style="bold underline"))
        for rc in report.cluster.root_causes:
            console.print(_root_cause_panel(rc, "cluster", ()))
    for node in report.nodes:
        _render_node(node, console)
    console.print(_fleet(report))
    for warning in report.source.warnings:
        console.print(Text(f"warning: {warning}", style="yellow"))


def _header(report: Report) -> Text:
    src = report.source
    name = report.cluster.name or "cluster"
    when = f", collected {src.collected_at}" if src.collected_at else ""
    partial = " (partial collection)" if src.partial else ""
    return Text.assemble(
        ("gpunode diagnose", "bold"), f" — {name} from {src.kind} {src.location}{when}{partial}\n"
    )


def _render_node(node: NodeReport, console: Console) -> None:
    if not node.root_causes:
        return
    for rc in node.root_causes:
        blocked = [c.component for c in node.components if rc.component in c.blocked_by]
        console.print(_root_cause_panel(rc, node.name, blocked))
    blocked_rows = [c for c in node.components if c.blocked_by]
    if blocked_rows:
        console.print(_blocked_table(node.name, blocked_rows))


def _blocked_table(node: str, components: list[ComponentReport]) -> Table:
    """What the root causes take down with them, and how each of those looks now."""
    table = Table(title=f"{node}: blocked", title_justify="left", show_edge=False)
    for column in ("component", "status", "blocked by", "what it shows"):
        table.add_column(column, overflow="fold")
    for comp in components:
        status = Text(comp.status.value, style=STATUS_STYLE[comp.status])
        table.add_row(comp.component, status, ", ".join(comp.blocked_by), comp.summary)
    return table


def _root_cause_panel(rc: RootCause, where: str, blocked: Iterable[str]) -> Panel:
    body: list[Text | Padding] = [Text(rc.title, style="bold")]
    if rc.explanation:
        body.append(Text(rc.explanation, style="dim"))
    body.append(Text("evidence", style="underline"))
    body.extend(Padding(Text.assemble((ev.source, "cyan"), "  ", ev.excerpt), (0, 2)) for ev in rc.evidence)
    if rc.fix:
        body.append(Text.assemble(("fix  ", "underline"), rc.fix))
    if rc.next_steps:
        body.append(Text("next", style="underline"))
        body.extend(Padding(Text(f"$ {step}", style="green"), (0, 2)) for step in rc.next_steps)
    blocked = list(blocked)
    if blocked:
        body.append(Text.assemble(("blocked by this: ", "underline"), ", ".join(blocked)))
    if rc.unverified_below:
        body.append(Text(f"verify first (no data): {', '.join(rc.unverified_below)}", style="magenta"))
    title = Text.assemble(
        (f"{STATUS_MARK[rc.status]} {where}", STATUS_STYLE[rc.status]),
        f"  {layer_label(rc.layer)} · ",
        (rc.component, "bold"),
        f" · {rc.cause}",
    )
    return Panel(Group(*body), title=title, title_align="left", border_style=STATUS_STYLE[rc.status])


def _fleet(report: Report) -> Table:
    table = Table(title="Fleet summary", title_justify="left", show_edge=False, expand=False)
    table.add_column("root cause")
    table.add_column("component")
    table.add_column("nodes")
    for group in report.groups:
        table.add_row(group.cause, group.component, ", ".join(group.nodes))
    for rc in report.cluster.root_causes:
        table.add_row(rc.cause, rc.component, "(cluster-wide)")
    for status in (Status.OK, Status.UNKNOWN):
        names = [n.name for n in report.nodes if n.status == status and not n.root_causes]
        if names:
            table.add_row(Text(status.value, style=STATUS_STYLE[status]), "", ", ".join(names))
    if not report.nodes:
        table.add_row(Text("no GPU nodes found", style="magenta"), "", "")
    return table
