"""The fleet analysis (report ``fleet``) as every reporter shows it, under the fleet summary:
nodes that differ from their peers, factors the failing nodes share, controllers wedged,
and the NVLink domains with their nodes (flagged domains first)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape
from typing import TypeVar

import msgspec
from rich.console import Console
from rich.text import Text

from gpunode.fleet.model import Correlation, Domain, FleetAnalysis, Outlier, Wedge
from gpunode.model import Report
from gpunode.report.style import paragraph

#: Entries of each list shown by the table and markdown before "… and N more".
SHOWN = 12
T = TypeVar("T")


def _shown(items: Sequence[T], expand: bool) -> tuple[Sequence[T], int]:
    if expand or len(items) <= SHOWN:
        return items, 0
    return items[:SHOWN], len(items) - SHOWN


def outlier_line(o: Outlier) -> str:
    return (f"{o.node}: {o.what}: {o.value} (peers {o.peers_value}, {o.peers} of {o.class_size} "
            f"in {o.peer_class})")


def merged(outliers: Sequence[Outlier]) -> list[Outlier]:
    """One entry for a node's differences with the same values (7 GPUs in NVML, capacity,
    allocatable and gpu.count: one line)."""
    out: list[Outlier] = []
    for o in outliers:
        last = out[-1] if out else None
        if last is not None and (last.node, last.peers_value, last.value) == (o.node, o.peers_value, o.value):
            out[-1] = msgspec.structs.replace(last, what=f"{last.what}; {o.what}")
        else:
            out.append(o)
    return out


def wedge_line(w: Wedge) -> str:
    age = f" for {w.age}" if w.age else ""
    return f"{w.object} {w.state}{age} — {w.owner}"


def domain_line(d: Domain) -> str:
    product = f" ({d.product})" if d.product else ""
    return f"{d.domain}{product}: {_nodes(d)} node(s)"


def domains_shown(fleet: FleetAnalysis) -> list[Domain]:
    """The NVLink domains, those with a flag first."""
    return sorted(fleet.nvlink_domains, key=lambda d: (not d.flags, d.domain))


def render(report: Report, console: Console, expand: bool) -> None:
    """The table's lines under the fleet summary; nothing for an empty analysis."""
    fleet = report.fleet
    _section(console, "Shared by the failing nodes", fleet.correlations, expand, _correlation)
    _section(console, "Nodes unlike their peers, without an error", merged(fleet.outliers), expand, _outlier)
    _section(console, "Wedged", fleet.wedges, expand, _wedge)
    _section(console, "NVLink domains", domains_shown(fleet), expand, _domain)


def _section(console: Console, title: str, items: Sequence[T], expand: bool,
             show: Callable[[Console, T], None]) -> None:
    if not items:
        return
    console.print(Text(f"{title} ({len(items)})", style="bold"))
    shown, more = _shown(items, expand)
    for item in shown:
        show(console, item)
    if more:
        console.print(Text(f"  … and {more} more (--all)", style="dim"))


def _correlation(console: Console, c: Correlation) -> None:
    paragraph(console, f"◆ {c.text}", 2)


def _outlier(console: Console, o: Outlier) -> None:
    paragraph(console, f"◇ {outlier_line(o)}", 2)


def _wedge(console: Console, w: Wedge) -> None:
    paragraph(console, f"■ {wedge_line(w)}", 2)
    for step in w.unwedge:
        console.print(Text(f"      $ {step}", style="cyan"), soft_wrap=True)


def _domain(console: Console, d: Domain) -> None:
    paragraph(console, f"{'▲' if d.flags else '▣'} {domain_line(d)}", 2)
    for flag in d.flags:
        paragraph(console, f"✗ {flag.text}", 6)


def markdown(fleet: FleetAnalysis, expand: bool) -> list[str]:
    """The markdown sections, or nothing."""
    lines: list[str] = []
    if fleet.correlations:
        lines += ["## Shared by the failing nodes", "",
                  "| factor | value | cause | failing with | failing without |",
                  "| --- | --- | --- | --- | --- |"]
        items, more = _shown(fleet.correlations, expand)
        lines += [f"| {c.factor} | {_cell(c.value)} | {c.cause} | {c.failing_with} of {c.nodes_with} "
                  f"| {c.failing_without} of {c.nodes_without} |" for c in items]
        lines += [f"| … and {more} more | | | | |"] if more else []
        lines.append("")
    if fleet.outliers:
        lines += ["## Nodes unlike their peers", "", "| node | class | what differs | peers | its value |",
                  "| --- | --- | --- | --- | --- |"]
        items_o, more = _shown(fleet.outliers, expand)
        lines += [f"| {o.node} | {_cell(o.peer_class)} | {o.what} | {_cell(o.peers_value)} ({o.peers} of "
                  f"{o.class_size}) | {_cell(o.value)} |" for o in items_o]
        lines += [f"| … and {more} more | | | | |"] if more else []
        lines.append("")
    if fleet.wedges:
        lines += ["## Wedged", ""]
        items_w, more = _shown(fleet.wedges, expand)
        for w in items_w:
            lines += [f"- **{w.object}** {_cell(w.state)}{f' for {w.age}' if w.age else ''} — {w.owner}: "
                      f"{w.text}", *[f"  - `{step}`" for step in w.unwedge]]
        lines += [f"- … and {more} more"] if more else []
        lines.append("")
    if fleet.nvlink_domains:
        lines += ["## NVLink domains", "", "| domain | GPU product | nodes | flagged |",
                  "| --- | --- | --- | --- |"]
        items_d, more = _shown(domains_shown(fleet), expand)
        lines += [f"| {d.domain} | {_cell(d.product or '')} | {_nodes(d)} | "
                  f"{'<br>'.join(_cell(f.text) for f in d.flags)} |" for d in items_d]
        lines += [f"| … and {more} more | | | |"] if more else []
        lines.append("")
    return lines


def _nodes(d: Domain) -> str:
    """How many nodes, and how many its product's other domains have where that differs."""
    return str(len(d.nodes)) + (f" of {d.usual_nodes}" if d.usual_nodes not in (None, len(d.nodes)) else "")


def html(fleet: FleetAnalysis) -> str:
    """The HTML section, or an empty string."""
    parts: list[str] = []
    if fleet.correlations:
        rows = "".join(
            f"<tr><td>{escape(c.factor)}</td><td>{escape(c.value)}</td>"
            f"<td><code>{escape(c.cause)}</code></td><td>{c.failing_with} of {c.nodes_with}</td>"
            f"<td>{c.failing_without} of {c.nodes_without}</td></tr>"
            for c in fleet.correlations)
        parts.append("<h3>Shared by the failing nodes</h3><table><thead><tr><th>factor</th><th>value</th>"
                     "<th>cause</th><th>failing with</th><th>failing without</th></tr></thead>"
                     f"<tbody>{rows}</tbody></table>")
    if fleet.outliers:
        rows = "".join(
            f"<tr><td>{escape(o.node)}</td><td>{escape(o.peer_class)}</td><td>{escape(o.what)}</td>"
            f"<td>{escape(o.peers_value)} ({o.peers} of {o.class_size})</td><td>{escape(o.value)}</td></tr>"
            for o in fleet.outliers)
        parts.append("<h3>Nodes unlike their peers</h3><table><thead><tr><th>node</th><th>class</th>"
                     "<th>what differs</th><th>peers</th><th>its value</th></tr></thead>"
                     f"<tbody>{rows}</tbody></table>")
    if fleet.wedges:
        items = "".join(
            f"<li><b>{escape(w.object)}</b> {escape(w.state)}{escape(f' for {w.age}' if w.age else '')} — "
            f"{escape(w.owner)}: {escape(w.text)}"
            f"<ul>{''.join(f'<li><code>{escape(s)}</code></li>' for s in w.unwedge)}</ul></li>"
            for w in fleet.wedges)
        parts.append(f"<h3>Wedged</h3><ul>{items}</ul>")
    if fleet.nvlink_domains:
        rows = "".join(
            f"<tr><td>{escape(d.domain)}</td><td>{escape(d.product or '')}</td><td>{escape(_nodes(d))}</td>"
            f"<td>{'<br>'.join(escape(f.text) for f in d.flags)}</td></tr>"
            for d in domains_shown(fleet))
        parts.append("<h3>NVLink domains</h3><table><thead><tr><th>domain</th><th>GPU product</th>"
                     f"<th>nodes</th><th>flagged</th></tr></thead><tbody>{rows}</tbody></table>")
    if not parts:
        return ""
    return f'<section id="fleet-analysis"><h2>Across the fleet</h2>{"".join(parts)}</section>'


def _cell(text: str) -> str:
    return text.replace("|", "\\|")
