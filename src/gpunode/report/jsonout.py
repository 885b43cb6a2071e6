"""Report JSON v1: the Report struct encoded as is (docs/report-format.md); YAML is the same tree."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from gpunode.report.options import DEFAULT, RenderOptions

if TYPE_CHECKING:  # rich is not loaded for JSON output (start-up time of `probe -o json`)
    from rich.console import Console

    from gpunode.model import Report


def to_json(report: Report) -> bytes:
    """Stable, indented JSON; field order follows the Struct definitions."""
    return msgspec.json.format(msgspec.json.encode(report), indent=2)


def render(report: Report, console: Console, options: RenderOptions = DEFAULT) -> None:
    console.file.write(to_json(report).decode() + "\n")


def render_yaml(report: Report, console: Console, options: RenderOptions = DEFAULT) -> None:
    import yaml

    console.file.write(yaml.safe_dump(msgspec.to_builtins(report), sort_keys=False, allow_unicode=True))
