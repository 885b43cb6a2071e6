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
    markdown = "markdown"


DocFormatOpt = Annotated[DocFormat, typer.Option("-o", "--output", help="Output format.")]


def write_json(console: Console, value: object) -> None:
    """Indented JSON written to the console's file directly, so rich never wraps or styles it."""
    console.file.write(msgspec.json.format(msgspec.json.encode(value), indent=2).decode() + "\n")
