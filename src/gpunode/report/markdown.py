"""Markdown output, for tickets and chat: the same content and order as the table (a
diagnosis, its stacks, or a validation's readiness)."""

from __future__ import annotations

from rich.console import Console

from gpunode import gpucount
from gpunode.model import ComponentReport, Evidence, Report, RootCause
from gpunode.report import daemonsets, fleet, fleetview, workloads
from gpunode.report.openref import shown_open
from gpunode.report.options import DEFAULT, RenderOptions
from gpunode.report.style import VERDICT_MARK, score_text
from gpunode.report.waivers import waived_label, waiver_lines
from gpunode.validation import CheckResult, ValidationReport, Verdict


def render_diagnosis(report: Report, console: Console, options: RenderOptions = DEFAULT) -> None:
    lines = diagnosis_lines(report, options)
    if options.show_stack:
        lines += ["", *_stack_lines(report)]
    console.file.write("\n".join(lines) + "\n")


def render_stack(report: Report, console: Console, options: RenderOptions = DEFAULT) -> None:
    console.file.write("\n".join(_stack_lines(report)) + "\n")


def _stack_lines(report: Report) -> list[str]:
    lines = [f"# GPU stack — {report.cluster.name or 'cluster'}", ""]
    lines += [f"**{n.name}**: not a GPU node — {n.reason}" for n in report.not_gpu_nodes]
    for node in fleet.worst_first(report.nodes):
        lines += [f"## {node.name} ({node.status.value})", "", *_component_table(node.components), ""]
    return lines


def diagnosis_lines(report: Report, options: RenderOptions = DEFAULT) -> list[str]:
    context = f" (context {report.source.context})" if report.source.context else ""
    lines = [f"# gpunode diagnosis — {report.cluster.name or 'cluster'}{context}", ""]
    lines += [f"**{n.name}**: not a GPU node — {n.reason}" for n in report.not_gpu_nodes]
    rows = fleet.rows(report, expand=options.expand)
    lines += ["## Fleet summary", ""]
    if report.gpus is not None and (headline := gpucount.headline(report.gpus)):
        classes = [f"- {c}" for c in gpucount.class_lines(report.gpus)]
        lines += [f"**{headline}**", "", *classes, *([""] if classes else [])]
    lines += ["| node | gpus | component | cause | since | blocked |",
              "| --- | --- | --- | --- | --- | --- |"]
    nodes = {n.name: n for n in report.nodes}
    for r in rows:
        drain = " (drain)" if r.drain else ""
        gpus = gpucount.nodes_cell(nodes, r.nodes)
        lines.append(f"| {r.label} | {gpus} | {r.component} | `{r.cause}`{drain} "
                     f"| {fleet.short_time(r.since)} | {r.blocked} |")
    for status, names in fleet.healthy_worst_first(report):
        lines.append(f"| {', '.join(names)} | {gpucount.nodes_cell(nodes, names)} | | ({status.value}) | | |")
    lines.append("")
    lines += fleetview.markdown(report.fleet, options.expand)
    for r in rows:
        node = nodes.get(r.nodes[0])
        pool = node.root_causes if node is not None else report.cluster.root_causes
        rc = next(x for x in pool if x.cause == r.cause and x.component == r.component)
        where = r.nodes[0] if len(r.nodes) == 1 else f"{len(r.nodes)} nodes"
        lines += _root_cause(where, rc, fleet.blocked_by(node, rc) if node else [])
        if len(r.nodes) > 1:
            lines[-1:-1] = [f"- nodes: {', '.join(r.nodes)}"]
    return lines + workloads.markdown(report, options.expand) + daemonsets.markdown(report)


def _root_cause(where: str, rc: RootCause, blocked: list[str]) -> list[str]:
    lines = [
        f"## {where}: `{rc.cause}` — {rc.title}",
        "",
        f"- layer {rc.layer}, component `{rc.component}`, status {rc.status.value}",
    ]
    if rc.since:
        lines.append(f"- since {rc.since}")
    if blocked:
        lines.append(f"- blocks: {', '.join(blocked)}")
    lines += ["", "Evidence:", ""]
    lines += [f"- `{ev.source}`: {ev.excerpt}{_opened(ev)}" for ev in rc.evidence]
    if rc.fix:
        lines += ["", f"Fix: {rc.fix}"]
    if rc.next_steps:
        steps = [s + ("  # on the node" if fleet.node_only(s) else "") for s in rc.next_steps]
        lines += ["", "Next steps:", "", "```sh", *steps, "```"]
    return [*lines, ""]


def _component_table(components: tuple[ComponentReport, ...]) -> list[str]:
    rows = ["| layer | component | status | summary |", "| --- | --- | --- | --- |"]
    for comp in sorted(components, key=lambda c: c.layer):
        blocked = f" (blocked by {', '.join(comp.blocked_by)})" if comp.blocked_by else ""
        rows.append(f"| {comp.layer} | {comp.component} | {comp.status.value} | {comp.summary}{blocked} |")
    return rows


def render_validation(report: ValidationReport, console: Console, _fail_on: Verdict = Verdict.FAIL) -> None:
    console.file.write("\n".join(validation_lines(report)) + "\n")


def validation_lines(report: ValidationReport) -> list[str]:
    src = report.source
    lines = [
        f"# Cluster readiness — {report.cluster or 'cluster'}",
        "",
        f"**Verdict: {report.headline}** (from {src.kind} `{src.location}`"
        + (f", collected {src.collected_at})" if src.collected_at else ")"),
        "",
        "| category | verdict | score | pass | warn | fail | skip | unknown |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for cat in report.categories:
        counts = " | ".join(
            str(cat.counts.get(v.value, 0))
            for v in (Verdict.PASS, Verdict.WARN, Verdict.FAIL, Verdict.SKIP, Verdict.UNKNOWN)
        )
        lines.append(f"| {cat.name} | {cat.verdict.value} | {score_text(cat.score)} | {counts} |")
    if report.waivers:
        lines += ["", *(f"- {_cell(line)}" for line in waiver_lines(report))]
    for cat in report.categories:
        lines += ["", f"## {cat.name}", "", "| | check | verdict | summary |", "| --- | --- | --- | --- |"]
        lines += [
            f"| {VERDICT_MARK[c.verdict]} | `{c.id}` | {c.verdict.value} "
            f"| {_cell(c.summary + waived_label(c))} |"
            for c in cat.checks
        ]
    details = [c for c in report.checks() if c.counted in (Verdict.FAIL, Verdict.WARN, Verdict.UNKNOWN)]
    if details:
        lines += ["", "## What to fix", ""]
        for check in details:
            lines += _check_detail(check)
    return lines


def _check_detail(check: CheckResult) -> list[str]:
    lines = [f"### `{check.id}` — {check.title} ({check.verdict.value})", "", check.summary, ""]
    lines += [f"- `{ev.source}`: {ev.excerpt}{_opened(ev)}" for ev in check.evidence]
    if check.fix:
        lines += ["", f"Fix: {check.fix}"]
    return [*lines, ""]


def _opened(ev: Evidence) -> str:
    opened = shown_open(ev)
    return f" (open: `{opened}`)" if opened is not None else ""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
