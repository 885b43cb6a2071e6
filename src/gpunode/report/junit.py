"""JUnit XML: one test suite per category, one test case per check, so CI shows it natively.

Verdicts map to what CI systems understand, following ``--fail-on``: ``fail``
is a failure; ``warn`` and ``unknown`` are failures under ``--fail-on warn``,
otherwise a pass with the warning in system-out (warn) or a skip (unknown);
``skip`` is skipped.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from rich.console import Console

from gpunode.report.openref import shown_open
from gpunode.validation import CategoryResult, CheckResult, ValidationReport, Verdict


def render(report: ValidationReport, console: Console, fail_on: Verdict = Verdict.FAIL) -> None:
    console.file.write(to_junit(report, fail_on))


def to_junit(report: ValidationReport, fail_on: Verdict = Verdict.FAIL) -> str:
    root = ET.Element("testsuites", name=f"gpunode validate {report.cluster or 'cluster'}")
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    for category in report.categories:
        suite = _suite(category, fail_on)
        root.append(suite)
        for key in totals:
            totals[key] += int(suite.get(key, "0"))
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("errors", "0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _suite(category: CategoryResult, fail_on: Verdict) -> ET.Element:
    suite = ET.Element("testsuite", name=category.name)
    outcomes = [_case(check, fail_on) for check in category.checks]
    for case, _ in outcomes:
        suite.append(case)
    suite.set("tests", str(len(outcomes)))
    suite.set("failures", str(sum(1 for _, kind in outcomes if kind == "failure")))
    suite.set("errors", "0")
    suite.set("skipped", str(sum(1 for _, kind in outcomes if kind == "skipped")))
    return suite


def _case(check: CheckResult, fail_on: Verdict) -> tuple[ET.Element, str]:
    """The test case and how it counts: "failure", "skipped" or "passed"."""
    case = ET.Element(
        "testcase", classname=f"gpunode.validate.{check.category}", name=f"{check.id}: {check.title}"
    )
    strict = fail_on == Verdict.WARN
    if check.waived is not None:  # accepted until its waiver expires: not a failure in CI
        said = f"waived {check.verdict.value}: {check.waived} — {check.summary}"
        ET.SubElement(case, "skipped", message=said)
        return case, "skipped"
    if check.verdict == Verdict.FAIL or (strict and check.verdict in (Verdict.WARN, Verdict.UNKNOWN)):
        failure = ET.SubElement(case, "failure", message=check.summary, type=check.verdict.value)
        failure.text = _body(check)
        return case, "failure"
    if check.verdict in (Verdict.SKIP, Verdict.UNKNOWN):
        ET.SubElement(case, "skipped", message=f"{check.verdict.value}: {check.summary}")
        return case, "skipped"
    out = ET.SubElement(case, "system-out")
    out.text = (
        f"WARN: {check.summary}\n" if check.verdict == Verdict.WARN else f"{check.summary}\n"
    ) + _body(check)
    return case, "passed"


def _body(check: CheckResult) -> str:
    lines = [f"{ev.source}: {ev.excerpt}" + (f" (open: {ev.open})" if shown_open(ev) else "")
             for ev in check.evidence]
    if check.fix:
        lines.append(f"fix: {check.fix}")
    return "\n".join(lines)
