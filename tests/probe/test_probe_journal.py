"""The host journals the probe keeps: each bundle file reads its own units, bounded."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from gpunode.probe.journal import MAX_LINES, SINCE, UNITS, read_journals


@pytest.fixture
def journalctl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A journalctl that prints the arguments it was given, as one journal line."""
    script = tmp_path / "bin" / "journalctl"
    script.parent.mkdir()
    script.write_text('#!/bin/sh\necho "2026-12-05T10:00:00+0000 gpu-wk-01 test[1]: $*"\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{script.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    return script


def test_fabric_manager_and_imex_have_journals_of_their_own_units(journalctl: Path) -> None:
    journals = read_journals("/")
    assert set(journals) == set(UNITS)
    assert "-u nvidia-fabricmanager" in journals["journal-fabricmanager.txt"]
    assert "-u nvidia-imex" in journals["journal-imex.txt"]
    assert "nvidia-imex" not in journals["journal-fabricmanager.txt"]


def test_every_journal_is_bounded_in_time_and_lines(journalctl: Path) -> None:
    for text in read_journals("/").values():
        assert f"--since={SINCE}" in text and f"-n {MAX_LINES}" in text


def test_a_host_root_reads_that_roots_journal_directory(journalctl: Path) -> None:
    text = read_journals("/host")["journal-imex.txt"]
    assert "--directory=/host/var/log/journal" in text
