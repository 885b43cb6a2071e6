"""docs/report.schema.json is generated from the msgspec types and the demo report validates against it."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from gpunode.schema import report_schema

ROOT = Path(__file__).parents[2]
SCHEMA = ROOT / "docs" / "report.schema.json"


def test_published_schema_is_current() -> None:
    assert SCHEMA.read_bytes() == report_schema(), (
        "docs/report.schema.json is stale: .venv/bin/python -m gpunode.schema > docs/report.schema.json"
    )


@pytest.mark.parametrize(
    "report", ["tests/golden/demo.json", "tests/golden/reports/fault-gpu-fallen-off-bus.json"]
)
def test_reports_validate_against_schema(report: str) -> None:
    schema = json.loads(SCHEMA.read_text())
    doc = json.loads((ROOT / report).read_text())
    instance = doc.get("diagnose", doc) if "schema" not in doc else doc
    jsonschema.validate(instance, schema)


def test_schema_rejects_a_renamed_field() -> None:
    schema = json.loads(SCHEMA.read_text())
    doc = json.loads((ROOT / "tests/golden/demo.json").read_text())
    doc["node_list"] = doc.pop("nodes")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, schema)
