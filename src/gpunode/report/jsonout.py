"""Report JSON v1: the Report struct encoded as is (docs/report-format.md)."""

from __future__ import annotations

import msgspec
from rich.console import Console

from gpunode.model import Report


def to_json(report: Report) -> bytes:
    """Stable, indented JSON; field order follows the Struct definitions."""
    return msgspec.json.format(msgspec.json.encode(report), indent=2)


def render(report: Report, console: Console) -> None:
    console.file.write(to_json(report).decode() + "\n")
