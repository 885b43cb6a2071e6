"""Shared paths for parser tests: recorded and synthetic node outputs."""

from __future__ import annotations

from pathlib import Path

import pytest

NODE_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "node"


@pytest.fixture
def node_fixture() -> Path:
    """Root of tests/fixtures/node."""
    return NODE_FIXTURES


def read_fixture(*parts: str) -> str:
    """Text of one fixture file under tests/fixtures/node."""
    return NODE_FIXTURES.joinpath(*parts).read_text()
