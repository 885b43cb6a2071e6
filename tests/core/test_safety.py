"""Reports made terminal-safe: no control character from collected data reaches a reader of
the report, JSON included (``jq -r`` prints the strings as they are)."""

from __future__ import annotations

import msgspec
import pytest

from gpunode.safety import safe_encoded, safe_struct


class Doc(msgspec.Struct):
    name: str
    lines: list[str] = []
    labels: dict[str, str] = {}


@pytest.mark.parametrize("bad", ["\x1b]0;pwned\x07", "\x1b[2J", "over\rwrite", "back\x08space",
                                 "form\x0cfeed", "nul\x00", "slash\\\r", "del\x7f", "c1\x85", "csi\x9b31m"])
@pytest.mark.parametrize("where", ["name", "lines", "labels"])
def test_no_control_character_survives_in_any_string(bad: str, where: str) -> None:
    doc = Doc("n", ["ok"], {"k": "v"})
    if where == "name":
        doc.name = bad
    elif where == "lines":
        doc.lines = ["ok", bad]
    else:
        doc.labels = {bad: bad}
    clean, encoded = safe_encoded(doc, Doc)
    texts = [clean.name, *clean.lines, *clean.labels, *clean.labels.values()]
    assert all(t.isprintable() for t in texts), texts
    assert encoded == msgspec.json.encode(clean)
    assert safe_struct(doc, Doc) == clean


def test_a_clean_report_is_returned_as_it_is_with_its_encoding() -> None:
    doc = Doc("gpu-01", ["Xid 79 at 12:00 \u00b0C", "tab\there", "new\nline"], {"a": "b"})
    clean, encoded = safe_encoded(doc, Doc)
    assert clean is doc
    assert encoded == msgspec.json.encode(doc)


def test_a_literal_backslash_is_not_taken_for_a_control_character() -> None:
    doc = Doc(r"not \r a carriage return, not \u001b an escape, C:\files\backup", [r"\\", r"\\r", "\\\\\\r"])
    clean, _ = safe_encoded(doc, Doc)
    assert clean is doc


def test_the_backslash_walk_finds_what_the_control_pattern_finds() -> None:
    """``_holds_control`` is ``_JSON_CONTROL.search`` without its look-behind's cost."""
    import random

    from gpunode.safety import _JSON_CONTROL, _holds_control

    rng = random.Random(7)
    pieces = [b"\\", b"a", b"u", b"0", b"1", b"b", b"r", b"f", b"\x7f", b"\xc2\x85", b"n", b'"', b"u001f"]
    for _ in range(5000):
        data = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        assert bool(_JSON_CONTROL.search(data)) == _holds_control(data), data


class Tupled(msgspec.Struct, frozen=True):
    lines: tuple[str, ...] = ()
    nested: tuple[tuple[str, ...], ...] = ()


def test_strings_inside_tuples_are_cleaned() -> None:
    """msgspec's to_builtins keeps a Struct's tuples as tuples (report evidence is tuples)."""
    doc = Tupled(("ok", "\x1b]0;title\x07x"), (("\x9d2;t\x9c", "\x1bP1$q\x1b\\"),))
    clean, encoded = safe_encoded(doc, Tupled)
    assert clean == Tupled(("ok", "x"), (("", ""),))
    assert encoded == msgspec.json.encode(clean)
