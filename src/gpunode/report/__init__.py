"""Reporters: turn a Report (diagnose, stack) or a ValidationReport (validate) into text.
Registered by name for ``-o``.

Each reporter's module is imported when it is first used, so a command that prints
a table does not load the HTML, YAML or markdown writers (start-up time).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from gpunode.report.options import DEFAULT, RenderOptions

if TYPE_CHECKING:
    from rich.console import Console

    from gpunode.model import Report
    from gpunode.validation import ValidationReport, Verdict

Reporter = Callable[["Report", "Console", RenderOptions], None]
ValidateReporter = Callable[["ValidationReport", "Console", "Verdict"], None]


def _lazy(module: str, function: str) -> Reporter:
    def render(report: Report, console: Console, options: RenderOptions = DEFAULT) -> None:
        reporter: Reporter = getattr(importlib.import_module(f"gpunode.report.{module}"), function)
        reporter(report, console, options)

    return render


DIAGNOSE_REPORTERS: dict[str, Reporter] = {
    "table": _lazy("table", "render_diagnosis"),
    "wide": _lazy("table", "render_diagnosis"),
    "json": _lazy("jsonout", "render"),
    "yaml": _lazy("jsonout", "render_yaml"),
    "markdown": _lazy("markdown", "render_diagnosis"),
    "html": _lazy("html", "render"),
}

STACK_REPORTERS: dict[str, Reporter] = {
    "table": _lazy("stack", "render_stack"),
    "wide": _lazy("stack", "render_stack"),
    "json": _lazy("jsonout", "render"),
    "yaml": _lazy("jsonout", "render_yaml"),
    "markdown": _lazy("markdown", "render_stack"),
    "html": _lazy("html", "render"),
}



def _lazy_validate(module: str, function: str) -> ValidateReporter:
    def render(report: ValidationReport, console: Console, fail_on: Verdict) -> None:
        reporter: ValidateReporter = getattr(importlib.import_module(f"gpunode.report.{module}"), function)
        reporter(report, console, fail_on)

    return render


VALIDATE_REPORTERS: dict[str, ValidateReporter] = {
    "table": _lazy_validate("readiness", "render"),
    "wide": _lazy_validate("readiness", "render_wide"),
    "json": _lazy_validate("jsonout", "render_validation"),
    "yaml": _lazy_validate("jsonout", "render_validation_yaml"),
    "markdown": _lazy_validate("markdown", "render_validation"),
    "junit": _lazy_validate("junit", "render"),
}

# File names used by ``validate --output-dir``, one per format.
VALIDATE_FILE_NAMES = {
    "table": "validate.txt",
    "json": "validate.json",
    "markdown": "validate.md",
    "junit": "validate.junit.xml",
}

__all__ = [
    "DIAGNOSE_REPORTERS",
    "STACK_REPORTERS",
    "VALIDATE_FILE_NAMES",
    "VALIDATE_REPORTERS",
    "RenderOptions",
    "Reporter",
    "ValidateReporter",
]
