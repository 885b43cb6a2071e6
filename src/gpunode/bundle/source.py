"""Where a bundle's bytes come from: a directory or a .tar.gz of one.

Both look the same to the loader: relative POSIX paths in, bytes out. A tar is
indexed once (members by name) and read lazily, so node files that no check
needs are never decompressed twice.
"""

from __future__ import annotations

import os
import tarfile
import zlib
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Protocol

from gpunode.errors import BundleError

MAX_MEMBER_BYTES = 512 * 1024 * 1024


class BundleSource(Protocol):
    """Read-only access to the files of a bundle by relative path."""

    location: str

    def read(self, rel: str) -> bytes | None:
        """The file's bytes, or None when the bundle does not have it."""
        ...

    def list(self, prefix: str) -> list[str]:
        """Relative paths of all files under ``prefix`` (a directory path)."""
        ...


class DirSource:
    """A bundle unpacked in a directory."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.location = str(root)

    def read(self, rel: str) -> bytes | None:
        path = self.root / rel
        try:
            return path.read_bytes()
        except FileNotFoundError:
            return None
        except IsADirectoryError:
            return None
        except OSError as exc:
            raise BundleError(f"{path}: cannot read: {exc.strerror}") from exc

    def list(self, prefix: str) -> list[str]:
        base = self.root / prefix
        if not base.is_dir():
            return []
        found: list[str] = []
        _walk(str(base), prefix.strip("/"), found)
        return sorted(found)


def _walk(directory: str, rel: str, found: list[str]) -> None:
    """Files under ``directory`` by relative path, one ``os.scandir`` per folder (no glob).

    As ``Path.rglob``: linked files count, linked folders are not entered.
    """
    with os.scandir(directory) as entries:
        for entry in entries:
            name = f"{rel}/{entry.name}" if rel else entry.name
            if entry.is_dir(follow_symlinks=False):
                _walk(entry.path, name, found)
            elif entry.is_file():
                found.append(name)


class TarSource:
    """A bundle packed as .tar.gz; members may sit under one top-level folder."""

    def __init__(self, path: Path) -> None:
        self.location = str(path)
        self._path = path
        try:
            self._tar = tarfile.open(path, "r:*")  # noqa: SIM115 - kept open for lazy reads
            members = self._tar.getmembers()
        except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
            raise BundleError(f"{path}: not a readable tar archive ({exc})") from exc
        self._members = {_strip_top(m.name, members): m for m in members if m.isfile()}

    def read(self, rel: str) -> bytes | None:
        member = self._members.get(rel)
        if member is None:
            return None
        if member.size > MAX_MEMBER_BYTES:
            raise BundleError(f"{self._path}: member {rel} is too large ({member.size} bytes)")
        try:
            handle = self._tar.extractfile(member)
            return handle.read() if handle else None
        except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
            raise BundleError(f"{self._path}: truncated or corrupt at {rel} ({exc})") from exc

    def list(self, prefix: str) -> list[str]:
        prefix = prefix.rstrip("/") + "/"
        return sorted(name for name in self._members if name.startswith(prefix))


def _strip_top(name: str, members: list[tarfile.TarInfo]) -> str:
    """Drop a single top-level folder ("bundle/cluster/x" → "cluster/x")."""
    parts = PurePosixPath(name.lstrip("./")).parts
    tops = {PurePosixPath(m.name.lstrip("./")).parts[0] for m in members if m.name.strip("./")}
    if len(tops) == 1 and len(parts) > 1 and parts[0] not in _TOP_LEVEL:
        parts = parts[1:]
    return "/".join(parts)


_TOP_LEVEL = {"cluster", "logs", "nodes", "manifest.json"}


def open_bundle(path: Path) -> BundleSource:
    """A source for a bundle directory or archive; missing paths are BundleErrors."""
    if path.is_dir():
        return DirSource(path)
    if path.is_file():
        return TarSource(path)
    raise BundleError(f"{path}: no such bundle (expected a directory or a .tar.gz)")


def iter_lines(data: bytes) -> Iterator[str]:
    """Decode bytes leniently: logs may hold invalid UTF-8 from kernels and tools."""
    yield from data.decode("utf-8", errors="replace").splitlines()
