"""Shared fixtures: paths to recorded and hand-made bundles; no wait for a second DCGM scrape."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def handmade() -> Path:
    """A bundle built by hand from kubectl-shaped JSON and one driver log."""
    return FIXTURES / "handmade"


@pytest.fixture(autouse=True)
def _no_wait_for_the_second_scrape(monkeypatch: pytest.MonkeyPatch) -> None:
    """A live ``validate`` waits ``--scrape-interval`` plus a second before its second DCGM
    scrape, so that a real exporter's counters move; the test API server's counters advance on
    every scrape, so a run in a test process does not wait (a gpunode started as a subprocess
    still does)."""
    from gpunode.validate import live

    monkeypatch.setattr(live, "time", SimpleNamespace(monotonic=time.monotonic, sleep=lambda _s: None))
