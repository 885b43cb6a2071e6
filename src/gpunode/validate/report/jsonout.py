"""Validate report JSON (``gpunode.validate/v1``): the Structs encoded as they are."""

from __future__ import annotations

import msgspec
from rich.console import Console

from gpunode.report.jsonout import write_json
from gpunode.validate.model import ValidationReport, Verdict


def to_json(report: ValidationReport) -> bytes:
    """Stable, indented JSON; field order follows the Struct definitions."""
    return msgspec.json.format(msgspec.json.encode(report), indent=2)


def render(report: ValidationReport, console: Console, _fail_on: Verdict = Verdict.FAIL) -> None:
    write_json(console.file, to_json(report))
