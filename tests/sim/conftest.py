"""Simulator test fixtures: build a bundled scenario once per module."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sim_helpers import Bundle

from gpunode.sim import build_bundle, load_scenario


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Bundle]:
    """Build a bundled scenario (once per module and name) and return its reader."""
    cache: dict[str, Bundle] = {}

    def _build(name: str) -> Bundle:
        if name not in cache:
            out = tmp_path_factory.mktemp(name) / "bundle"
            cache[name] = Bundle(build_bundle(load_scenario(name), out))
        return cache[name]

    return _build
