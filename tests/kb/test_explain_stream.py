"""explain over raw bytes finds what explain over text lines finds, line numbers included."""

from __future__ import annotations

import io
import random
from collections.abc import Iterator

import pytest

from gpunode import explain, re2scan
from gpunode.explain import explain_lines, explain_stream


def _text_lines(data: bytes, max_line: int) -> Iterator[str]:
    """How the command read input before: text mode, universal newlines, bounded readline."""
    text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace")
    while piece := text.readline(max_line):
        yield piece


PIECES = [b"plain healthy line", b"NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.",
          b"Failed to initialize NVML: Driver/library version mismatch", b"\xff\xfe broken utf-8",
          "caf\u00e9 \u2028 \u00a0 unicode".encode(), b"", b"x" * 40, b"OOMKilled",
          b"0/4 nodes are available: 4 node(s) didn't match Pod's node affinity/selector.",
          b"nvidia-container-cli: initialization error: nvml error: driver not loaded"]
ENDS = [b"\n", b"\r\n", b"\r", b"\n\n"]


def _sample(rng: random.Random) -> bytes:
    return b"".join(rng.choice(PIECES) + rng.choice(ENDS) for _ in range(rng.randint(0, 30))) + \
        rng.choice([b"", b"tail without newline", b"\r"])


@pytest.mark.parametrize("seed", range(6))
def test_bytes_and_lines_agree(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    monkeypatch.setattr(explain, "CHUNK_BYTES", rng.choice([7, 64, 1 << 20]))
    max_line = rng.choice([16, 64, 1 << 20])
    monkeypatch.setattr(explain, "MAX_LINE_PIECE", max_line)
    for _ in range(60):
        data = _sample(rng)
        expected = explain_lines(_text_lines(data, max_line), max_quotes=5)
        got = explain_stream(io.BytesIO(data), max_quotes=5)
        assert got == expected, data


def test_the_fast_path_is_taken() -> None:
    assert re2scan.available()
    patterns = explain.Matcher(explain.candidate_matchers(explain.load_kb()))._patterns
    program, rejected = re2scan.compile_prefilter(patterns)
    assert program is not None and rejected == ()


def test_widened_patterns_match_wherever_python_does() -> None:
    cases = {r"\bOOM\b": "\u00e9 OOM \u00e9", r"(\d+)\b x": "\u0667\u0669 x", r"a\sb": "a\u2028b",
             r"[\w.-]+: z": "caf\u00e9: z", r"^0/(\d+) n: \1 m": "0/3 n: 3 m", r"[^\s]+q": "\u00a0\u00e9q",
             r"ENDBR: [\w.]{1,200}\+0x": "ENDBR: \u00e9t\u00e9_x+0x", r"id-\d{3}\b": "id-\u0661\u0662\u0663"}
    import re

    for pattern, line in cases.items():
        assert re.search(pattern, line)
        program, rejected = re2scan.compile_prefilter((pattern,))
        assert rejected == ()
        assert list(re2scan.line_starts(program, line.encode())) == [0], pattern


def test_long_counted_repetitions_lose_their_bound() -> None:
    """RE2 builds one copy of a repeated atom a count: a widened class repeated 200 times took
    33 MiB. A count past a few loses its upper bound (the prefilter matches more, never less);
    short counts and open ones are kept."""
    assert re2scan.re2_pattern(r"[\w.]{1,200}x") == r"[\p{L}\p{N}_.]{1,}x"
    assert re2scan.re2_pattern(r"a{2,5}b{3}c{4,}") == r"a{2,5}b{3}c{4,}"
    assert re2scan.re2_pattern(r"d{0,20}?[{]\{1,200\}") == r"d{0,}?[{]\{1,200\}"



#: RE2 instructions a single widened signature may take. The largest today is about 15,000 (a
#: forbidden service account's name classes); ``[\w.]{1,200}`` before its bound was dropped took
#: 269,000 and 33 MiB of automaton on the first node scanned.
MAX_PATTERN_PROGRAM = 40_000
#: The whole prefilter of a scan (every signature explain tries, about 136,000 today): room to
#: grow by half before a reviewer looks again at what the automaton costs.
MAX_PREFILTER_PROGRAM = 200_000


def _programs() -> dict[str, tuple[str, ...]]:
    """Each prefilter the engine compiles: explain's, and one per node file diagnose scans."""
    kb = explain.load_kb()
    scans = {"explain": explain.Matcher(explain.candidate_matchers(kb))._patterns}
    scans.update({f"{kind}:{name}": patterns for (kind, name), patterns in kb.node_text_patterns.items()})
    return scans


def test_each_signature_stays_a_small_automaton() -> None:
    """A memory guard that needs no benchmark: a signature whose RE2 program is huge makes the
    prefilter's lazy automaton grow by megabytes per node (the 5,000-node run hit its limit)."""
    import re2

    options = re2.Options()
    options.log_errors = False
    options.max_mem = re2scan._MAX_MEM
    for scan, patterns in _programs().items():
        for pattern in patterns:
            size = re2.compile(re2scan.re2_pattern(pattern).encode(), options).programsize
            assert size <= MAX_PATTERN_PROGRAM, f"{scan}: {size} RE2 instructions: {pattern}"
        program, _ = re2scan.compile_prefilter(patterns)
        assert program is not None and program.programsize <= MAX_PREFILTER_PROGRAM, scan


def test_the_size_guard_sees_an_unbounded_count() -> None:
    """The guard fails where it should: the counted class as Python writes it, widened but with
    its bound kept, is far past the limit; loosened as re2_pattern writes it, far below."""
    import re2

    kept = r"[\p{L}\p{N}_.]{1,200}\+0x"
    assert re2.compile(kept.encode()).programsize > MAX_PATTERN_PROGRAM
    loosened = re2scan.re2_pattern(r"[\w.]{1,200}\+0x")
    assert re2.compile(loosened.encode()).programsize < MAX_PATTERN_PROGRAM // 10
