"""Reporters: turn a Report into text. Registered by name for ``-o``."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console

from gpunode.model import Report
from gpunode.report import jsonout, markdown, stack, table

Reporter = Callable[[Report, Console], None]

DIAGNOSE_REPORTERS: dict[str, Reporter] = {
    "table": table.render_diagnosis,
    "json": jsonout.render,
    "markdown": markdown.render_diagnosis,
}

STACK_REPORTERS: dict[str, Reporter] = {
    "table": stack.render_stack,
    "json": jsonout.render,
    "markdown": markdown.render_stack,
}

__all__ = ["DIAGNOSE_REPORTERS", "STACK_REPORTERS", "Reporter"]
