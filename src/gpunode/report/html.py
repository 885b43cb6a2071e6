"""One self-contained HTML file (no external assets): (from ``validate``) the six readiness
categories first, then the fleet summary, root causes with evidence, and each node's stack
drawn bottom-up, what blocks each component listed inside it, and filters.

Everything a reader needs is in the markup itself; the small inline script only adds
filtering and the highlight of blockers on hover, so the content is there without JavaScript.
"""

from __future__ import annotations

from html import escape
from itertools import groupby
from typing import TYPE_CHECKING

from gpunode import gpucount
from gpunode.model import LAYER_NAMES, ComponentReport, Evidence, NodeReport, Report, RootCause, Status
from gpunode.report import changes, fleet, fleetview, workloads
from gpunode.report.options import DEFAULT, RenderOptions
from gpunode.report.style import STATUS_MARK, layer_label

if TYPE_CHECKING:
    from rich.console import Console

    from gpunode.validation import CheckResult, ValidationReport


def render(report: Report, console: Console, options: RenderOptions = DEFAULT) -> None:
    """The ``-o html`` reporter: the page on stdout."""
    console.file.write(render_html(report))


def render_html(report: Report, validation: ValidationReport | None = None) -> str:
    """The whole page as one string."""
    rows = fleet.rows(report, expand=False)
    name = escape(report.cluster.name or "cluster")
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>gpunode — {name}</title><style>{_asset('report.css')}</style></head><body>",
        _header(report, rows, validation),
        # a validate page leads with its readiness table, then the diagnosis behind it
        *([_validation(validation)] if validation is not None else []),
        _filters(),
        _fleet(report, rows),
        fleetview.html(report.fleet),
        *filter(None, [changes.since_html(report.changes_since)]),
        _root_causes(report, rows),
        workloads.html(report),
    ]
    parts += [_stacks(report), f"<script>{_asset('report.js')}</script></body></html>", ""]
    return "\n".join(parts)


def _header(report: Report, rows: list[fleet.FleetRow], validation: ValidationReport | None) -> str:
    src = report.source
    bits = [f"{escape(src.kind)} {escape(src.path or src.location)}"]
    if src.context:
        bits.append(f"context <b>{escape(src.context)}</b>")
    if src.collected_at:
        bits.append(f"collected {escape(src.collected_at)}")
    bits.append(f"gpunode {escape(report.gpunode_version)}")
    affected = sum(1 for n in report.nodes if n.root_causes)
    drain = len({n for r in rows if r.drain for n in r.nodes})
    verdict = f"{affected} of {len(report.nodes)} GPU nodes affected · {len(rows)} root-cause rows"
    if report.gpus is not None and (gpus := gpucount.headline(report.gpus)):
        classes = "".join(f"<li>{escape(c)}</li>" for c in gpucount.class_lines(report.gpus))
        verdict = f"<b>{escape(gpus)}</b>{f'<ul>{classes}</ul>' if classes else ''} · {verdict}"
    if drain:
        verdict += f" · <b>{drain} to drain</b>"
    if hit := workloads.verdict(report):
        verdict += f" · <b>{escape(hit)}</b>"
    if validation is not None:
        verdict += f" · readiness: <b>{escape(validation.headline)}</b>"
    warnings = "".join(f'<li class="warn">warning: {escape(w)}</li>' for w in src.warnings)
    return (
        f"<header><h1>gpunode — {escape(report.cluster.name or 'cluster')}</h1>"
        f'<p class="meta">{" · ".join(bits)}</p><p class="verdict" id="verdict">{verdict}</p>'
        f"{f'<ul>{warnings}</ul>' if warnings else ''}</header>"
    )


def _filters() -> str:
    statuses = "".join(f'<option value="{s.value}">{s.value}</option>' for s in Status)
    layers = "".join(f'<option value="{n}">{escape(layer_label(n))}</option>' for n in LAYER_NAMES)
    return (
        '<nav id="filters">'
        f'<label>status <select id="f-status"><option value="">all</option>{statuses}</select></label>'
        f'<label>layer <select id="f-layer"><option value="">all</option>{layers}</select></label>'
        '<label>node <input id="f-node" type="search" placeholder="name contains…"></label>'
        '<span id="f-count"></span></nav>'
    )


def _fleet(report: Report, rows: list[fleet.FleetRow]) -> str:
    body = []
    by_name = {n.name: n for n in report.nodes}
    for r in rows:
        nodes = " ".join(r.nodes)
        label = (
            escape(r.label)
            if len(r.nodes) == 1
            else f"<details><summary>{escape(r.label)}</summary>{escape(', '.join(r.nodes))}</details>"
        )
        drain = ' <span class="drain">drain</span>' if r.drain else ""
        body.append(
            f'<tr class="fleet-row s-{r.status.value}" data-status="{r.status.value}" data-layer="{r.layer}" '
            f'data-nodes="{escape(nodes)}"><td>{STATUS_MARK[r.status]} {label}</td>'
            f"<td>{escape(gpucount.nodes_cell(by_name, r.nodes))}</td>"
            f"<td>{escape(r.component)}</td><td><code>{escape(r.cause)}</code>{drain}"
            f"<div class=sub>{escape(r.title)}</div></td>"
            f"<td>{escape(fleet.short_time(r.since))}</td><td>{r.blocked}</td></tr>"
        )
    healthy = "".join(
        f'<p class="healthy s-{s.value}">{escape(s.value)}: {len(names)} nodes — '
        f'{escape(", ".join(names[:20]))}'
        f"{' …' if len(names) > 20 else ''}</p>"
        for s, names in fleet.healthy_worst_first(report)
    )
    table = (
        "<table><thead><tr><th>node</th><th>gpus</th><th>component</th><th>cause</th><th>since</th><th>blocked</th></tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>"
        if body
        else '<p class="ok">No root cause found.</p>'
    )
    return f'<section id="fleet"><h2>Fleet summary</h2>{table}{healthy}</section>'


def _root_causes(report: Report, rows: list[fleet.FleetRow]) -> str:
    nodes = {n.name: n for n in report.nodes}
    out = []
    for r in rows:
        node = nodes.get(r.nodes[0])
        pool = node.root_causes if node is not None else report.cluster.root_causes
        rc = next(x for x in pool if x.cause == r.cause and x.component == r.component)
        blocked = fleet.blocked_by(node, rc) if node is not None else []
        out.append(_root_cause(rc, r, blocked))
    return f'<section id="root-causes"><h2>Root causes</h2>{"".join(out)}</section>'


def _root_cause(rc: RootCause, row: fleet.FleetRow, blocked: list[str]) -> str:
    where = row.nodes[0] if len(row.nodes) == 1 else f"{len(row.nodes)} nodes"
    evidence = "".join(
        f"<li><code>{escape(ev.source)}</code>{_opened(ev)}<pre>{escape(ev.excerpt)}</pre></li>"
        for ev in rc.evidence
    )
    steps = "\n".join(
        escape(s) + (" <span class=note># on the node</span>" if fleet.node_only(s) else "")
        for s in rc.next_steps
    )
    since = f" · since {escape(rc.since)}" if rc.since else ""
    extra = [f"<p><b>fix</b> {escape(rc.fix)}</p>" if rc.fix else ""]
    if blocked:
        extra.append(f"<p><b>blocked by this</b> {escape(', '.join(blocked))}</p>")
    if rc.unverified_below:
        extra.append(
            f'<p class="s-unknown">verify first (no data): {escape(", ".join(rc.unverified_below))}</p>'
        )
    if len(row.nodes) > 1:
        extra.append(f"<p><b>nodes</b> {escape(', '.join(row.nodes))}</p>")
    return (
        f'<article class="rc s-{rc.status.value}" data-status="{rc.status.value}" data-layer="{rc.layer}" '
        f'data-nodes="{escape(" ".join(row.nodes))}" data-cause="{escape(rc.cause)}">'
        f"<h3>{STATUS_MARK[rc.status]} {escape(where)} · {escape(rc.component)} · "
        f"<code>{escape(rc.cause)}</code></h3>"
        f'<p class="meta">{escape(layer_label(rc.layer))}{since}</p>'
        f'<p class="title">{escape(rc.title)}</p><p class="expl">{escape(rc.explanation)}</p>'
        f"<h4>evidence</h4><ul class=evidence>{evidence}</ul>{''.join(extra)}"
        f"{f'<h4>next</h4><pre class=cmd>{steps}</pre>' if steps else ''}</article>"
    )


def _opened(ev: Evidence) -> str:
    """What opens the evidence, where it tells more than its source (a copyable command)."""
    from gpunode.report.openref import shown_open

    opened = shown_open(ev)
    return f' <code class="open" title="open">{escape(opened)}</code>' if opened is not None else ""


def _validation(validation: ValidationReport) -> str:
    from gpunode.validation import Verdict

    cats = "".join(
        f'<tr class="v-{c.verdict.value}"><td>{escape(c.name)}</td><td>{escape(c.verdict.value)}</td>'
        f"<td>{'-' if c.score is None else f'{c.score:.0%}'}</td>"
        + "".join(f"<td>{c.counts.get(v.value, 0)}</td>" for v in Verdict)
        + "</tr>"
        for c in validation.categories
    )
    heads = "".join(f"<th>{v.value}</th>" for v in Verdict)
    failing = "".join(
        _check(c) for c in validation.checks() if c.counted.value in ("fail", "warn", "unknown")
    )
    from gpunode.report.waivers import waiver_lines

    waivers = "".join(f"<li>{escape(line)}</li>" for line in waiver_lines(validation))
    return (
        f'<section id="validate"><h2>Readiness: {escape(validation.headline)}</h2>'
        f"<table><thead><tr><th>category</th><th>verdict</th><th>score</th>{heads}</tr></thead>"
        f"<tbody>{cats}</tbody></table>"
        f"{f'<ul class=waivers>{waivers}</ul>' if waivers else ''}{failing}</section>"
    )


def _check(check: CheckResult) -> str:
    evidence = "".join(
        f"<li><code>{escape(e.source)}</code>{_opened(e)} {escape(e.excerpt)}</li>" for e in check.evidence
    )
    fix = f"<p><b>fix</b> {escape(check.fix)}</p>" if check.fix else ""
    return (
        f'<article class="check v-{check.verdict.value}"><h3>{escape(check.verdict.value)} · '
        f"<code>{escape(check.id)}</code> · {escape(check.category)}</h3><p>{escape(check.summary)}</p>"
        f"<ul class=evidence>{evidence}</ul>{fix}</article>"
    )


def _stacks(report: Report) -> str:
    ordered = fleet.worst_first(report.nodes)  # broken nodes first
    affected = [n for n in ordered if n.root_causes or n.status in (Status.FAILED, Status.DEGRADED)]
    rest = [n for n in ordered if n not in affected]
    drawn = "".join(_node(n) for n in affected)
    others = (
        f'<details id="other-stacks"><summary>{len(rest)} more nodes without a root cause</summary>'
        f"{''.join(_node(n) for n in rest)}</details>"
        if rest
        else ""
    )
    legend = "".join(f'<span class="comp s-{s.value}">{STATUS_MARK[s]} {s.value}</span>' for s in Status)
    return (
        f'<section id="stacks"><h2>Node stacks</h2><p class="legend">{legend} '
        "<span class=hover-key>point at a component to light up what blocks it and what it blocks"
        "</span></p>"
        f'<div class="grid">{drawn}</div>{others}</section>'
    )


def _node(node: NodeReport) -> str:
    gpus = f"{node.gpus}× {node.gpu_product}" if node.gpus else "GPUs unknown"
    layers = []
    ordered = sorted(node.components, key=lambda c: -c.layer)
    for layer, comps in groupby(ordered, key=lambda c: c.layer):
        cells = "".join(_component(node.name, c) for c in comps)
        layers.append(
            f'<div class="layer" data-layer="{layer}"><span class="label">{escape(layer_label(layer))}</span>'
            f'<div class="comps">{cells}</div></div>'
        )
    return (
        f'<div class="node s-{node.status.value}" data-status="{node.status.value}" '
        f'data-node="{escape(node.name)}">'
        f"<h3>{STATUS_MARK[node.status]} {escape(node.name)} <small>{escape(gpus)}</small></h3>"
        f'<div class="stack">{"".join(layers)}</div></div>'
    )


def _component(node: str, comp: ComponentReport) -> str:
    """A component's tile; what blocks it is a list of links inside it (no lines drawn
    across the stack), and pointing at it lights up both ends (report.js)."""
    blocked = " ".join(f"{node}--{b}" for b in comp.blocked_by)
    tip = comp.summary + (f" — blocked by {', '.join(comp.blocked_by)}" if comp.blocked_by else "")
    version = f"<small>{escape(comp.version)}</small>" if comp.version else ""
    by = "".join(f'<li><a href="#{escape(node)}--{escape(b)}">{escape(b)}</a></li>' for b in comp.blocked_by)
    listed = f'<ul class="blocked-by" aria-label="blocked by">{by}</ul>' if by else ""
    return (
        f'<div class="comp s-{comp.status.value}" id="{escape(node)}--{escape(comp.component)}" tabindex="0" '
        f'data-blocked-by="{escape(blocked)}" title="{escape(tip)}">'
        f"{STATUS_MARK[comp.status]} {escape(comp.component)}{version}{listed}</div>"
    )


def css() -> str:
    """The stylesheet every gpunode page inlines."""
    return _asset("report.css")


def _asset(name: str) -> str:
    from importlib.resources import files

    return (files("gpunode.report") / "assets" / name).read_text("utf-8")
