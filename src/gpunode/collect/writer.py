"""Write a bundle (format v1) to a directory or, by suffix, a .tar.gz.

List files are streamed page by page, so a 100,000-pod list never sits in
memory as one document. A tarball is assembled in a staging folder beside
the target and packed at the end; nothing half-written is left behind.
"""

from __future__ import annotations

import shutil
import tarfile
import tempfile
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
            self.root = Path(tempfile.mkdtemp(prefix=".gpunode-collect-", dir=out.parent))
        else:
            if out.exists() and (not out.is_dir() or any(out.iterdir())):
                raise UsageError(f"{out}: output exists and is not an empty directory")
            out.mkdir(parents=True, exist_ok=True)
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
        """Pack the tarball if one was asked for; return the bundle's path."""
        if not self.tarball:
            return self.out
        top = self.out.name.removesuffix(".tar.gz").removesuffix(".tgz") or "bundle"
        partial = self.out.with_name(self.out.name + ".part")
        with tarfile.open(partial, "w:gz", compresslevel=6) as tar:
            tar.add(self.root, arcname=top)
        partial.replace(self.out)
        shutil.rmtree(self.root, ignore_errors=True)
        return self.out

    def abort(self) -> None:
        """Remove what was written (the run failed or was interrupted before producing a
        bundle); later writes raise BundleAborted."""
        with self._lock:
            self._aborted = True
            shutil.rmtree(self.root, ignore_errors=True)
