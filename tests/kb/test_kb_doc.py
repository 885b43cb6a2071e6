"""docs/knowledge-base.md is generated from the data and must be current."""

from __future__ import annotations

from pathlib import Path

from gpunode.commands.causes import render_kb_doc
from gpunode.kb import load_kb

DOC = Path(__file__).resolve().parents[2] / "docs" / "knowledge-base.md"


def test_document_is_current() -> None:
    assert DOC.read_text(encoding="utf-8") == render_kb_doc(), (
        "docs/knowledge-base.md is stale: run python -m gpunode.commands.causes docs/knowledge-base.md"
    )


def test_document_lists_every_cause_and_explains_how_to_add_one() -> None:
    text = render_kb_doc()
    assert "## How to add a cause" in text
    for cause in load_kb().causes:
        assert f"`{cause.code}`" in text, cause.code
