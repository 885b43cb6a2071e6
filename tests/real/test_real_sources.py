"""Every real fixture says where it comes from (SOURCES.md), and stays small."""

from __future__ import annotations

import re

from realfix import REAL

COMMIT_OR_THREAD = r"(`[0-9a-f]{12}`|https://github\.com/\S+)"
ROW = re.compile(r"^\| `([^`]+)` \| ([\w.-]+/[\w.-]+) \| .+ \| " + COMMIT_OR_THREAD + r" \| .+ \| .+ \|$")


def _rows() -> list[str]:
    lines = (REAL / "SOURCES.md").read_text().splitlines()
    return [line for line in lines if line.startswith("| `")]


def test_every_row_names_repository_and_commit_or_thread() -> None:
    bad = [row for row in _rows() if not ROW.match(row)]
    assert bad == []


def test_sources_and_files_match_one_to_one() -> None:
    listed = [m.group(1) for m in map(ROW.match, _rows()) if m]
    files = sorted(
        p.relative_to(REAL).as_posix() for p in REAL.rglob("*") if p.is_file() and p.name != "SOURCES.md"
    )
    assert sorted(listed) == files
    assert len(set(listed)) == len(listed)


def test_files_are_small() -> None:
    big = [p.name for p in REAL.rglob("*") if p.is_file() and p.stat().st_size > 200 * 1024]
    assert big == []
