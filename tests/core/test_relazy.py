"""relazy.lazy_compile: a module's pattern constant compiled on first use, answering as the
compiled pattern does."""

from __future__ import annotations

import copy
import pickle
import re

from gpunode.relazy import lazy_compile

_WORDS = r"(?P<verb>fail(?:ed|s)?) to (?P<what>\w+)"


def test_not_compiled_until_used() -> None:
    lazy = lazy_compile(_WORDS, re.IGNORECASE)
    assert lazy.pattern == _WORDS
    assert "_re" not in vars(lazy)
    assert lazy.search("it FAILED to start") is not None
    assert "_re" in vars(lazy)


def test_answers_as_the_compiled_pattern() -> None:
    lazy, real = lazy_compile(_WORDS, re.IGNORECASE), re.compile(_WORDS, re.IGNORECASE)
    text = "failed to load\nFails to bind and failed to start"
    assert lazy.search(text).groupdict() == real.search(text).groupdict()  # type: ignore[union-attr]
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in real.finditer(text)]
    assert lazy.findall(text) == real.findall(text)
    assert lazy.sub(r"\g<what>", text) == real.sub(r"\g<what>", text)
    assert lazy.match("x") is None
    assert lazy.fullmatch("failed to go") is not None
    assert (lazy.flags, lazy.groups, lazy.groupindex) == (real.flags, real.groups, real.groupindex)
    assert repr(lazy) == repr(real)
    assert lazy == real
    assert hash(lazy) == hash(real)


def test_bytes_pattern() -> None:
    lazy = lazy_compile(rb"\x00+")
    assert lazy.split(b"a\x00\x00b") == [b"a", b"b"]


def test_copied_and_pickled() -> None:
    lazy = lazy_compile(_WORDS)
    for other in (copy.copy(lazy), copy.deepcopy(lazy), pickle.loads(pickle.dumps(lazy))):
        assert other.pattern == _WORDS
        assert other.search("failed to run") is not None
    lazy.search("compiled first")
    assert pickle.loads(pickle.dumps(lazy)).search("failed to run") is not None


def test_bad_pattern_fails_where_used() -> None:
    lazy = lazy_compile("(unclosed")
    try:
        lazy.search("x")
    except re.error:
        return
    raise AssertionError("a bad pattern compiled")
