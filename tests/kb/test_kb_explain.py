# ruff: noqa: E501  (real log lines are long)
"""``explain_lines``: every signature is found wherever it is buried, nothing is
found in healthy noise, near misses stay unmatched, scoping and ranking hold,
and memory stays bounded on a long stream."""

from __future__ import annotations

import itertools
import tracemalloc
import zlib
from collections.abc import Iterator
from functools import cache

import pytest
from kb_noise import bury, bury_each, noise_lines, place

from gpunode.explain import (
    EXPLAIN_SOURCES,
    Explanation,
    candidate_matchers,
    explain_lines,
    required_literals,
)
from gpunode.kb import Cause, load_kb

KB = load_kb()
EXPLAINABLE = [c for c in KB.causes if any(m.source in EXPLAIN_SOURCES for m in c.match)]


def _each_cause() -> list[object]:
    """Every explainable cause; ``make check`` tries one in six (chosen by its code, so a cause
    keeps its place as others are added), ``make test`` every one."""
    return [pytest.param(c, id=c.code, marks=[] if zlib.crc32(c.code.encode()) % 6 == 0
                         else [pytest.mark.slow]) for c in EXPLAINABLE]


def _named_alone(cause: Cause) -> frozenset[str]:
    """The causes the example names when it is the only line read."""
    return frozenset(m.cause.code for m in explain_lines([cause.example]).matches)


@cache
def _sets() -> tuple[tuple[Cause, ...], ...]:
    """The explainable causes in sets whose examples name disjoint causes (first fit, in the
    knowledge base's order): within a set, whatever names a cause is its own example's line.
    Healthy noise names nothing (``test_healthy_noise_names_nothing``) and a signature is read
    line by line, so what each example names among the others is what it names alone. A cause
    that is no problem (an application's Xid) is read alone, as before: with no problem cause
    found, the decisive line's class joins the matches, and the ranking check covers it."""
    sets: list[tuple[list[Cause], set[str]]] = []
    for cause in EXPLAINABLE:
        named = _named_alone(cause)
        shared = cause.is_problem and next(
            (s for s in sets if s[0][0].is_problem and s[1].isdisjoint(named)), None)
        if shared:
            shared[0].append(cause)
            shared[1].update(named)
        else:
            sets.append(([cause], set(named)))
    return tuple(tuple(members) for members, _ in sets)


@cache
def _buried_set(index: int) -> tuple[Explanation, dict[str, int]]:
    """The examples of one set, each at the place ``bury`` would give it alone, in one
    10,000-line noise corpus read once; and each cause's line number in it."""
    members = _sets()[index]
    lines, numbers = bury_each([c.example for c in members],
                               [place(c.example, 10_000, len(c.code)) for c in members],
                               10_000, seed=len(members[0].code))
    return explain_lines(lines), {c.code: n for c, n in zip(members, numbers, strict=True)}


@pytest.mark.parametrize("cause", _each_cause())
def test_example_buried_in_10000_lines_is_found_first_at_its_line(cause: Cause) -> None:
    """Each example at its own seed-chosen place among 10,000 noise lines (two of
    ``explain``'s blocks, more than its tail): the noise and the read (0.4 s of CPU, most of
    it the decisive-line reading of the tail) are shared by a set of causes whose examples
    name disjoint causes (``_sets``), so each cause's line is still the only one naming it,
    and what ranks above it is judged among the matches its line made."""
    index = next(i for i, members in enumerate(_sets()) if cause in members)
    result, numbers = _buried_set(index)
    line_no = numbers[cause.code]
    assert result.lines_read == 10_000 + len(numbers)
    assert result.matches, cause.code
    codes = [m.cause.code for m in result.matches]
    assert cause.code in codes, codes
    best = result.matches[codes.index(cause.code)]
    # Only a cause with the very same signature may rank above it (the same scheduling
    # message read for the validator's own pod, for any operand, for the operator).
    mine = {m.pattern for m in cause.match}
    above = [m for m in result.matches[: codes.index(cause.code)]
             if any(q.line_no == line_no for q in m.quotes)]
    assert all(mine & {m.pattern for m in other.cause.match} for other in above), codes
    assert best.quotes[0].line_no == line_no
    assert best.count == 1


@pytest.mark.parametrize("cause", _each_cause())
def test_near_miss_buried_in_noise_does_not_name_the_cause(cause: Cause) -> None:
    """200 lines of noise, not more: a line is matched alone whatever surrounds it, and 200
    lines, like 2,000, are one block read whole as the text's tail, where the decisive line
    is looked for (``TAIL_CHARS``); a longer text only costs more of that reading (0.2 s of
    CPU per cause at 2,000). Noise at length: ``test_healthy_noise_names_nothing``."""
    lines, _ = bury(cause.near_miss, 200, seed=3)
    assert cause.code not in {m.cause.code for m in explain_lines(lines).matches}


def test_healthy_noise_names_nothing() -> None:
    result = explain_lines(noise_lines(50_000, seed=99))
    assert not result.matched
    assert result.xids == ()
    assert result.lines_read == 50_000


def test_component_scope_keeps_other_components_signatures_out() -> None:
    lines = [
        "Could not resolve Linux kernel version",  # driver
        'time="2026-01-21T12:32:09Z" level=fatal msg="Error: unable to load config: unsupported config version: 3"',
    ]
    scoped = explain_lines(lines, component="container-toolkit")
    assert [m.cause.code for m in scoped.matches] == ["containerd_config_version_mismatch"]
    everything = {m.cause.code for m in explain_lines(lines).matches}
    assert {"kernel_headers_missing", "containerd_config_version_mismatch"} <= everything


def test_ranking_is_most_specific_then_lowest_layer() -> None:
    lines = [
        "panic: At least one device with migEnabled=true was not configured correctly: "
        "No MIG devices associated with /dev/nvidia0: GPU-fe14a161-d1f3-7706-c257-3b22fe15c684",
        "[ 9123.442180] NVRM: Xid (PCI:0000:9a:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
    ]
    ranked = [(m.cause.code, m.cause.specificity, m.layer) for m in explain_lines(lines).matches]
    assert ranked[0][0] == "gpu_fallen_off_bus"
    keys = [(-spec, layer) for _, spec, layer in ranked]
    assert keys == sorted(keys)


def test_repeated_lines_are_counted_but_quoted_at_most_three_times() -> None:
    line = "modprobe: ERROR: could not insert 'nvidia': Key was rejected by service"
    result = explain_lines([line] * 7 + ["done"])
    (match,) = result.matches
    assert match.count == 7
    assert [q.line_no for q in match.quotes] == [1, 2, 3]


def test_xids_are_summarised_with_their_classification() -> None:
    lines = [
        "[ 12.1] NVRM: Xid (PCI:0000:9a:00): 13, pid=22, name=python, Graphics SM Warp Exception",
        "[ 12.2] NVRM: Xid (PCI:0000:9a:00): 13, pid=22, name=python, Graphics SM Warp Exception",
        "NVRM: Xid (PCI:0008:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)",
        "I0611 10:11:12.000001       1 health.go:194] XidCriticalError: Xid=999 on Device=GPU-1; marking device as unhealthy.",
    ]
    xids = {x.info.code: x for x in explain_lines(lines).xids}
    assert xids[13].count == 2 and xids[13].info.device_plugin_ignores
    assert xids[154].info.action == "reboot_node"
    assert not xids[999].info.known


def test_application_xid_alone_is_only_the_low_specificity_application_cause() -> None:
    line = "NVRM: Xid (PCI:0000:b5:00): 31, pid=2079991, name=pt_main_thread, Ch 00000007, intr 00000000. MMU Fault"
    assert [m.cause.code for m in explain_lines([line]).matches] == ["xid_application_error"]


def _peak_memory(lines: int) -> int:
    base = list(noise_lines(5_000, seed=5))

    def stream() -> Iterator[str]:
        yield from itertools.islice(itertools.cycle(base), lines // 2)
        yield "Could not resolve Linux kernel version"
        yield from itertools.islice(itertools.cycle(base), lines // 2)

    tracemalloc.start()
    try:
        result = explain_lines(stream())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [m.cause.code for m in result.matches] == ["kernel_headers_missing"]
    assert result.matches[0].quotes[0].line_no == lines // 2 + 1
    return peak


@pytest.mark.slow
def test_memory_does_not_grow_with_the_input() -> None:
    explain_lines(["warm up the caches"])
    small, large = _peak_memory(30_000), _peak_memory(120_000)
    assert large < small * 1.2 + 64 * 1024, (small, large)


def test_every_candidate_pattern_has_a_required_literal() -> None:
    """The prefilter relies on literals; a pattern without one falls back to a slower regex."""
    missing = [(c.code, m.pattern) for c, m in candidate_matchers(KB) if not required_literals(m.pattern)]
    assert missing == []


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"Could not resolve Linux kernel version", {"Could not resolve Linux kernel version"}),
        (r"NVRM: Xid \(PCI:[0-9a-f:.]+\): 79\b", {"NVRM: Xid (PCI:"}),
        (r"(HW|SW) Thermal Slowdown\s*:\s*Active", {" Thermal Slowdown"}),
        (r"foo bar|baz quux", {"foo bar", "baz quux"}),
        (r"(?:alpha|be)gamma", {"gamma"}),
        (r"(?i)case insensitive", set()),
        (r"ab|[0-9]+", set()),
    ],
)
def test_required_literals(pattern: str, expected: set[str]) -> None:
    assert set(required_literals(pattern)) == expected
