"""Helpers for validate tests: edit a bundle's kubectl JSON, run the checks, pick a result."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.validate.context import ValidationOptions
from gpunode.validate.runner import validate_facts
from gpunode.validation import CheckResult, ValidationReport

Json = dict[str, Any]


def edit_items(bundle: Path, resource: str, change: Callable[[list[Json]], list[Json] | None]) -> None:
    """Change ``cluster/<resource>.json`` items in place (``change`` may return a new list)."""
    path = bundle / "cluster" / f"{resource}.json"
    doc = json.loads(path.read_text())
    result = change(doc["items"])
    if result is not None:
        doc["items"] = result
    path.write_text(json.dumps(doc))


def item(items: list[Json], name: str) -> Json:
    return next(i for i in items if i["metadata"]["name"] == name)


def validate(bundle: Path, **options: Any) -> ValidationReport:
    return validate_facts(load_bundle(bundle), read_node_observations, ValidationOptions(**options))


def result(report: ValidationReport, check_id: str) -> CheckResult:
    return next(c for c in report.checks() if c.id == check_id)
