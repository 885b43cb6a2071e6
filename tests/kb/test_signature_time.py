"""Every signature runs in time linear in the line: a 1 MB hostile line costs at most two
seconds per pattern (unbounded ``.*`` gaps were quadratic: minutes per line; the widest
bounded alternation, the file-state class, takes about 0.9 s of CPU here, and a slower
CI core must not turn that into a failure).

Measured in this process's CPU time: the regex's own work, the same on a loaded machine or
beside parallel test workers, where wall time also counts the time spent waiting for a core."""

from __future__ import annotations

import re
import time

import pytest

from gpunode.explain import build_prefilter, candidate_matchers, explain_lines, required_literals
from gpunode.kb import load_kb, unbounded_gap
from gpunode.xid import XID_LINE_PATTERNS

LINE = 1_000_000
BUDGET_S = 2.0


def _patterns() -> list[tuple[str, str]]:
    """Each distinct signature once, named by the first cause (or Xid line pattern) holding it:
    several causes share one (the same message read in different pods), and the test compiles
    the pattern alone, so a shared one is the same work on the same lines (38 of 203)."""
    kb = load_kb()
    found = [(f"{c.code}:{i}", m.pattern) for c in kb.causes for i, m in enumerate(c.match)]
    found += [(f"xid:{i}", p.pattern) for i, p in enumerate(XID_LINE_PATTERNS)]
    first: dict[str, str] = {}
    for name, pattern in found:
        first.setdefault(pattern, name)
    return [(name, pattern) for pattern, name in first.items()]


def _hostile_units(pattern: str) -> list[str]:
    """Pieces whose repetition makes a backtracking search restart at every copy."""
    words = re.findall(r"[A-Za-z_]{3,}", pattern)[:3]
    literals = sorted(required_literals(pattern))[:2]
    return [" ", "a", *literals, *(f"{w} " for w in words), *(f"{lit} x " for lit in literals)]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "pattern"), _patterns(), ids=[n for n, _ in _patterns()])
def test_each_signature_is_linear_on_a_1mb_line(name: str, pattern: str) -> None:
    regex = re.compile(pattern)
    for unit in _hostile_units(pattern):
        line = (unit * (LINE // len(unit) + 1))[:LINE]
        started = time.process_time()
        regex.search(line)
        took = time.process_time() - started
        assert took < BUDGET_S, f"{name}: {took:.1f} s on {unit!r} repeated"


def test_the_explain_prefilter_is_linear_too() -> None:
    prefilter = build_prefilter(tuple(m.pattern for _, m in candidate_matchers(load_kb())))
    for unit in ("GPG error: x ", "available PCIe bandwidth, limited by ", " ", "a"):
        block = (unit * (LINE // len(unit) + 1))[:LINE]
        started = time.process_time()
        prefilter.line_starts(block)
        assert time.process_time() - started < BUDGET_S, unit


def test_explain_on_a_1mb_line_without_newline_is_quick() -> None:
    line = "GPG error: x " * (LINE // 13)
    started = time.process_time()
    explain_lines([line])
    assert time.process_time() - started < 5 * BUDGET_S


def test_unbounded_gaps_are_refused_by_the_knowledge_base_check() -> None:
    assert unbounded_gap("GPG error: .*NO_PUBKEY")
    assert unbounded_gap("(a.*)b") and unbounded_gap("x|y.+z")
    assert not unbounded_gap("Xid (.*)") and not unbounded_gap("a.{0,1000}b")
    assert not unbounded_gap("( preemption:.*)?$")
