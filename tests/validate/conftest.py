"""Bundles for validate tests: the simulator's healthy Falcon AI, copied per test to break."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gpunode import sim


@pytest.fixture(scope="session")
def falcon_healthy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The healthy scenario, built once per session; never modify it (use ``falcon``)."""
    return sim.build_bundle(sim.load_scenario("falcon-ai"), tmp_path_factory.mktemp("falcon") / "bundle")


@pytest.fixture
def falcon(falcon_healthy: Path, tmp_path: Path) -> Path:
    """A private copy of the healthy bundle that a test may change."""
    return Path(shutil.copytree(falcon_healthy, tmp_path / "bundle"))
