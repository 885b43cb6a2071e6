"""Fixtures for the live path: the test API server serving small hand-made bundles."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gpunode.apiserver import RunningServer, serve_bundle

MINI = Path(__file__).parent / "fixtures" / "mini"


@pytest.fixture(scope="session")
def mini_bundle() -> Path:
    return MINI


@pytest.fixture(scope="session")
def mini_server() -> Iterator[RunningServer]:
    with serve_bundle(MINI) as server:
        yield server
