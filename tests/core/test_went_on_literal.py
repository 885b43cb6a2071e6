"""A running component that falls back to a default or drops an invalid item and goes on is
read on every line of its log: a literal test comes before each pattern, and it must let
through every line the pattern reads, whatever its case."""

from __future__ import annotations

import pytest
from counting import Counting

from gpunode.checks import decisive
from gpunode.checks.decisive import _went_on

FELL_BACK = (
    "Could not read configmap: i/o timeout, falling back to metric file /etc/dcgm-exporter/default.csv",
    "WARN Falls back to defaults",
    "ERROR FALLING BACK TO the builtin config",
)
DROPPED = (
    "Ignoring invalid feature value kernel-version.full=4.9.140-l4t: [a valid label must be ...]",
    "ignoring invalid feature name foo/bar",
    "SKIPPED AN INVALID device entry",
    "dropped invalid label x",
)


@pytest.mark.parametrize("line", FELL_BACK)
def test_a_fallback_passes_the_literal_test(line: str) -> None:
    assert _went_on(line, dropped=False)


@pytest.mark.parametrize("line", DROPPED)
def test_a_dropped_invalid_item_counts_only_in_a_pod_s_log(line: str) -> None:
    assert _went_on(line, dropped=True)
    assert not _went_on(line, dropped=False)


def test_lines_without_the_literals_skip_both_patterns(monkeypatch: pytest.MonkeyPatch) -> None:
    falls, drops = Counting(decisive._FALLS_BACK), Counting(decisive._DROPS_INVALID)
    monkeypatch.setattr(decisive, "_FALLS_BACK", falls)
    monkeypatch.setattr(decisive, "_DROPS_INVALID", drops)
    quiet = ("I0101 00:00:00.000000 1 main.go:42] Starting FS watcher.",
             "time=2025-01-01T00:00:00Z level=info msg=\"Registered device plugin\"")
    assert not any(_went_on(line, dropped=True) for line in quiet)
    assert (falls.calls, drops.calls) == (0, 0)
