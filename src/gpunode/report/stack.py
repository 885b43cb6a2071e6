"""The stack picture: each GPU node drawn as layers (bands) of coloured components."""

from __future__ import annotations

from itertools import groupby

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from gpunode.model import ComponentReport, NodeReport, Report
from gpunode.report.style import STATUS_MARK, STATUS_STYLE, layer_label


def render_stack(report: Report, console: Console) -> None:
    if report.cluster.components:
        console.print(_band_table("cluster", report.cluster.components))
    for node in report.nodes:
        console.print(_node_panel(node))


def _node_panel(node: NodeReport) -> Panel:
    gpus = f"{node.gpus}x {node.gpu_product}" if node.gpus else "GPUs unknown"
    title = Text.assemble((f"{STATUS_MARK[node.status]} {node.name}", STATUS_STYLE[node.status]), f"  {gpus}")
    return Panel(
        Group(_bands(node.components), _details(node.components)),
        title=title,
        title_align="left",
        border_style=STATUS_STYLE[node.status],
    )


def _bands(components: tuple[ComponentReport, ...]) -> Table:
    """One row per layer, top layer first, like the diagram an engineer draws."""
    table = Table(show_header=False, show_edge=True, show_lines=True, expand=True, pad_edge=True)
    table.add_column("layer", style="bold", width=28, no_wrap=True)
    table.add_column("components")
    ordered = sorted(components, key=lambda c: -c.layer)
    for layer, comps in groupby(ordered, key=lambda c: c.layer):
        badges = Text()
        for comp in comps:
            badges.append(
                f" {STATUS_MARK[comp.status]} {comp.component} ", style=f"reverse {STATUS_STYLE[comp.status]}"
            )
            badges.append("  ")
        table.add_row(layer_label(layer), badges)
    return table


def _details(components: tuple[ComponentReport, ...]) -> Table:
    table = Table(show_edge=False, expand=True, box=None, padding=(0, 1))
    for column in ("component", "status", "version", "pods", "reason"):
        table.add_column(column, overflow="fold")
    for comp in sorted(components, key=lambda c: c.layer):
        pods = ", ".join(f"{p.name} {p.ready} {p.state}" for p in comp.pods) or "-"
        reason = comp.summary + (f" [blocked by {', '.join(comp.blocked_by)}]" if comp.blocked_by else "")
        status = Text(comp.status.value, style=STATUS_STYLE[comp.status])
        table.add_row(comp.component, status, comp.version or "-", pods, reason)
    return table


def _band_table(title: str, components: tuple[ComponentReport, ...]) -> Panel:
    return Panel(_details(components), title=title, title_align="left")
