"""The literal gate never rules out a text that a signature matches."""

from __future__ import annotations

import random
import re

from gpunode.kb import literal_gate, load_kb, may_match

PATTERNS = [
    r"NVRM: Xid \(PCI:[0-9a-fA-F:.]+\): 79\b|has fallen off the bus",
    r"(?i)failed to (start|pull)",
    r"(?i:OOM)Killed",
    r"^0/(\d+) nodes are available: \1 node",
    r"(foo|bar)+baz",
    r"x?abcd{1,3}",
    r"[Dd]river/library version mismatch",
]
PIECES = ["NVRM: Xid (PCI:0000:3b:00): 79", "has fallen off the bus", "FAILED TO PULL", "Failed to start",
          "oomKilled", "OOMkilled", "0/3 nodes are available: 3 node", "foobarbaz", "baz", "abcddd", "abc",
          "Driver/library version mismatch", "river/library", "ſ", "K", " ", "\n", "\u2028", "x"]


def test_every_text_a_pattern_matches_passes_the_gate() -> None:
    rng = random.Random(5)
    gate = literal_gate(tuple(PATTERNS))
    assert gate is not None
    checked = 0
    for _ in range(5000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 4)))
        if any(re.search(p, line) for p in PATTERNS for line in text.splitlines()):
            checked += 1
            assert may_match(text, gate), text
    assert checked > 500


def test_a_text_without_the_literals_is_ruled_out() -> None:
    gate = literal_gate(tuple(PATTERNS))
    assert not may_match("kubelet is posting ready status\nCompleted:  (exit 0)", gate)
    assert may_match("image FAILED to push", literal_gate((r"(?i)failed to pull",))) is False
    assert may_match("image FAILED TO PULL", literal_gate((r"(?i)failed to pull",)))


def test_a_folded_literal_is_kept_beside_a_shorter_exact_one() -> None:
    gate = literal_gate((r"(?i)abcde", r"bcd"))
    assert gate == (("abcde", True), ("bcd", False))
    assert may_match("ABCDE", gate)
    assert not may_match("ABxCDE", gate)


def test_a_pattern_without_a_literal_opens_the_gate() -> None:
    assert literal_gate((r"\d+ GPUs", r"a|bcd")) is None
    assert may_match("anything", None)


def test_case_folding_beyond_ascii_is_not_ruled_out() -> None:
    """Python folds 'ſ' to 's' where str.lower does not: non-ASCII text passes a folded gate."""
    pattern = r"(?i)mismatch"
    assert re.search(pattern, "miſmatch")
    assert may_match("miſmatch", literal_gate((pattern,)))


def test_every_shipped_signature_example_passes_its_gate() -> None:
    kb = load_kb()
    for cause in kb.causes:
        for m in cause.match:
            lines = cause.example.splitlines()
            if any(m.regex.search(line) for line in lines):
                assert may_match(cause.example, literal_gate((m.pattern,))), cause.code
