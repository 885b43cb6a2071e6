"""Hostile bundles (folders and archives): nothing read or written outside, bounded memory
and time, one line naming the file when a bundle cannot be used."""

from __future__ import annotations

import gzip
import io
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

import gpunode.bundle.source as source_module
from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.bundle.source import open_bundle
from gpunode.errors import BundleError

MEMORY_LIMIT_KIB = 512 * 1024


def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The CLI in a child process whose peak memory (KiB) is printed last on stderr."""
    code = ("import resource, sys\nfrom gpunode.cli import main\ntry:\n    main()\nfinally:\n"
            "    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)")
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=timeout, check=False)


def peak_kib(proc: subprocess.CompletedProcess[str]) -> int:
    return int(proc.stderr.strip().splitlines()[-1])


def errors(proc: subprocess.CompletedProcess[str]) -> list[str]:
    assert "Traceback" not in proc.stderr
    return proc.stderr.strip().splitlines()[:-1]


def _tar(path: Path, members: dict[str, bytes], mode: str = "w:gz") -> Path:
    with tarfile.open(path, mode) as tar:  # type: ignore[call-overload]
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_links_out_of_a_bundle_folder_are_neither_read_nor_copied(handmade: Path,
                                                                  tmp_path: Path) -> None:
    bundle = tmp_path / "b"
    shutil.copytree(handmade, bundle)
    files = bundle / "nodes" / "gpu-a1" / "files"
    files.mkdir(parents=True)
    (files / "etc").symlink_to("/etc")
    (bundle / "nodes" / "gpu-a1" / "cmd").mkdir()
    (bundle / "nodes" / "gpu-a1" / "cmd" / "dmesg.txt").symlink_to("/dev/zero")
    (bundle / "logs").mkdir(exist_ok=True)
    (bundle / "logs" / "zero.log").symlink_to("/dev/zero")
    os.mkfifo(bundle / "nodes" / "gpu-a1" / "cmd" / "nvidia-smi.txt")
    facts = load_bundle(bundle)
    obs = read_node_observations(facts, "gpu-a1")
    assert obs.cmd == {} and obs.files == {}
    out = tmp_path / "out"
    proc = run("validate", "--from", str(bundle), "--output-dir", str(out), timeout=60)
    assert proc.returncode in (0, 1), proc.stderr
    copied = [p for p in out.rglob("*") if p.is_file() or p.is_symlink()]
    assert not [p for p in copied if p.is_symlink() or "etc" in p.relative_to(out).parts]
    assert sum(p.stat().st_size for p in copied) < 10_000_000
    assert peak_kib(proc) < MEMORY_LIMIT_KIB


def test_a_fifo_given_as_the_bundle_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "bundle.tar.gz"
    os.mkfifo(fifo)
    proc = run("diagnose", "--from", str(fifo), timeout=30)
    assert proc.returncode == 2 and str(fifo) in errors(proc)[0]


@pytest.mark.parametrize("content", [b"", b"not a tar at all\n", b"\x1f\x8b\x08\x00garbage"],
                         ids=["empty", "text", "broken-gzip"])
def test_an_unreadable_archive_is_one_line_exit_2(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "b.tar.gz"
    path.write_bytes(content)
    proc = run("diagnose", "--from", str(path))
    assert proc.returncode == 2
    assert len(errors(proc)) == 1 and str(path) in errors(proc)[0]


@pytest.mark.slow
def test_a_gzip_bomb_member_is_refused_with_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "bomb.tar.gz"
    _zeros_member_tar_gz(path, "b/cluster/pods.json", source_module.MAX_MEMBER_BYTES + 1)
    assert path.stat().st_size < 2_000_000
    proc = run("diagnose", "--from", str(path))
    assert proc.returncode == 2
    assert "cluster/pods.json is too large" in errors(proc)[0]
    assert peak_kib(proc) < MEMORY_LIMIT_KIB


def test_decompression_stops_at_the_total_limit(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(source_module, "MAX_TOTAL_BYTES", 1_000_000)
    path = _tar(tmp_path / "b.tar.gz", {"cluster/nodes.json": b" " * 2_000_000})
    with pytest.raises(BundleError, match="expands to more than 1000000 bytes"):
        open_bundle(path)


def test_many_members_are_indexed_once(tmp_path: Path) -> None:
    members = {f"b/nodes/n{i:05d}/cmd/lsmod.txt": b"nvidia 1 0\n" for i in range(10_000)}
    members["b/manifest.json"] = b'{"format": "gpunode-bundle/v1"}'
    path = _tar(tmp_path / "fleet.tar.gz", members)
    started = time.perf_counter()
    facts = load_bundle(path)
    for node in sorted(facts.node_dirs, reverse=True)[:2000]:  # out of archive order
        read_node_observations(facts, node)
    assert time.perf_counter() - started < 30
    assert len(facts.node_dirs) == 10_000


def test_archive_links_devices_and_escaping_names_are_ignored(tmp_path: Path) -> None:
    path = tmp_path / "b.tar"
    with tarfile.open(path, "w") as tar:
        for name, kind in (("nodes/n1/cmd/dmesg.txt", tarfile.SYMTYPE),
                           ("nodes/n1/cmd/lsmod.txt", tarfile.LNKTYPE),
                           ("nodes/n1/cmd/fifo", tarfile.FIFOTYPE),
                           ("nodes/n1/cmd/zero", tarfile.CHRTYPE)):
            info = tarfile.TarInfo(name)
            info.type = kind
            info.linkname = "/etc/passwd"
            tar.addfile(info)
        for name in ("../escape.txt", "/abs/cluster/nodes.json", "nodes/n1/cmd/ok.txt"):
            info = tarfile.TarInfo(name)
            info.size = 2
            tar.addfile(info, io.BytesIO(b"ok"))
    bundle = open_bundle(path)
    assert bundle.list("nodes") == ["nodes/n1/cmd/ok.txt"]
    assert bundle.read("../escape.txt") is None
    assert not (tmp_path.parent / "escape.txt").exists()


def _zeros_member_tar_gz(path: Path, name: str, size: int) -> None:
    """A .tar.gz with one member of ``size`` zero bytes, written as concatenated gzip
    members (one compressed block of zeros repeated), so the bomb costs no compression."""
    info = tarfile.TarInfo(name)
    info.size = size
    block = 1 << 24
    data_and_end = size + (-size % tarfile.BLOCKSIZE) + 2 * tarfile.BLOCKSIZE
    whole, rest = divmod(data_and_end, block)
    zeros = gzip.compress(bytes(block))
    with path.open("wb") as out:
        out.write(gzip.compress(info.tobuf()))
        for _ in range(whole):
            out.write(zeros)
        out.write(gzip.compress(bytes(rest)))
