"""The terminal diagnosis: the fleet summary first, then each root cause, then (--stack) pictures.

Laid out for 80 columns and for pipes: identifiers are never split mid-word,
suggested commands are printed unwrapped on lines of their own (copyable), and
without a terminal there is no box drawing.
"""

from __future__ import annotations

from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from gpunode import gpucount
from gpunode.model import ComponentReport, NodeReport, Report, RootCause, Status
from gpunode.report import daemonsets, fleet, fleetview, workloads
from gpunode.report.openref import shown_open
from gpunode.report.options import DEFAULT, RenderOptions
from gpunode.report.style import (
    STATUS_MARK,
    STATUS_STYLE,
    layer_label,
    not_gpu_line,
    paragraph,
    table_box,
)

# Nodes listed by name under a grouped root cause before "… and N more".
_NAMES_SHOWN = 8
# Reasons for unknown components listed under the unknown nodes.
_REASONS_SHOWN = 5


def render_diagnosis(report: Report, console: Console, options: RenderOptions = DEFAULT) -> None:
    console.print(header(report, "diagnose"))
    fleet_rows = fleet.rows(report, expand=options.expand)
    for skipped in report.not_gpu_nodes:
        console.print(not_gpu_line(skipped), soft_wrap=True)
    _gpu_lines(report, console)
    if not report.not_gpu_nodes or report.nodes:
        console.print(_verdict(report, fleet_rows, options.narrowed))
    if fleet_rows:
        _print_fleet_table(report, fleet_rows, console, options.expand)
    for status, names in fleet.healthy_worst_first(report):
        console.print(Text.assemble((f"{status.value}: ", STATUS_STYLE[status]), _names(names, options)))
        chosen = [n for n in report.nodes if n.name in set(names)]
        if status == Status.UNKNOWN:
            _unknown_why(chosen, console, options)
        elif status == Status.OK:  # judged from the cluster lists: what was not read, as a note
            for why in fleet.not_read_reasons(chosen)[:_REASONS_SHOWN]:
                paragraph(console, f"{why.text} on {_names(list(why.nodes), options)}", 2, "dim")
    fleetview.render(report, console, options.expand)
    for row in fleet_rows:
        console.print()
        _render_row(report, row, console, options)
    workloads.render(report, console, options.expand)
    daemonsets.render(report, console)
    if options.show_stack:
        from gpunode.report.stack import render_stack

        console.print()
        render_stack(report, console, options)


def _gpu_lines(report: Report, console: Console) -> None:
    """What an operator counts first: GPUs usable of those counted, then per GPU class."""
    if report.gpus is None or not (line := gpucount.headline(report.gpus)):
        return
    console.print(Text(line, style="bold"))
    for each in gpucount.class_lines(report.gpus):
        paragraph(console, each, 2)


def header(report: Report, command: str) -> Text:
    src = report.source
    name = report.cluster.name or "cluster"
    when = f", collected {src.collected_at}" if src.collected_at else ""
    partial = " (partial collection)" if src.partial else ""
    context = f" [context {src.context}]" if src.context else ""
    return Text.assemble(
        (f"gpunode {command}", "bold"), f" — {name}{context} from {src.kind} {src.location}{when}{partial}"
    )


def _verdict(report: Report, fleet_rows: list[fleet.FleetRow], narrowed: bool = False) -> Text:
    affected = {n.name for n in report.nodes if n.root_causes}
    drain = {name for r in fleet_rows if r.drain for name in r.nodes}
    causes = len({(r.cause, r.component) for r in fleet_rows})
    hit = workloads.verdict(report)
    if not fleet_rows:
        if not report.nodes:
            return Text("No GPU nodes found.", style="magenta")
        if hit:
            return Text(f"No stack root cause found on {len(report.nodes)} GPU nodes, but {hit} (below).\n",
                        style="bold red")
        if narrowed:  # the filter hid what there is: say so, never "none found"
            return Text(f"No root cause shown on {len(report.nodes)} GPU nodes (--component/--layer).",
                        style="bold")
        return Text(f"No root cause found on {len(report.nodes)} GPU nodes.", style="green")
    parts = [
        f"{len(affected)} of {len(report.nodes)} GPU nodes affected",
        f"{causes} distinct root cause{'s' if causes != 1 else ''}",
    ]
    if report.cluster.root_causes:
        parts.append(f"{len(report.cluster.root_causes)} cluster-wide")
    if drain - {fleet.CLUSTER}:
        parts.append(f"{len(drain - {fleet.CLUSTER})} to drain")
    if hit:
        parts.append(hit)
    return Text(", ".join(parts) + "\n", style="bold")


def _print_fleet_table(report: Report, fleet_rows: list[fleet.FleetRow], console: Console,
                       wide: bool) -> None:
    """Wide: the columns at their own width, as ``kubectl get -o wide`` (lines may be long)."""
    table = _fleet_table(report, fleet_rows, console, wide)
    if not wide:
        console.print(table)
        return
    width, console.width = console.width, max(console.width, 240)
    console.print(table)
    console.width = width


def _fleet_table(report: Report, fleet_rows: list[fleet.FleetRow], console: Console,
                 wide: bool = False) -> Table:
    """AGE as kubectl prints it, counted to the collection time; wide adds the layer and
    the time itself (SINCE)."""
    table = Table(box=table_box(console), show_edge=False, pad_edge=False, header_style="bold")
    columns = ("NODE", "GPUS", "COMPONENT", "LAYER", "CAUSE", "AGE", "SINCE", "BLOCKED") if wide else (
        "NODE", "GPUS", "COMPONENT", "CAUSE", "AGE", "BLOCKED")
    for column in columns:
        table.add_column(column, no_wrap=True, overflow="ellipsis")
    by_name = {n.name: n for n in report.nodes}
    collected = report.source.collected_at
    for r in fleet_rows:
        mark = Text(f"{STATUS_MARK[r.status]} {r.label}", style=STATUS_STYLE[r.status])
        cause = r.cause + (" (drain)" if r.drain else "")
        when = fleet.age(r.since, collected)
        cells = (r.component, f"L{r.layer}", cause, when, fleet.short_time(r.since)) if wide else (
            r.component, cause, when)
        table.add_row(mark, gpucount.nodes_cell(by_name, r.nodes), *cells, str(r.blocked))
    return table


def _unknown_why(nodes: list[NodeReport], console: Console, options: RenderOptions) -> None:
    """Under the unknown nodes: what data was missing and why, with what it left unknown."""
    for why in fleet.unknown_reasons(nodes)[:_REASONS_SHOWN]:
        where = _names(list(why.nodes), options)
        paragraph(console, f"{why.text} — {', '.join(why.components)} on {where}", 2, "dim")


def _names(names: list[str], options: RenderOptions) -> str:
    if options.expand or len(names) <= _NAMES_SHOWN:
        return ", ".join(names)
    return ", ".join(names[:_NAMES_SHOWN]) + f" … and {len(names) - _NAMES_SHOWN} more (--all)"


def _render_row(report: Report, row: fleet.FleetRow, console: Console, options: RenderOptions) -> None:
    nodes = {n.name: n for n in report.nodes}
    first = nodes.get(row.nodes[0])
    rc = _find(report, first, row)
    where = row.nodes[0] if len(row.nodes) == 1 else f"{len(row.nodes)} nodes"
    blocked = fleet.blocked_by(first, rc) if first is not None else []
    _root_cause(rc, where, blocked, console, first)
    if len(row.nodes) > 1:
        paragraph(console, _names(list(row.nodes), options), 2, lead=Text("nodes: ", style="underline"))
    elif first is not None:
        components = [c for c in first.components if rc.component in c.blocked_by]
        if components:
            console.print(_blocked_table(components, console))
    _commands(rc, console)


def _find(report: Report, node: NodeReport | None, row: fleet.FleetRow) -> RootCause:
    pool = node.root_causes if node is not None else report.cluster.root_causes
    return next(rc for rc in pool if rc.cause == row.cause and rc.component == row.component)


def _root_cause(rc: RootCause, where: str, blocked: list[str], console: Console,
                node: NodeReport | None = None) -> None:
    why = _unverified_why(rc, node)
    since = f", since {fleet.short_time(rc.since)}" if rc.since else ""
    console.print(
        Text.assemble(
            (f"{STATUS_MARK[rc.status]} {where}", STATUS_STYLE[rc.status]),
            " · ",
            (rc.component, "bold"),
            f" · {rc.cause}  ({layer_label(rc.layer)}{since})",
        )
    )
    paragraph(console, rc.title, 2, "bold")
    if rc.explanation:
        paragraph(console, rc.explanation, 2, "dim")
    console.print(Text("  evidence", style="underline"))
    for ev in rc.evidence:
        console.print(Text(f"    {ev.source}", style="cyan"), soft_wrap=True)
        if (opened := shown_open(ev)) is not None:
            console.print(Text(f"      open: {opened}", style="dim"), soft_wrap=True)
        paragraph(console, ev.excerpt, 6)
    if rc.fix:
        paragraph(console, rc.fix, 2, lead=Text("fix: ", style="underline"))
    if blocked:
        paragraph(console, ", ".join(blocked), 2, lead=Text("blocked by this: ", style="underline"))
    if rc.unverified_below:
        paragraph(console, f"verify first (no data): {', '.join(rc.unverified_below)}{why}", 2, "magenta")


def _unverified_why(rc: RootCause, node: NodeReport | None) -> str:
    """Why the first unverified component below a root cause has no data (`` — no …: …``)."""
    if node is None:
        return ""
    why = [w for w in fleet.unknown_reasons([node]) if set(w.components) & set(rc.unverified_below)]
    return f" — {why[0].text}" if why else ""


def _blocked_table(components: list[ComponentReport], console: Console) -> Padding:
    """What the root cause takes down with it, and how each of those looks now."""
    table = Table(box=table_box(console), show_edge=False, pad_edge=False, header_style="bold")
    table.add_column("BLOCKED", no_wrap=True)
    table.add_column("STATUS", no_wrap=True)
    table.add_column("WHAT IT SHOWS", overflow="fold")
    for comp in components:
        table.add_row(comp.component, Text(comp.status.value, style=STATUS_STYLE[comp.status]), comp.summary)
    return Padding(table, (0, 0, 0, 2))


def _commands(rc: RootCause, console: Console) -> None:
    """Next steps as plain shell lines, never wrapped, so they can be copied as printed."""
    if not rc.next_steps:
        return
    console.print(Text("  next", style="underline"))
    for step in rc.next_steps:
        note = "  # on the node" if fleet.node_only(step) else ""
        console.print(Text.assemble(("  $ ", "dim"), (step, "green"), (note, "dim")), soft_wrap=True)


__all__ = ["header", "render_diagnosis"]


