"""The string reader of nvidia-smi XML answers as the ElementTree reader, or not at all.

Every recorded ``nvidia-smi -q -x`` file in the repository must take the fast path and
give the same report; mutated documents (lines dropped, doubled, swapped or re-indented,
truncation, comments, CDATA, entities, attributes, self-closing and repeated elements,
stray markup, foreign characters) must give the same report or the same error.
"""

from __future__ import annotations

import gc
import random
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpunode.errors import ParseError
from gpunode.parse import _nvidia_smi_fast as fast
from gpunode.parse import nvidia_smi
from gpunode.parse.nvidia_smi import NvidiaSmiReport, parse_nvidia_smi_xml

TESTS = Path(__file__).resolve().parents[1]
RECORDED = sorted(
    {
        *TESTS.glob("**/nvidia-smi-q.xml"),
        *TESTS.glob("fixtures/real/nvidia-smi-xml/*.xml"),
    }
)
#: Recorded files without an <attached_gpus> count: the tree parser rejects them, so the
#: fast reader hands them over after reading (its document check still passes).
NO_COUNT = {"telegraf-gtx-1070-ti.xml"}


def _outcome(parse: object, text: str) -> NvidiaSmiReport | str:
    try:
        return parse(text)  # type: ignore[operator,no-any-return]
    except ParseError as exc:
        return f"ParseError: {exc}"


def _tree(text: str) -> NvidiaSmiReport | str:
    return _outcome(nvidia_smi._parse_tree, text)


def test_fixtures_were_found() -> None:
    assert len(RECORDED) >= 30
    assert any(path.name == "netdata-a100-sxm4-mig.xml" for path in RECORDED)


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: str(p.relative_to(TESTS)))
def test_recorded_files_take_the_fast_path_with_the_same_report(path: Path) -> None:
    text = path.read_text()
    assert fast.read(nvidia_smi._without_unread(text)) is not None
    report = nvidia_smi._parse_fast(text)
    if path.name in NO_COUNT:
        assert report is None
        assert _tree(text) == "ParseError: nvidia-smi XML has no attached_gpus count"
        return
    assert report is not None
    assert report == nvidia_smi._parse_tree(text)
    assert report.gpus and report.attached_gpus >= 1


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: str(p.relative_to(TESTS)))
def test_a_tables_leaves_are_what_value_reads_of_each(path: Path) -> None:
    """``leaves()`` (a table's children read at once, the ECC counters) answers as ``value``
    of each child, in both readers, for the GPU and each of its ECC tables."""
    kept = nvidia_smi._without_unread(path.read_text())
    read = fast.read(kept)
    assert read is not None
    elems = [elem for _, elem in read[1]]
    trees = nvidia_smi._parse_root(kept).findall("gpu")
    assert len(elems) == len(trees)
    for gpu, tree in zip(elems, trees, strict=True):
        for node in (gpu, nvidia_smi._Tree(tree)):
            for table in (node, node.sub("ecc_errors/volatile"), node.sub("ecc_errors/aggregate")):
                if table is None:
                    continue
                leaves = table.leaves()
                assert leaves == {tag: table.value(tag) for tag in leaves}
        fast_tables = [gpu.sub(p) for p in ("ecc_errors/volatile", "ecc_errors/aggregate")]
        tree_tables = [nvidia_smi._Tree(tree).sub(p) for p in ("ecc_errors/volatile", "ecc_errors/aggregate")]
        for mine, theirs in zip(fast_tables, tree_tables, strict=True):
            assert (mine is None) == (theirs is None)
            if mine is not None and theirs is not None:
                assert mine.leaves() == theirs.leaves()


def _mig_first_layout() -> str:
    """A100 MIG file: <mig_devices> (with its own fb_memory_usage, ecc counts,
    utilization...) precedes the GPU's own sections, the trap for a substring search."""
    return (TESTS / "fixtures/real/nvidia-smi-xml/netdata-a100-sxm4-mig.xml").read_text()


def test_sections_nested_under_mig_devices_are_not_the_gpus_own() -> None:
    text = _mig_first_layout()
    gpu_start = text.index("<mig_devices>")
    assert text.index("<fb_memory_usage>", gpu_start) < text.index("</mig_devices>")
    report = nvidia_smi._parse_fast(text)
    assert report is not None and report == nvidia_smi._parse_tree(text)
    # The GPU's own total (40960 MiB), not the first MIG slice's (19968 MiB).
    assert report.gpus[0].memory_total_mib == 40960


H200 = (TESTS / "fixtures/node/h200-vm/nvidia-smi-q.xml").read_text()
HGX = (TESTS / "fixtures/node/h100-hgx/nvidia-smi-q.xml").read_text()
MIG = _mig_first_layout()
OLD = (TESTS / "fixtures/real/nvidia-smi-xml/telegraf-quadro-p400.xml").read_text()

#: Fragments spliced into documents: each must either keep the fast path's answer equal
#: to the tree's or send the document to the tree parser.
SPLICES = (
    "<!-- note -->",
    "<!ENTITY e 'x'>",
    "<!DOCTYPE x>",
    "<![CDATA[x]]>",
    "<?pi x?>",
    "&amp;",
    "&lt;b&gt;",
    "&quot;&apos;",
    "&#65;",
    "&nbsp;",
    "&",
    "a<b",
    "]]>",
    "x>y",
    "\x01",
    "\r",
    "\ufffe",
    "é",
    "<extra/>",
    "<extra />",
    '<extra a="1">v</extra>',
    "<extra>v</extra>",
    "</extra>",
    "<total>7 MiB</total>",
    "<gpu_temp>99 C</gpu_temp>",
    "<temperature><gpu_temp>98 C</gpu_temp></temperature>",
    "<current_ecc>Disabled</current_ecc>",
    '<gpu id="00000000:99:00.0"><product_name>X</product_name></gpu>',
    "<gpu><uuid>x</uuid></gpu>",
    "<attached_gpus>3</attached_gpus>",
    "<nvidia_smi_log>",
    "</nvidia_smi_log>",
    "N/A",
    "\t",
    "    ",
    "\n",
)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


#: Line edits: (lines, i, j, rng) -> None, in place.
EDITS = (
    lambda lines, i, j, rng: lines.pop(i),
    lambda lines, i, j, rng: lines.insert(j, lines[i]),
    lambda lines, i, j, rng: lines.insert(j, lines.pop(i)),
    lambda lines, i, j, rng: lines.__setitem__(
        i, rng.choice(("", "\t", "  ", "\t\t")) + lines[i].lstrip()
    ),
    lambda lines, i, j, rng: lines.__setitem__(
        i, lines[i][:j % (len(lines[i]) + 1)] + rng.choice(SPLICES) + lines[i][j % (len(lines[i]) + 1):]
    ),
    lambda lines, i, j, rng: lines.insert(i, _indent(lines[i]) + rng.choice(SPLICES)),
    lambda lines, i, j, rng: lines.__setitem__(i, lines[i].replace(">", " >", 1)),
    lambda lines, i, j, rng: lines.__setitem__(i, lines[i].replace("</", "< /", 1)),
    lambda lines, i, j, rng: lines.__setitem__(slice(j, j), lines[i : i + rng.randrange(1, 40)]),
    lambda lines, i, j, rng: lines.__setitem__(i, lines[i].replace("<", "<x", 1)),
    lambda lines, i, j, rng: lines.__setitem__(i, lines[i][:-1]),
)


def _mutate(text: str, rng: random.Random, steps: int) -> str:
    lines = text.split("\n")
    for _ in range(steps):
        edit = rng.choice(EDITS)
        edit(lines, rng.randrange(len(lines)), rng.randrange(len(lines)), rng)
    mutated = "\n".join(lines)
    if rng.random() < 0.1:
        mutated = mutated[: rng.randrange(len(mutated))]
    return mutated


def _check_same(text: str) -> bool:
    """The fast reader's answer, when it gives one, is the tree's; the public parser's
    outcome (report or error message) is always the tree's. True when fast answered."""
    report = nvidia_smi._parse_fast(text)
    expected = _tree(text)
    if report is not None:
        assert report == expected
    assert _outcome(parse_nvidia_smi_xml, text) == expected
    return report is not None


@pytest.mark.parametrize("seed", range(6))
def test_seeded_mutations_answer_as_the_tree(seed: int) -> None:
    rng = random.Random(seed)
    answered = 0
    for _ in range(60):
        base = rng.choice((H200, MIG, OLD))
        answered += _check_same(_mutate(base, rng, rng.randrange(1, 4)))
    # The mutants are not all sent to the tree parser: the comparison has teeth.
    assert answered >= 8


#: Characters and fragments for byte-level damage: markup, entity pieces, controls.
DAMAGE = ("<", ">", "/", "&", '"', " ", "\t", "\n", "x", "amp;", "lt;", "<a>", "</a>", "<a/>",
          "!", "?", "=", "\x00", "]", "#")


@pytest.mark.parametrize("seed", range(4))
def test_seeded_character_damage_answers_as_the_tree(seed: int) -> None:
    rng = random.Random(seed)
    answered = 0
    for _ in range(80):
        text = rng.choice((H200, MIG, OLD))
        for _ in range(rng.randrange(1, 4)):
            i = rng.randrange(len(text))
            keep = rng.randrange(2)  # insert, or replace the character at i
            text = text[:i] + rng.choice(DAMAGE) + text[i + 1 - keep :]
        answered += _check_same(text)
    assert answered >= 8


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(("h200", "mig", "old", "hgx")),
    st.integers(0, 2**32 - 1),
    st.integers(1, 3),
)
def test_generated_mutations_answer_as_the_tree(base: str, seed: int, steps: int) -> None:
    text = {"h200": H200, "mig": MIG, "old": OLD, "hgx": HGX}[base]
    _check_same(_mutate(text, random.Random(seed), steps))


@pytest.mark.parametrize(
    ("edit", "fast_path"),
    [
        # Predefined entities are unescaped as expat does.
        (lambda t: t.replace("<product_name>NVIDIA H200<", "<product_name>A &amp; B &lt;1&gt;<"), True),
        # The first of two same-named children is the one find() returns.
        (
            lambda t: t.replace(
                "\t\t<product_name>NVIDIA H200</product_name>",
                "\t\t<product_name>NVIDIA H200</product_name>\n\t\t<product_name>X</product_name>",
            ),
            True,
        ),
        # A longer name sharing the prefix comes first: <gpu_temp_x> is not <gpu_temp>.
        (
            lambda t: t.replace(
                "\t\t\t<gpu_temp>", "\t\t\t<gpu_temp_x>77 C</gpu_temp_x>\n\t\t\t<gpu_temp>"
            ),
            True,
        ),
        # Two <pcie_gen> blocks, the first without max_link_gen: find() reads the current
        # generation from the first and the maximum from the second.
        (
            lambda t: t.replace(
                "\t\t\t\t<pcie_gen>\n",
                "\t\t\t\t<pcie_gen>\n\t\t\t\t\t<current_link_gen>1</current_link_gen>\n"
                "\t\t\t\t</pcie_gen>\n\t\t\t\t<pcie_gen>\n",
                1,
            ),
            True,
        ),
        # A clock-event table with a self-closing and an escaped entry.
        (
            lambda t: t.replace(
                "\t\t\t<clocks_event_reason_gpu_idle>Active</clocks_event_reason_gpu_idle>\n",
                "\t\t\t<clocks_event_reason_gpu_idle>Active</clocks_event_reason_gpu_idle>\n"
                "\t\t\t<clocks_event_reason_x />\n\t\t\t<clocks_event_reason_y>&#65;ctive"
                "</clocks_event_reason_y>\n\t\t\t<clocks_event_reason_z>Active &amp; more"
                "</clocks_event_reason_z>\n",
                1,
            ),
            False,
        ),
        (
            lambda t: t.replace(
                "\t\t\t<clocks_event_reason_gpu_idle>Active</clocks_event_reason_gpu_idle>\n",
                "\t\t\t<clocks_event_reason_x />\n"
                "\t\t\t<clocks_event_reason_gpu_idle>Active</clocks_event_reason_gpu_idle>\n",
                1,
            ),
            True,
        ),
        # A self-closing section is empty for both readers.
        (lambda t: t.replace("<fabric>", "<fabric/><fabric>", 1), False),
        (lambda t: t.replace("\t\t<fabric>", "\t\t<fabric />\n\t\t<fabric>", 1), False),
        (lambda t: t.replace("<serial>1653924117520</serial>", "<serial />", 1), True),
        # A repeated section: find() would look into the second one.
        (
            lambda t: t.replace(
                "\t\t<temperature>", "\t\t<temperature>\n\t\t</temperature>\n\t\t<temperature>", 1
            ),
            False,
        ),
        # Two GPUs, the second with its own values.
        (lambda t: t.replace("</gpu>", "</gpu>\n" + t[t.index("\t<gpu ") : t.index("</gpu>") + 6], 1), True),
        # Space indentation instead of tabs.
        (lambda t: t.replace("\t", "    "), True),
        # A character reference, a comment, a CR: not the shape, the tree parser reads it.
        (lambda t: t.replace("NVIDIA H200", "NVIDIA &#72;200"), False),
        (lambda t: t.replace("<uuid>", "<!-- id --><uuid>"), False),
        (lambda t: t.replace("\n", "\r\n"), False),
        # Malformed: the tree parser's own error.
        (lambda t: t.replace("</uuid>", "</uuix>", 1), False),
        (lambda t: t.replace("\t\t</temperature>\n", "", 1), False),
        (lambda t: t[: t.rindex("</nvidia_smi_log>")], False),
        (lambda t: t + t, False),
        (lambda t: "warning: infoROM is corrupted\n" + t, False),
        (lambda t: t.replace("39 C", "39\x01C", 1), False),
    ],
)
def test_edited_h200(edit: object, fast_path: bool) -> None:
    text = edit(H200)  # type: ignore[operator]
    assert text != H200
    assert _check_same(text) is fast_path


def test_entity_declarations_are_refused_even_inside_the_unread_table() -> None:
    text = H200.replace("<supported_clocks>", "<supported_clocks><!ENTITY a 'b'>", 1)
    assert nvidia_smi._parse_fast(text) is None
    with pytest.raises(ParseError, match="entities"):
        parse_nvidia_smi_xml(text)


def test_deeper_than_the_shape_goes_to_the_tree_parser() -> None:
    depth = fast.MAX_DEPTH + 1
    nested = "".join("\t" * (d + 2) + "<d>\n" for d in range(depth))
    nested += "".join("\t" * (d + 2) + "</d>\n" for d in reversed(range(depth)))
    text = H200.replace("\t\t<fabric>", nested + "\t\t<fabric>", 1)
    assert nvidia_smi._parse_fast(text) is None
    assert parse_nvidia_smi_xml(text) == nvidia_smi._parse_tree(text)


def test_a_long_value_is_not_kept_after_parsing() -> None:
    """Short values are memoised (they repeat across a fleet); a hostile 5 MB one is not."""
    text = H200.replace("<serial>1653924117520</serial>", f"<serial>{'7' * 5_000_000}</serial>")
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        report = parse_nvidia_smi_xml(text)
        assert report.gpus[0].serial == "7" * 5_000_000
        del report
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 1_000_000
