"""Reporters: turn a Report into text. Registered by name for ``-o``."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console

from gpunode.model import Report
from gpunode.report import html, jsonout, markdown, stack, table
from gpunode.report.options import RenderOptions

Reporter = Callable[[Report, Console, RenderOptions], None]

DIAGNOSE_REPORTERS: dict[str, Reporter] = {
    "table": table.render_diagnosis,
    "wide": table.render_diagnosis,
    "json": jsonout.render,
    "yaml": jsonout.render_yaml,
    "markdown": markdown.render_diagnosis,
    "html": html.render,
}

STACK_REPORTERS: dict[str, Reporter] = {
    "table": stack.render_stack,
    "wide": stack.render_stack,
    "json": jsonout.render,
    "yaml": jsonout.render_yaml,
    "markdown": markdown.render_stack,
    "html": html.render,
}

__all__ = ["DIAGNOSE_REPORTERS", "STACK_REPORTERS", "RenderOptions", "Reporter"]
