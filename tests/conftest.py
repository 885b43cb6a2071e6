"""Shared fixtures: paths to recorded and hand-made bundles; no wait for a second DCGM scrape;
no test begins with an earlier test's report frozen."""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

FIXTURES = Path(__file__).parent / "fixtures"

#: The cyclic collector's thresholds in a test process (Python's are 700, 10, 10). A test worker
#: holds far more than a command does (the field corpus's reports, every module's tables), and
#: each full collection scans all of it: with Python's thresholds the collector took about 13 %
#: of a field worker's CPU, most of it in full collections that found little. Fewer, larger
#: young collections promote fewer short-lived objects, and full ones come about fourteen
#: times less often; cyclic garbage is still freed, a little later. Only this process: a
#: ``gpunode`` a test starts runs with Python's own.
TEST_GC_THRESHOLDS = (10_000, 10, 10)
gc.set_threshold(*TEST_GC_THRESHOLDS)


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


@pytest.fixture(autouse=True)
def _nothing_frozen_from_an_earlier_test() -> Iterator[None]:
    """A command that builds a report freezes what it built (``bundle.load.gc_paused``), and
    the next one in the same process first unfreezes it with a full collection, which in a
    test process scans the whole test session's objects (about 50 ms, 1.8 s of the live
    projection and collection-memory tests). A command starts in a fresh process, with
    nothing frozen: so does each test here. What a test froze goes back to the collector's
    oldest generation when it ends; two reports in one test still release as a command's do
    (tests/core/test_gc_pause.py)."""
    yield
    from inprocess import as_a_fresh_process

    as_a_fresh_process()
