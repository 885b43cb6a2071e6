"""Node folders are listed with one scandir walk, with rglob's rules for links."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpunode.bundle.source import DirSource
from gpunode.checks import context
from gpunode.errors import ParseError


def test_walk_lists_what_rglob_lists(tmp_path: Path) -> None:
    node = tmp_path / "nodes" / "n1"
    (node / "cmd").mkdir(parents=True)
    (node / "files" / "etc" / "containerd" / "conf.d").mkdir(parents=True)
    (node / "cmd" / "dmesg.txt").write_text("x")
    (node / "files" / "etc" / "containerd" / "conf.d" / "99-nvidia.toml").write_text("y")
    (node / "files" / "linked.txt").symlink_to(node / "cmd" / "dmesg.txt")
    (node / "files" / "linked-dir").symlink_to(node / "cmd", target_is_directory=True)
    (node / "files" / "empty").mkdir()
    expected = sorted(p.relative_to(tmp_path).as_posix()
                      for p in (tmp_path / "nodes" / "n1").rglob("*") if p.is_file())
    assert DirSource(tmp_path).list("nodes/n1") == expected
    assert DirSource(tmp_path).list("nodes/n1/") == expected
    assert "nodes/n1/files/linked.txt" in expected
    assert DirSource(tmp_path).list("nodes/none") == []


def test_identical_containerd_files_are_parsed_once_and_errors_replayed() -> None:
    good = {"/etc/containerd/config.toml": 'version = 2\n'}
    first = context._containerd(dict(good), "/etc/containerd/config.toml", None)
    assert context._containerd(dict(good), "/etc/containerd/config.toml", None) is first
    bad = {"/etc/containerd/config.toml": "version = 9\n"}
    for _ in range(2):
        with pytest.raises(ParseError, match="unsupported containerd config version"):
            context._containerd(dict(bad), "/etc/containerd/config.toml", None)
