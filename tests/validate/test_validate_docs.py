"""docs/validate.md lists every check, so the documentation cannot fall behind the registry."""

from __future__ import annotations

from pathlib import Path

from gpunode.validate import checks as _passive  # noqa: F401  (registers)
from gpunode.validate.active import checks as _active  # noqa: F401  (registers)
from gpunode.validate.registry import REGISTRY

DOC = Path(__file__).resolve().parents[2] / "docs" / "validate.md"


def test_every_check_is_documented_in_its_category() -> None:
    text = DOC.read_text()
    sections = {part.split("\n", 1)[0].strip(): part for part in text.split("\n### ")[1:]}
    for v in REGISTRY:
        if v.active:
            assert f"| `{v.id}` | {v.category} |" in text, v.id
        else:
            assert f"| `{v.id}` |" in sections[v.category], v.id
