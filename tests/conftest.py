"""Shared fixtures: paths to recorded and hand-made bundles."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def handmade() -> Path:
    """A bundle built by hand from kubectl-shaped JSON and one driver log."""
    return FIXTURES / "handmade"
