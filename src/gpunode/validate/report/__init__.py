"""Reporters for ``gpunode validate``: table, json, markdown, junit (all registered by name)."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console

from gpunode.validate.model import ValidationReport, Verdict
from gpunode.validate.report import junit, markdown, table
from gpunode.validate.report.jsonout import render as render_json

Reporter = Callable[[ValidationReport, Console, Verdict], None]

REPORTERS: dict[str, Reporter] = {
    "table": table.render,
    "json": render_json,
    "markdown": markdown.render,
    "junit": junit.render,
}

# File names used by --output-dir, one per format.
FILE_NAMES = {
    "table": "validate.txt",
    "json": "validate.json",
    "markdown": "validate.md",
    "junit": "validate.junit.xml",
}

__all__ = ["FILE_NAMES", "REPORTERS", "Reporter"]
