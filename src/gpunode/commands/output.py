"""The output formats and JSON writer shared by ``gpunode causes`` and ``gpunode explain``."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import msgspec
import typer

if TYPE_CHECKING:
    from rich.console import Console


class DocFormat(StrEnum):
    table = "table"
    json = "json"
    yaml = "yaml"
    markdown = "markdown"


DocFormatOpt = Annotated[DocFormat, typer.Option("-o", "--output", help="Output format.")]


def write_json(console: Console, value: object) -> None:
    """Indented JSON written to the console's file directly, so rich never wraps or styles it."""
    console.file.write(msgspec.json.format(msgspec.json.encode(value), indent=2).decode() + "\n")


def write_yaml(console: Console, value: object) -> None:
    """The same document as ``write_json``, as YAML (kubectl's ``-o yaml``)."""
    import yaml

    console.file.write(yaml.safe_dump(msgspec.json.decode(msgspec.json.encode(value)), sort_keys=False,
                                      allow_unicode=True))


class ReportFormat(StrEnum):
    """Formats of the diagnosis and stack reports (kubectl's names where kubectl has them)."""

    table = "table"
    wide = "wide"
    json = "json"
    yaml = "yaml"
    markdown = "markdown"
    html = "html"


ReportFormatOpt = Annotated[
    ReportFormat,
    typer.Option("-o", "--output", help="Output format (wide: every node of a shared root cause)."),
]
