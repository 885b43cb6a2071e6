"""The table of each shipped signature pattern's literals (src/gpunode/pattern_literals.py)
says what ``re``'s parser says of each pattern it lists (a wrong entry would let a gate rule
out a text a pattern matches). The command looks patterns up there instead of parsing them at
each start; a pattern it does not list is parsed as before.

After a knowledge-base change, write the table anew with

    PYTHONPATH=src .venv/bin/python tests/core/test_pattern_literals.py
"""

from __future__ import annotations

import sys
from pathlib import Path

from gpunode.kb import load_kb, parse_pattern_literals
from gpunode.pattern_literals import SHIPPED_LITERALS

TABLE = Path(__file__).resolve().parents[2] / "src" / "gpunode" / "pattern_literals.py"


def _computed() -> dict[str, tuple[tuple[str, bool], ...] | None]:
    patterns = sorted({m.pattern for cause in load_kb().causes for m in cause.match})
    out: dict[str, tuple[tuple[str, bool], ...] | None] = {}
    for pattern in patterns:
        found = parse_pattern_literals(pattern)
        out[pattern] = None if found is None else tuple(sorted(found))
    return out


def test_every_listed_pattern_has_the_parsers_literals() -> None:
    wrong = [p for p, literals in SHIPPED_LITERALS.items()
             if (None if (found := parse_pattern_literals(p)) is None else tuple(sorted(found))) != literals]
    assert not wrong, f"{len(wrong)} patterns' literals differ: write the table anew (module docstring)"


#: Shipped patterns the table may miss before this test asks for it anew: a pattern not listed
#: is parsed at each start (a fraction of a millisecond), so a rule's new pattern or two does
#: not fail the suite, and the table is written again before the start grows noticeably.
MISSING_AT_MOST = 20


def test_the_shipped_patterns_are_listed() -> None:
    missing = sorted(set(_computed()) - set(SHIPPED_LITERALS))
    assert len(missing) <= MISSING_AT_MOST, \
        f"{len(missing)} patterns are not listed: write the table anew (module docstring)"


def _write() -> None:
    lines = [
        "# ruff: noqa: E501",
        '"""Each shipped signature pattern\'s literals, as ``gpunode.kb.parse_pattern_literals``',
        "reads them from ``re``'s parse tree (None: none usable): ``kb.literal_gate`` looks them up",
        "here instead of parsing the patterns at each start. Written by",
        "tests/core/test_pattern_literals.py, which checks it against the parser; a pattern not",
        'listed is parsed as before."""',
        "",
        "from __future__ import annotations",
        "",
        "SHIPPED_LITERALS: dict[str, tuple[tuple[str, bool], ...] | None] = {",
    ]
    lines += [f"    {pattern!r}: {literals!r}," for pattern, literals in _computed().items()]
    lines.append("}")
    TABLE.write_text("\n".join(lines) + "\n", "utf-8")


if __name__ == "__main__":
    _write()
    sys.exit(0)
