"""gc_paused: no collection pass over a freshly built graph, and no cyclic garbage kept for good."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from gpunode.bundle import load
from gpunode.bundle.load import gc_paused


class _Node:
    """An object in a reference cycle: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


class _Leaf:
    """An object in no cycle: reference counting frees it."""


@pytest.fixture(autouse=True)
def _collector_restored() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.enable()
    gc.unfreeze()  # what earlier tests' reports froze
    load._FROZEN[0] = False
    yield
    gc.unfreeze()
    load._FROZEN[0] = False
    if not was_enabled:
        gc.disable()


def test_what_a_pause_built_is_frozen_and_the_collector_is_on_again() -> None:
    with gc_paused(keep=True):
        assert not gc.isenabled()
        kept = [_Node() for _ in range(1000)]
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(kept)


def test_a_frozen_object_outside_any_cycle_is_still_freed_when_dropped() -> None:
    with gc_paused(keep=True):
        leaf = _Leaf()
    alive = weakref.ref(leaf)
    del leaf
    assert alive() is None


def test_cyclic_garbage_a_pause_froze_is_freed_when_the_next_pause_begins() -> None:
    with gc_paused(keep=True):
        cycle = _Node()
    alive = weakref.ref(cycle)
    del cycle
    gc.collect()
    assert alive() is not None  # frozen: no collection pass looks at it
    with gc_paused(keep=True):
        assert alive() is None  # the next (outermost) pause released and collected it


def test_a_nested_pause_leaves_freezing_to_the_outermost() -> None:
    with gc_paused(keep=True):
        with gc_paused(keep=True):
            pass
        assert not gc.isenabled()
        assert gc.get_freeze_count() == 0
    assert gc.get_freeze_count() > 0


def test_a_pause_that_keeps_nothing_freezes_nothing() -> None:
    with gc_paused():
        assert not gc.isenabled()
        _Node()
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_with_the_collector_off_a_pause_freezes_nothing() -> None:
    gc.disable()
    with gc_paused(keep=True):
        _Node()
    assert not gc.isenabled()
    assert gc.get_freeze_count() == 0
