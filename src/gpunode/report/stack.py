"""The stack picture: each GPU node drawn as layers (bands) of coloured components.

A few nodes get the full picture; a fleet gets a compact grid, one line per node
and one cell per component, so 500 nodes are 500 lines rather than 15,000.
"""

from __future__ import annotations

from itertools import groupby

from rich.console import Console
from rich.text import Text

from gpunode.model import ComponentReport, NodeReport, Report, Status
from gpunode.report.fleet import worst_first
from gpunode.report.options import DEFAULT, RenderOptions
from gpunode.report.style import STATUS_MARK, STATUS_STYLE, layer_label, not_gpu_line, paragraph

# More nodes than this are drawn as the grid unless every picture is asked for.
FULL_PICTURES_MAX = 3


def render_stack(report: Report, console: Console, options: RenderOptions = DEFAULT) -> None:
    for skipped in report.not_gpu_nodes:
        console.print(not_gpu_line(skipped), soft_wrap=True)
    if report.cluster.components:
        console.print(Text("cluster", style="bold"))
        _details(report.cluster.components, console)
    nodes = tuple(worst_first(report.nodes))  # broken nodes before healthy ones
    if len(nodes) > FULL_PICTURES_MAX and not options.expand:
        render_grid(nodes, console)
        return
    for node in nodes:
        _node_picture(node, console)


def _node_title(node: NodeReport) -> Text:
    gpus = f"{node.gpus}x {node.gpu_product}" if node.gpus else "GPUs unknown"
    return Text.assemble((f"{STATUS_MARK[node.status]} {node.name}", STATUS_STYLE[node.status]), f"  {gpus}")


def _node_picture(node: NodeReport, console: Console) -> None:
    """The layer bands (boxed on a terminal), then the component details below them."""
    console.print(_node_title(node), soft_wrap=True)
    _bands(node.components, console)
    _details(node.components, console)
    console.print()


def _bands(components: tuple[ComponentReport, ...], console: Console) -> None:
    """One row per layer, top layer first, like the diagram an engineer draws; a row
    wraps between components, never inside a name."""
    label_width = max(len(layer_label(c.layer)) for c in components) + 2 if components else 0
    room = max(console.width - label_width - 2, 20)
    ordered = sorted(components, key=lambda c: -c.layer)
    for layer, comps in groupby(ordered, key=lambda c: c.layer):
        line, used = Text("  " + layer_label(layer).ljust(label_width), style="bold"), 0
        for comp in comps:
            badge = f"{STATUS_MARK[comp.status]} {comp.component}"
            if used and used + len(badge) + 2 > room:
                console.print(line, soft_wrap=True)
                line, used = Text(" " * (label_width + 2)), 0
            style = STATUS_STYLE[comp.status]
            if console.is_terminal:
                style = f"reverse {style}"
            line.append(f" {badge} " if console.is_terminal else badge, style=style)
            line.append("  " if not console.is_terminal else " ")
            used += len(badge) + 2
        console.print(line, soft_wrap=True)


def _details(components: tuple[ComponentReport, ...], console: Console) -> None:
    """Each component bottom-up: status and version, why, and its pods (one per line, unwrapped)."""
    for comp in sorted(components, key=lambda c: c.layer):
        line = Text.assemble(
            (f"{STATUS_MARK[comp.status]} {comp.component}", STATUS_STYLE[comp.status]),
            f"  {comp.status.value}",
            (f"  {comp.version}" if comp.version else "", "dim"),
        )
        console.print(Text("  ").append_text(line), soft_wrap=True)
        reason = comp.summary + (f" [blocked by {', '.join(comp.blocked_by)}]" if comp.blocked_by else "")
        if reason:
            paragraph(console, reason, 6)
        for p in comp.pods:
            pod = f"      pod {p.namespace}/{p.name} {p.ready} {p.state}"
            console.print(Text(pod, style="dim"), soft_wrap=True)


def render_grid(nodes: tuple[NodeReport, ...], console: Console) -> None:
    """One line per node, one cell per component grouped by layer, then a legend."""
    order = _component_order(nodes)
    layers = [(layer, [c for c in order if c[0] == layer]) for layer in sorted({c[0] for c in order})]
    width = max((len(n.name) for n in nodes), default=4) + 2
    head = Text("NODE".ljust(width), style="bold")
    for layer, comps in layers:
        head.append(f"L{layer}".ljust(len(comps) + 1), style="bold")
    console.print(head)
    for node in nodes:
        by_id = {c.component: c.status for c in node.components}
        line = Text(node.name.ljust(width), style=STATUS_STYLE[node.status])
        for _, comps in layers:
            for _, cid in comps:
                status = by_id.get(cid)
                if status is None:
                    line.append(" ")
                else:
                    line.append(STATUS_MARK[status], style=STATUS_STYLE[status])
            line.append(" ")
        line.rstrip()
        console.print(line, soft_wrap=True)
    console.print()
    for layer, comps in layers:
        names = ", ".join(cid for _, cid in comps)
        console.print(Text(f"L{layer} = {names}", style="dim"))
    marks = "  ".join(f"{STATUS_MARK[s]} {s.value}" for s in Status)
    console.print(Text(f"{marks}   (-o wide draws every node's full picture)", style="dim"))


def _component_order(nodes: tuple[NodeReport, ...]) -> list[tuple[int, str]]:
    seen: dict[str, int] = {}
    for node in nodes:
        for comp in node.components:
            seen.setdefault(comp.component, comp.layer)
    return sorted(((layer, cid) for cid, layer in seen.items()), key=lambda c: c[0])
