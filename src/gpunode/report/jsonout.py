"""Report JSON v1: the Report struct encoded as is (docs/report-format.md); YAML is the same tree."""

from __future__ import annotations

import msgspec
from rich.console import Console

from gpunode.model import Report
from gpunode.report.options import DEFAULT, RenderOptions


def to_json(report: Report) -> bytes:
    """Stable, indented JSON; field order follows the Struct definitions."""
    return msgspec.json.format(msgspec.json.encode(report), indent=2)


def render(report: Report, console: Console, options: RenderOptions = DEFAULT) -> None:
    console.file.write(to_json(report).decode() + "\n")


def render_yaml(report: Report, console: Console, options: RenderOptions = DEFAULT) -> None:
    import yaml

    console.file.write(yaml.safe_dump(msgspec.to_builtins(report), sort_keys=False, allow_unicode=True))
