"""The plain-text fast path reads exposition text exactly as the client library does."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from gpunode.errors import ParseError
from gpunode.parse import prom

TESTS = Path(__file__).parents[1]


Seen = list[tuple[str, dict[str, str], str]] | str


def _library(text: str, monkeypatch: pytest.MonkeyPatch) -> Seen:
    with monkeypatch.context() as m:
        m.setattr(prom, "_parse_plain", lambda _t: None)
        return _ours(text)


def _ours(text: str) -> Seen:
    """Samples as comparable values (NaN is not equal to itself, its repr is)."""
    try:
        return [(s.name, s.labels, repr(s.value)) for s in prom.parse_prometheus_text(text)]
    except ParseError as exc:
        return f"error: {exc}"


def test_recorded_scrapes_take_the_fast_path_and_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    files = sorted(TESTS.rglob("*.prom"))
    assert files
    for path in files:
        text = path.read_text()
        if prom._parse_plain(text) is not None:
            assert _ours(text) == _library(text, monkeypatch), path


PIECES = ['# HELP m help text', '# TYPE m gauge', '# TYPE m counter', '# TYPE m bogus', '# plain comment',
          'm 1', 'm_total 2', 'm{a="b"} 3', 'm{a="b",} 4', 'm{a="b",c=""} 5.5e3', 'm{a="x\\"y"} 6',
          'm{a="b"}  7', 'm{a="b"} NaN', 'm{a="b"} +Inf', 'm{a="b"} -Inf', 'm{a="b"} 1 1700000000000',
          'm{a="b",a="c"} 8', 'm{a=b} 9', 'm{} 10', 'm nope', '', '  ', 'm{a="b"}', 'm{a="{}"} 11',
          'other_metric{le="0.5"} 1', 'm\t12', '# HELP m "quoted"', '# TYPE m', '# TYPE 9m gauge',
          '# TYPE m histogram', 'm_bucket{le="1"} 1', 'm_sum 1', 'm_count 1', '# TYPE m summary',
          'm{quantile="0.5"} 1', 'm 1_000', 'm 1.2.3', '#', '# HELP']


def test_random_texts_agree_with_the_library(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(11)
    fast = 0
    for _ in range(3000):
        text = "\n".join(rng.choice(PIECES) for _ in range(rng.randint(1, 4))) + "\n"
        assert _ours(text) == _library(text, monkeypatch), text
        fast += prom._parse_plain(text) is not None
    assert fast > 300  # both paths were exercised
