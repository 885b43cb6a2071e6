"""Write a bundle (format v1) to a directory or, by suffix, a .tar.gz.

List files are streamed page by page, so a 100,000-pod list never sits in
memory as one document. A tarball is assembled in a staging folder beside
the target (``.X.tar.gz.gpunode-staging``), packed there under a temporary name
and renamed over the target once complete; nothing half-written is left behind.
The output directory, or the staging folder, is locked while a run writes it: a
second run into the same target fails at once, naming it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tarfile
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from gpunode.errors import UsageError
from gpunode.safety import inside

_HEAD = b'{"apiVersion":"v1","items":['
_TAIL = b'],"kind":"List","metadata":{"resourceVersion":""}}\n'
TAR_SUFFIXES = (".tar.gz", ".tgz")


def ensure_typemeta(items: list[bytes], api_version: str, kind: str) -> list[bytes]:
    """Give list items apiVersion/kind back, as ``kubectl get -o json`` shows them.

    Typed list responses omit them on every item, custom resources keep them;
    the first item tells which case a page is.
    """
    if not items or items[0].startswith((b'{"apiVersion"', b'{"kind"')):
        return items
    head = f'{{"apiVersion":"{api_version}","kind":"{kind}"'.encode()
    return [head + (b"," + item[1:] if item != b"{}" else b"}") for item in items]


class ListFile:
    """One ``cluster/<plural>.json`` being written page by page."""

    def __init__(self, path: Path) -> None:
        self._file: BinaryIO = path.open("wb")
        self.count = 0
        self.reset()

    def reset(self) -> None:
        """Start over (the list restarted after an expired continue token)."""
        self._file.seek(0)
        self._file.truncate()
        self._file.write(_HEAD)
        self.count = 0

    def add(self, items: Iterable[bytes]) -> None:
        for item in items:
            if self.count:
                self._file.write(b",")
            self._file.write(item)
            self.count += 1

    def close(self) -> None:
        self._file.write(_TAIL)
        self._file.close()


class BundleAborted(Exception):
    """The bundle was removed (Ctrl-C, a failure): a call that was still running when
    it was cannot write into it (nor recreate its folders)."""


class BundleWriter:
    """Files go into ``root`` (the output directory, or a staging folder for a tarball).

    Writes and ``abort`` share one lock, so once a bundle is aborted nothing is written
    into it again by worker threads whose calls were still running."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.tarball = out.name.endswith(TAR_SUFFIXES)
        self._lock = threading.Lock()
        self._aborted = False
        if self.tarball:
            out.parent.mkdir(parents=True, exist_ok=True)
            self.staging = out.with_name(f".{out.name}{STAGING_SUFFIX}")
            self.staging.mkdir(exist_ok=True)
            self._held = _hold(self.staging, out)
            _clear(self.staging)  # left by a run that was killed (it held no lock any more)
            self.root = self.staging / "tree"
            self.root.mkdir()
        else:
            if out.exists() and not out.is_dir():
                raise UsageError(f"{out}: output exists and is not an empty directory")
            out.mkdir(parents=True, exist_ok=True)
            self._held = _hold(out, out)  # a run writing it now holds it: named as such
            if any(out.iterdir()):
                _release(self._held)
                raise UsageError(f"{out}: output exists and is not an empty directory")
            self.root = out

    def _target(self, rel: str) -> Path:
        """Where ``rel`` goes (built from API names, so made safe and kept inside the
        bundle), its folder made; call with the lock held."""
        if self._aborted:
            raise BundleAborted(rel)
        target = inside(self.root, rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        return target

    def write(self, rel: str, data: bytes) -> None:
        with self._lock:
            self._target(rel).write_bytes(data)

    @contextmanager
    def writing(self) -> Iterator[Path]:
        """The bundle's root, for code that writes several files itself (agent facts)."""
        with self._lock:
            if self._aborted:
                raise BundleAborted(str(self.root))
            yield self.root

    def remove(self, rel: str) -> None:
        """Drop a file that turned out not to be an observation (a list that failed)."""
        inside(self.root, rel).unlink(missing_ok=True)

    def open_list(self, rel: str) -> ListFile:
        with self._lock:
            return ListFile(self._target(rel))

    def finish(self) -> Path:
        """Pack the tarball if one was asked for; return the bundle's path. The archive is
        written under a temporary name in the staging folder and renamed over ``out`` only
        once complete; an interruption or error while packing (Ctrl-C, SIGTERM, a full
        disk) removes the staging folder and the partial archive, and is raised again."""
        try:
            if self.tarball:
                self._pack()
        except BaseException:
            self.abort()
            raise
        _release(self._held)
        return self.out

    def _pack(self) -> None:
        top = self.out.name.removesuffix(".tar.gz").removesuffix(".tgz") or "bundle"
        partial = self.staging / "archive.part"
        with tarfile.open(partial, "w:gz", compresslevel=6) as tar:
            tar.add(self.root, arcname=top)
        partial.replace(self.out)
        shutil.rmtree(self.staging, ignore_errors=True)

    def abort(self) -> None:
        """Remove what was written (the run failed or was interrupted before producing a
        bundle: the staging folder with its partial archive, or the output directory);
        later writes raise BundleAborted."""
        with self._lock:
            self._aborted = True
            shutil.rmtree(self.staging if self.tarball else self.root, ignore_errors=True)
            _release(self._held)


#: The staging folder of ``X.tar.gz`` is ``.X.tar.gz.gpunode-staging`` beside it: the
#: same name for every run, so a second run into the same archive finds it locked.
STAGING_SUFFIX = ".gpunode-staging"


def _hold(folder: Path, out: Path) -> int:
    """An exclusive lock on ``folder`` (flock on its descriptor), or a UsageError saying
    that another run is writing ``out``: two runs into one target never mix their files."""
    import fcntl

    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise UsageError(f"{out}: another gpunode run is writing it now (its folder {folder} "
                         "is locked); wait for it or choose another output") from None
    return fd


def _release(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)  # closing the descriptor releases its lock


def _clear(folder: Path) -> None:
    for entry in folder.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
