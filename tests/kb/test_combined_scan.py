"""The one-pass signature scan finds exactly what the line-by-line scan finds."""

from __future__ import annotations

import random

from gpunode.kb import Cause, Match, load_kb, scan_lines, scan_split_lines


def _cause(code: str, *patterns: str) -> Cause:
    return Cause(code, "driver", code, "x", "y", match=tuple(Match("log", p) for p in patterns))


TRICKY = [
    _cause("anchored", r"^nouveau\s"),
    _cause("line_end", r"^Error: Failed to initialize NVML\s*$"),
    _cause("across", r"foo\s+bar"),  # \s may cross a line break in the joined text
    _cause("two", r"Xid \(PCI:[0-9a-f:.]+\): 79\b", r"fallen off the bus"),
    _cause("word", r"\bOOMKilled\b"),
    _cause("backref", r"^0/(\d+) nodes: \1 node"),  # its group number changes inside an alternation
]
WORDS = ["nouveau ", "Error: Failed to initialize NVML", "   ", "foo", "bar", "Xid (PCI:0000:3b:00): 79",
         "has fallen off the bus", "OOMKilled", "OOMKilledX", "", "plain text", "\t", "0/3 nodes: 3 node",
         "0/3 nodes: 4 node"]


def _hits(found: list) -> list[tuple[str, int, str]]:  # type: ignore[type-arg]
    return [(h.cause.code, h.line_no, h.line) for h in found]


def test_random_texts_give_the_same_hits_in_both_directions() -> None:
    rng = random.Random(11)
    matchers = [(c, m) for c in TRICKY for m in c.match]
    for _ in range(3000):
        lines = ["".join(rng.choice(WORDS) for _ in range(rng.randint(0, 3)))
                 for _ in range(rng.randint(0, 12))]
        assert _hits(scan_split_lines(lines, matchers)) == _hits(scan_lines(lines, matchers))
        assert _hits(scan_split_lines(lines, matchers, reverse=True)) == \
            _hits(scan_lines(list(reversed(lines)), matchers))


def test_the_shipped_knowledge_base_scans_its_own_examples_alike() -> None:
    kb = load_kb()
    matchers = [(c, m) for c in kb.causes for m in c.match]
    lines = [line for c in kb.causes for line in c.example.splitlines()] * 2
    assert len(lines) > 50
    fast = _hits(scan_split_lines(lines, matchers, reverse=True))
    assert fast == _hits(scan_lines(list(reversed(lines)), matchers))
    assert len(fast) > 20
