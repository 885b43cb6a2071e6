"""A document with a kept one's lines but for leaf texts is read by its line numbers, and
answers as the tree parser; any other line that differs sends it to the other readers.

Every recorded ``nvidia-smi -q -x`` file is kept, then read again with each of its leaf
texts changed (one at a time and all at once): the report is the tree parser's and it
came from the kept lines. Edited documents (lines, markup, entities, controls) give
the tree parser's report or error whatever was kept before.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpunode.errors import ParseError
from gpunode.parse import _nvidia_smi_known as known
from gpunode.parse import nvidia_smi
from gpunode.parse.nvidia_smi import NvidiaSmiReport, parse_nvidia_smi_xml

TESTS = Path(__file__).resolve().parents[1]


def _distinct(paths: list[Path]) -> list[Path]:
    """The first of the files with the same name and text: the same document under the same
    name gets the same edits (the edits' seed is the name), so a copy is the same test again
    (the mini cluster's two nodes hold the H200 VM's file)."""
    seen: dict[tuple[str, str], Path] = {}
    for path in paths:
        seen.setdefault((path.name, path.read_text()), path)
    return list(seen.values())


RECORDED = _distinct(sorted(
    {
        *TESTS.glob("**/nvidia-smi-q.xml"),
        *TESTS.glob("fixtures/real/nvidia-smi-xml/*.xml"),
    }
))
NO_COUNT = {"telegraf-gtx-1070-ti.xml"}  # no <attached_gpus>: the tree parser's error
H200 = (TESTS / "fixtures/node/h200-vm/nvidia-smi-q.xml").read_text()
HGX = (TESTS / "fixtures/node/h100-hgx/nvidia-smi-q.xml").read_text()
MIG = (TESTS / "fixtures/real/nvidia-smi-xml/netdata-a100-sxm4-mig.xml").read_text()
LEAF = re.compile(r"(?m)^([ \t]+<([A-Za-z_][\w.\-]*)>)([^<>&\n]*)(</\2>)$")
#: New leaf texts: numbers, N/A, units, spaces, another value's words, empty.
VALUES = ("0", "1", "12345", "N/A", "99 C", "700.00 W", " Active ", "Enabled", "", "Yes", "No",
          "GPU-ffffffff-0000-1111-2222-333333333333", "Not Active", "3.0", "é")


def _outcome(text: str) -> NvidiaSmiReport | str:
    try:
        return parse_nvidia_smi_xml(text)
    except ParseError as exc:
        return f"ParseError: {exc}"


def _tree(text: str) -> NvidiaSmiReport | str:
    try:
        return nvidia_smi._parse_tree(text)
    except ParseError as exc:
        return f"ParseError: {exc}"


def _lines(text: str) -> str:
    """The text the known reader is given: without the unread sections."""
    return nvidia_smi._without_unread(text)


def _keep(text: str) -> None:
    """Read ``text`` the usual way, which keeps it (the string reader read it)."""
    known._KEPT.clear()
    known._SIZE[0] = 0
    _outcome(text)


def _leaf_edits(text: str, rng: random.Random) -> Iterator[str]:
    """``text`` with one leaf's text changed, for each leaf; then with all changed."""
    leaves = list(LEAF.finditer(text))
    for match in leaves:
        value = rng.choice(VALUES)
        if value != match[3]:
            yield text[: match.start(3)] + value + text[match.end(3) :]
    yield LEAF.sub(lambda m: m[1] + rng.choice(VALUES) + m[4], text)


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: str(p.relative_to(TESTS)))
def test_recorded_files_with_other_leaf_texts_are_read_by_line_and_answer_as_the_tree(path: Path) -> None:
    text = path.read_text()
    _keep(text)
    rng = random.Random(path.name)
    edits = list(_leaf_edits(text, rng))
    assert len(edits) > 20
    for edited in edits:
        read = known.read(_lines(edited))
        if path.name not in NO_COUNT:
            assert read is not None  # the recorded files are all in the simple form
        assert _outcome(edited) == _tree(edited)
    # the kept document itself, unchanged
    assert (known.read(_lines(text)) is not None) == (path.name not in NO_COUNT)
    assert _outcome(text) == _tree(text)


def test_the_bench_nodes_document_is_read_from_the_first_nodes_lines() -> None:
    other = H200.replace("<gpu_temp>39 C</gpu_temp>", "<gpu_temp>40 C</gpu_temp>")
    other = other.replace("<serial>1653924117520</serial>", "<serial>1653924117521</serial>")
    assert other.count("\n") == H200.count("\n") and other != H200
    _keep(H200)
    read = known.read(_lines(other))
    assert read is not None
    report = parse_nvidia_smi_xml(other)
    assert report == nvidia_smi._parse_tree(other)
    assert report.gpus[0].temperature_c == 40
    assert report.gpus[0].serial == "1653924117521"


@pytest.mark.parametrize(
    "edit",
    [
        # markup, entities, controls or a line end in a leaf's new text
        lambda t: t.replace("<serial>1653924117520<", "<serial>1653<924117520<"),
        lambda t: t.replace("<serial>1653924117520<", "<serial>1653>924117520<"),
        lambda t: t.replace("<serial>1653924117520<", "<serial>A &amp; B<"),
        lambda t: t.replace("<serial>1653924117520<", "<serial>A &#65; B<"),
        lambda t: t.replace("<serial>1653924117520<", "<serial>A & B<"),
        lambda t: t.replace("<serial>1653924117520<", "<serial>\x01<"),
        lambda t: t.replace("<serial>1653924117520<", "<serial>\ufffe<"),
        lambda t: t.replace("<serial>1653924117520<", "<serial>a\rb<"),
        # another name, indentation, closing tag, or the leaf made empty or a section
        lambda t: t.replace("<serial>1653924117520</serial>", "<serial>1</serail>"),
        lambda t: t.replace("<serial>1653924117520</serial>", "<seria>1653924117520</seria>"),
        lambda t: t.replace("\t\t<serial>1653924117520</serial>", "\t\t\t<serial>1</serial>"),
        lambda t: t.replace("\t\t<serial>1653924117520</serial>", "  <serial>1</serial>"),
        lambda t: t.replace("<serial>1653924117520</serial>", "<serial/>"),
        lambda t: t.replace("<serial>1653924117520</serial>", "<serial />"),
        lambda t: t.replace("<serial>1653924117520</serial>", "<serial>"),
        lambda t: t.replace("<serial>1653924117520</serial>", "<serial>1</serial> "),
        lambda t: t.replace("<serial>1653924117520</serial>", "<serial>1</serial><x/>"),
        lambda t: t.replace("<serial>1653924117520</serial>", '<serial a="1">1</serial>'),
        lambda t: t.replace("<serial>1653924117520</serial>", "<!-- x -->"),
        lambda t: t.replace("<serial>1653924117520</serial>", "1653924117520"),
        # lines swapped, a section renamed, a text line changed, the header or tail
        lambda t: t.replace(
            "\t\t<serial>1653924117520</serial>\n\t\t<uuid>", "\t\t<uuid>", 1
        ).replace("</uuid>\n", "</uuid>\n\t\t<serial>1653924117520</serial>\n", 1),
        lambda t: t.replace("<temperature>", "<temperatura>").replace("</temperature>", "</temperatura>"),
        lambda t: t.replace("\t\t\tNone\n", "\t\t\tSome\n", 1),
        lambda t: t.replace('<?xml version="1.0" ?>', '<?xml version="1.1" ?>'),
        lambda t: t.replace("</nvidia_smi_log>", "</nvidia_smi_log>x"),
        lambda t: t.replace('<gpu id="', '<gpu id="1', 1),
    ],
)
def test_a_change_beyond_a_leafs_plain_text_is_not_read_by_line(edit: object) -> None:
    text = edit(H200)  # type: ignore[operator]
    assert text != H200
    _keep(H200)
    if text.count("\n") == H200.count("\n"):
        assert known.read(_lines(text)) is None
    assert _outcome(text) == _tree(text)


def test_a_repeated_section_is_read_as_find_reads_it() -> None:
    """Two <ecc_errors>/<volatile> tables, the first without SRAM/DRAM counters: find()
    reads ``double_bit/total`` in the first (none), not the second's 5; a path below a
    repeated section is left to the other readers."""
    doubled = H200.replace(
        "\t\t<ecc_errors>\n",
        "\t\t<ecc_errors>\n\t\t\t<volatile>\n\t\t\t\t<x>1</x>\n\t\t\t</volatile>\n"
        "\t\t\t<volatile>\n\t\t\t\t<double_bit>\n\t\t\t\t\t<total>5</total>\n"
        "\t\t\t\t</double_bit>\n\t\t\t</volatile>\n",
        1,
    )
    other = doubled.replace("<gpu_temp>39 C<", "<gpu_temp>41 C<").replace("<x>1</x>", "<x>2</x>")
    _keep(doubled)
    assert known.read(_lines(other)) is not None
    assert _outcome(other) == _tree(other)
    assert isinstance(_tree(other), NvidiaSmiReport)
    assert _tree(other).gpus[0].ecc_volatile_dbe is None  # type: ignore[union-attr]


@pytest.mark.parametrize("seed", range(4))
def test_edited_lines_after_a_kept_document_answer_as_the_tree(seed: int) -> None:
    """Line edits that keep the number of lines (a line replaced by another, two swapped,
    a leaf's text moved to another leaf) against the kept original."""
    rng = random.Random(seed)
    for _ in range(60):
        base = rng.choice((H200, HGX, MIG))
        lines = base.split("\n")
        for _ in range(rng.randrange(1, 4)):
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            if rng.random() < 0.5:
                lines[i] = lines[j]
            else:
                lines[i], lines[j] = lines[j], lines[i]
        text = "\n".join(lines)
        _keep(base)
        assert _outcome(text) == _tree(text)


def test_memory_is_bounded() -> None:
    known._KEPT.clear()
    known._SIZE[0] = 0
    for n in range(300):
        parse_nvidia_smi_xml(H200.replace("\t\t<serial>", "\t\t<x/>\n" * (n % 40) + "\t\t<serial>", 1))
    assert known._SIZE[0] <= known._CHARS
    kept = [k for by_count in known._KEPT.values() for same in by_count.values() for k in same]
    assert len(kept) <= 40
    assert known._SIZE[0] == sum(k.size for k in kept)
