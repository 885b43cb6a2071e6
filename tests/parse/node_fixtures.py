"""Paths to recorded and synthetic node outputs (imported by the parser tests)."""

from __future__ import annotations

from pathlib import Path

NODE_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "node"


def read_fixture(*parts: str) -> str:
    """Text of one fixture file under tests/fixtures/node."""
    return NODE_FIXTURES.joinpath(*parts).read_text()
