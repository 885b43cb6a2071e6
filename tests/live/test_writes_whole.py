"""Writes are whole or absent (issue 23, item 6): bundles and their copies.

- an archive is packed under a temporary name in a locked staging folder and renamed over
  the target once complete; Ctrl-C, SIGTERM or an error while packing leave nothing;
- two runs into one target: the second fails at once naming it;
- ``validate --output-dir`` copies skip links, FIFOs and files with hard links outside the
  bundle, do not read holes, cut files past the limit, and never replace a copy another
  run made;
- any byte sequence in a path is escaped in every output, never a crash (exit 4).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from gpunode.bundle.source import copy_bundle_folder
from gpunode.collect.writer import STAGING_SUFFIX, BundleWriter
from gpunode.errors import UsageError

MINI = Path(__file__).parent / "fixtures" / "mini"
REPO = Path(__file__).resolve().parents[2]
GPUNODE = REPO / ".venv" / "bin" / "gpunode"


def _everything(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.mark.parametrize("name", ["bundle", "bundle.tar.gz"])
def test_a_second_run_into_the_same_target_fails_naming_it(tmp_path: Path, name: str) -> None:
    out = tmp_path / name
    first = BundleWriter(out)
    first.write("cluster/nodes.json", b"{}")
    with pytest.raises(UsageError, match="another gpunode run is writing it"):
        BundleWriter(out)
    first.finish()
    assert (out / "cluster" / "nodes.json").is_file() if out.is_dir() else tarfile.is_tarfile(out)
    assert _everything(tmp_path) >= {name}
    assert not [p for p in _everything(tmp_path) if STAGING_SUFFIX in p]


@pytest.mark.parametrize("interruption", [KeyboardInterrupt, OSError])
def test_an_interrupted_packing_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               interruption: type[BaseException]) -> None:
    """Ctrl-C and SIGTERM (which gpunode turns into KeyboardInterrupt) or a full disk while
    the archive is packed: no archive, no partial archive, no staging folder."""
    out = tmp_path / "b.tar.gz"
    writer = BundleWriter(out)
    writer.write("cluster/nodes.json", b"{}" * 1000)

    def interrupted(*_args: object, **_kwargs: object) -> None:
        raise interruption()

    monkeypatch.setattr(tarfile.TarFile, "add", interrupted)
    with pytest.raises(interruption):
        writer.finish()
    assert _everything(tmp_path) == set()


def test_staging_left_by_a_killed_run_is_cleared(tmp_path: Path) -> None:
    out = tmp_path / "b.tar.gz"
    stale = tmp_path / f".b.tar.gz{STAGING_SUFFIX}"
    (stale / "tree" / "cluster").mkdir(parents=True)
    (stale / "archive.part").write_bytes(b"half")
    writer = BundleWriter(out)
    writer.write("manifest.json", b"{}")
    writer.finish()
    with tarfile.open(out) as tar:
        assert tar.getnames() == ["b", "b/manifest.json"]
    assert _everything(tmp_path) == {"b.tar.gz"}


def _hostile_folder(root: Path, outside: Path) -> Path:
    bundle = root / "bundle"
    shutil.copytree(MINI, bundle)
    cmd = bundle / "nodes" / "gpu-wk-01" / "cmd"
    with (cmd / "sparse.bin").open("wb") as handle:
        handle.truncate(100 * 1024**3)  # 100 GiB, all hole
    outside.write_text("root:secret\n")
    os.link(outside, cmd / "shadow.txt")  # a hard link to a host file
    os.mkfifo(cmd / "fifo")
    (cmd / "passwd").symlink_to("/etc/passwd")
    os.link(bundle / "manifest.json", bundle / "manifest-copy.json")  # both links inside
    return bundle


def test_a_bundle_copy_skips_what_is_not_the_bundles_and_reads_no_hole(tmp_path: Path) -> None:
    bundle = _hostile_folder(tmp_path, tmp_path / "shadow")
    copied = copy_bundle_folder(bundle, tmp_path / "copy")
    cmd = tmp_path / "copy" / "nodes" / "gpu-wk-01" / "cmd"
    assert not (cmd / "shadow.txt").exists() and not (cmd / "fifo").exists()
    assert not (cmd / "passwd").exists()
    assert (tmp_path / "copy" / "manifest-copy.json").read_bytes() == (bundle / "manifest.json").read_bytes()
    sparse = cmd / "sparse.bin"
    assert sparse.stat().st_size == 1024**3  # cut at MAX_FILE_BYTES
    assert sparse.stat().st_blocks * 512 < 1024**2  # the holes stay holes
    assert copied.data_bytes < 1024**2
    assert any("shadow.txt: not copied: it has hard links outside the bundle" in n for n in copied.notes)
    assert any("sparse.bin: cut at" in n for n in copied.notes)


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([str(GPUNODE), *args], capture_output=True, cwd=cwd, timeout=120, check=False)


@pytest.mark.slow
def test_validate_output_dir_copies_the_bundle_once_and_refuses_a_second_copy(tmp_path: Path) -> None:
    bundle = _hostile_folder(tmp_path, tmp_path / "shadow")
    first = _run("validate", "--from", str(bundle), "--output-dir", "out", cwd=tmp_path)
    assert first.returncode == 1, first.stderr
    assert b"shadow.txt: not copied" in first.stderr and b"Traceback" not in first.stderr
    assert (tmp_path / "out" / "bundle" / "manifest.json").is_file()
    second = _run("validate", "--from", str(bundle), "--output-dir", "out", cwd=tmp_path)
    assert second.returncode == 2
    assert second.stderr.decode().strip().endswith("already exists; choose an empty --output-dir")
    assert not [p for p in os.listdir(tmp_path / "out") if p.startswith(".")]


@pytest.mark.slow
def test_any_bytes_in_a_path_are_escaped_never_a_crash(tmp_path: Path) -> None:
    bad = os.fsencode(tmp_path) + b"/b\xff\xfe"
    shutil.copytree(MINI, os.fsdecode(bad))
    for output in ("json", "table", "markdown", "html"):
        done = subprocess.run([str(GPUNODE), "diagnose", "--from", os.fsdecode(bad), "-o", output],
                              capture_output=True, timeout=120, check=False)
        assert done.returncode == 1, done.stderr
        assert b"internal error" not in done.stderr and b"Traceback" not in done.stderr
        if output == "json":
            assert json.loads(done.stdout)["source"]["location"].endswith("b\\xff\\xfe")
    out = os.fsdecode(os.fsencode(tmp_path) + b"/out\xff")
    done = subprocess.run([str(GPUNODE), "validate", "--from", os.fsdecode(bad), "--output-dir", out],
                          capture_output=True, timeout=120, check=False)
    assert done.returncode == 1 and b"internal error" not in done.stderr, done.stderr
    assert os.path.isfile(os.path.join(out, "bundle", "manifest.json"))
    assert sys.getfilesystemencoding() == "utf-8"
