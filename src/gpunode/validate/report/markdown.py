"""Markdown output, for tickets and hand-over documents: the same content as the table."""

from __future__ import annotations

from rich.console import Console

from gpunode.validate.model import CheckResult, ValidationReport, Verdict
from gpunode.validate.report.style import VERDICT_MARK, score_text


def render(report: ValidationReport, console: Console, _fail_on: Verdict = Verdict.FAIL) -> None:
    console.file.write("\n".join(markdown_lines(report)) + "\n")


def markdown_lines(report: ValidationReport) -> list[str]:
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
    for cat in report.categories:
        lines += ["", f"## {cat.name}", "", "| | check | verdict | summary |", "| --- | --- | --- | --- |"]
        lines += [
            f"| {VERDICT_MARK[c.verdict]} | `{c.id}` | {c.verdict.value} | {_cell(c.summary)} |"
            for c in cat.checks
        ]
    details = [c for c in report.checks() if c.verdict in (Verdict.FAIL, Verdict.WARN, Verdict.UNKNOWN)]
    if details:
        lines += ["", "## What to fix", ""]
        for check in details:
            lines += _detail(check)
    return lines


def _detail(check: CheckResult) -> list[str]:
    lines = [f"### `{check.id}` — {check.title} ({check.verdict.value})", "", check.summary, ""]
    lines += [f"- `{ev.source}`: {ev.excerpt}" for ev in check.evidence]
    if check.fix:
        lines += ["", f"Fix: {check.fix}"]
    return [*lines, ""]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
