"""The field tests' reports, diagnosed once per test session instead of once per worker."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import scoreboard  # the field tests import it from this folder


@pytest.fixture(scope="session", autouse=True)
def _reports_shared_by_the_workers(
    tmp_path_factory: pytest.TempPathFactory, worker_id: str
) -> Iterator[None]:
    """Under xdist, the workers of one session share a folder of reports (scoreboard.SHARED):
    the session's base temporary folder is theirs alone, so no report outlives the session."""
    if worker_id == "master":
        yield
        return
    folder = tmp_path_factory.getbasetemp().parent / "field-reports"
    folder.mkdir(exist_ok=True)
    scoreboard.SHARED = folder
    yield
    scoreboard.SHARED = None
