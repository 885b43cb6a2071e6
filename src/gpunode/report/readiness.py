"""The terminal view of a validation: verdict, category scores, every check, then what to fix."""

from __future__ import annotations

from rich.console import Console, Group
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from gpunode.model import Evidence, Report
from gpunode.report.groups import group_failures
from gpunode.report.openref import shown_open
from gpunode.report.style import (
    CLUSTER_STYLE,
    VERDICT_MARK,
    VERDICT_STYLE,
    paragraph,
    score_text,
    table_box,
)
from gpunode.report.waivers import waived_label, waiver_lines
from gpunode.validation import CategoryResult, CheckResult, ValidationReport, Verdict


def render_wide(report: ValidationReport, console: Console, fail_on: Verdict = Verdict.FAIL,
                diagnosis: Report | None = None) -> None:
    """``-o wide``: the same report, each check's table with its title and nodes as well."""
    render(report, console, fail_on, diagnosis, wide=True)


def render(
    report: ValidationReport,
    console: Console,
    _fail_on: Verdict = Verdict.FAIL,
    diagnosis: Report | None = None,
    *,
    wide: bool = False,
) -> None:
    console.print(_header(report))
    console.print(_scores(report, console))  # the readiness table first, then what fails and why
    console.print()
    for line in waiver_lines(report):
        paragraph(console, line, 0, "yellow" if "expired" in line else "dim")
    if report.waivers:
        console.print()
    _lead(report, diagnosis, console)
    for category in report.categories:
        console.print(_checks(category, console, wide))
    for check in report.checks():
        if check.counted in (Verdict.FAIL, Verdict.WARN, Verdict.UNKNOWN):
            console.print(_detail(check, console.is_terminal))
    for warning in report.source.warnings:
        console.print(Text(f"warning: {warning}", style="yellow"))


def _header(report: ValidationReport) -> Text:
    src = report.source
    when = f", collected {src.collected_at}" if src.collected_at else ""
    counts = {v: sum(1 for c in report.checks() if c.counted == v) for v in Verdict}
    words = ((Verdict.FAIL, "fail"), (Verdict.WARN, "warn"), (Verdict.UNKNOWN, "unknown"))
    waived = sum(1 for c in report.checks() if c.waived is not None)
    tally = ", ".join([f"{counts[v]} {word}" for v, word in words if counts[v]]
                      + ([f"{waived} waived"] if waived else []))
    return Text.assemble(
        ("Verdict: ", "bold"),
        (report.headline, CLUSTER_STYLE[report.verdict]),
        f" ({tally})" if tally else "",
        "\n",
        ("gpunode validate", "bold"),
        f" — {report.cluster or 'cluster'} from {src.kind} {src.location}{when}\n",
    )


def _lead(report: ValidationReport, diagnosis: Report | None, console: Console) -> None:
    """The failing checks first, under the root cause they share."""
    for group in group_failures(report, diagnosis):
        console.print(Text(group.headline() + ":", style="bold"))
        for check in group.checks:
            lead = Text.assemble(_verdict(check.verdict), f"  {check.id}  ")
            paragraph(console, check.summary, 2, "dim", lead=lead)
        console.print()


def _scores(report: ValidationReport, console: Console) -> Table:
    table = Table(title="Categories", title_justify="left", show_edge=False, box=table_box(console))
    for column in ("category", "verdict", "score", "pass", "warn", "fail", "skip", "unknown"):
        table.add_column(column, justify="left" if column in ("category", "verdict") else "right")
    for cat in report.categories:
        counts = [
            str(cat.counts.get(v.value, 0))
            for v in (Verdict.PASS, Verdict.WARN, Verdict.FAIL, Verdict.SKIP, Verdict.UNKNOWN)
        ]
        table.add_row(cat.name, _verdict(cat.verdict), score_text(cat.score), *counts)
    return table


def _opened(ev: Evidence) -> Text:
    opened = shown_open(ev)
    return Text(f"  (open: {opened})", style="dim") if opened is not None else Text("")


def _verdict(verdict: Verdict) -> Text:
    return Text(f"{VERDICT_MARK[verdict]} {verdict.value}", style=VERDICT_STYLE[verdict])


def _checks(category: CategoryResult, console: Console, wide: bool = False) -> Table:
    table = Table(
        title=category.name, title_justify="left", show_edge=False, show_header=wide, box=table_box(console)
    )
    table.add_column("verdict", no_wrap=True)
    table.add_column("check", no_wrap=True)
    if wide:
        table.add_column("title")
        table.add_column("nodes")
    table.add_column("summary")
    for check in category.checks:
        label = check.id + (" (active)" if check.active else "")
        more = [check.title, ", ".join(check.nodes) or "-"] if wide else []
        table.add_row(_verdict(check.verdict), label, *more, check.summary + waived_label(check))
    return table


def _detail(check: CheckResult, boxed: bool = True) -> Panel | Group:
    body: list[Text | Padding] = [Text(check.title, style="bold"), Text(check.summary)]
    if check.evidence:
        body.append(Text("evidence", style="underline"))
        body.extend(
            Padding(Text.assemble((ev.source, "cyan"), "  ", ev.excerpt, _opened(ev)), (0, 2))
            for ev in check.evidence
        )
    if check.fix:
        body.append(Text.assemble(("fix  ", "underline"), check.fix))
    title = Text.assemble(
        (f"{VERDICT_MARK[check.verdict]} {check.id}", VERDICT_STYLE[check.verdict]), f"  {check.category}"
    )
    if not boxed:  # piped: the same content without line art
        return Group(title, Padding(Group(*body), (0, 0, 1, 2)))
    return Panel(Group(*body), title=title, title_align="left", border_style=VERDICT_STYLE[check.verdict])
