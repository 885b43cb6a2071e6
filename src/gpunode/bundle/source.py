"""Where a bundle's bytes come from: a directory or a .tar.gz of one.

Both look the same to the loader: relative POSIX paths in, bytes out. A
compressed tar is decompressed once into an unnamed temporary file (bounded by
MAX_TOTAL_BYTES), its members indexed once by name, and read lazily from there
by offset, so reading nodes in any order costs no second decompression.

Bundles come from clusters and people gpunode does not trust (limits.py, docs/limits.md):
only regular files are read; a link that leads out of a bundle folder, a FIFO or a
device is treated as absent, never opened; archive links are ignored.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import stat
import tarfile
import tempfile
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Protocol, cast

from gpunode.bounded import copy_sparse
from gpunode.errors import BundleError
from gpunode.limits import MAX_FILE_BYTES, MAX_FILES, MAX_TOTAL_BYTES

MAX_MEMBER_BYTES = MAX_FILE_BYTES
_ARCHIVE_ERRORS = (tarfile.TarError, EOFError, OSError, zlib.error, lzma.LZMAError, ValueError)


class BundleSource(Protocol):
    """Read-only access to the files of a bundle by relative path."""

    location: str

    def read(self, rel: str, limit: int | None = None) -> bytes | None:
        """The file's bytes (at most ``limit`` of them), or None when the bundle lacks it."""
        ...

    def list(self, prefix: str) -> list[str]:
        """Relative paths of all files under ``prefix`` (a directory path)."""
        ...

    def open(self, rel: str) -> tuple[IO[bytes], int] | None:
        """The file opened for reading in pieces, and its size; None when the bundle lacks it."""
        ...


class DirSource:
    """A bundle unpacked in a directory."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.location = str(root)
        self._real = root.resolve()
        #: The real folder as text ending in a separator: a listed file's path is one concatenation.
        self._prefix = os.path.join(self._real, "")
        #: Files a listing found: regular files reached through real folders of the bundle.
        self._listed: set[str] = set()
        #: Listings another process is making of this folder (bundle/ahead.py), by prefix:
        #: each gives the listing ``list`` would return, or None when it could not be made.
        self.listings_made: dict[str, Callable[[], list[str] | None]] = {}

    def read(self, rel: str, limit: int | None = None) -> bytes | None:
        if rel in self._listed:
            data = self._read_listed(rel, limit)
            if data is not None:
                return data
        opened = self.open(rel)
        if opened is None:
            return None
        handle, size = opened
        with handle:
            if limit is None and size > MAX_FILE_BYTES:
                raise BundleError(f"{self.root / rel}: {size} bytes, over the "
                                  f"{MAX_FILE_BYTES}-byte limit for one bundle file")
            try:
                return handle.read(MAX_FILE_BYTES if limit is None else limit)
            except OSError as exc:
                raise BundleError(f"{self.root / rel}: cannot read: {exc.strerror}") from None

    def open(self, rel: str) -> tuple[IO[bytes], int] | None:
        opened = self._open_listed(rel) if rel in self._listed else None
        return opened if opened is not None else self._open_carefully(rel)

    def _open_listed(self, rel: str) -> tuple[IO[bytes], int] | None:
        """A listed file opened without resolving its path again (thousands per bundle): its
        folders were walked without following links, and the file itself is opened only
        if it is not a link (``O_NOFOLLOW``) and is a regular file. None: open it carefully."""
        try:
            fd = os.open(self._prefix + rel, _LISTED_OPEN)
        except OSError:  # a link to a file inside the bundle, or gone since it was listed
            return None
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            return None
        return open(fd, "rb", closefd=True), info.st_size

    def _open_carefully(self, rel: str) -> tuple[IO[bytes], int] | None:
        path = self._inside(rel)
        if path is None:
            return None
        try:
            info = path.stat()
            if not stat.S_ISREG(info.st_mode):
                return None  # a FIFO, device or folder is not an observation
            return path.open("rb"), info.st_size
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise BundleError(f"{self.root / rel}: cannot read: {exc.strerror}") from None

    def _read_listed(self, rel: str, limit: int | None) -> bytes | None:
        """A listed file read without resolving its path again (thousands per bundle): its
        folders were walked without following links, and the file itself is opened only
        if it is not a link (``O_NOFOLLOW``) and is a regular file. None: read it carefully.
        Read with ``os.read`` into one buffer of the file's size (a buffered file object
        cost four times the read itself on a node's small files)."""
        try:
            fd = os.open(self._prefix + rel, _LISTED_OPEN)
        except OSError:  # a link to a file inside the bundle, or gone since it was listed
            return None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return None
            if limit is None and info.st_size > MAX_FILE_BYTES:
                raise BundleError(f"{self.root / rel}: {info.st_size} bytes, over the "
                                  f"{MAX_FILE_BYTES}-byte limit for one bundle file")
            try:
                return _read_fd(fd, MAX_FILE_BYTES if limit is None else limit, info.st_size)
            except OSError as exc:
                raise BundleError(f"{self.root / rel}: cannot read: {exc.strerror}") from None
        finally:
            os.close(fd)

    def _inside(self, rel: str) -> Path | None:
        """The real path of ``rel`` if it stays inside the bundle folder, else None."""
        if not _safe_rel(rel):
            return None
        try:
            real = (self.root / rel).resolve()
        except (OSError, RuntimeError):  # a link loop
            return None
        return real if real.is_relative_to(self._real) else None

    def list(self, prefix: str) -> list[str]:
        """Regular files under ``prefix``; links are not followed, special files skipped."""
        made = self.listings_made.pop(prefix, None)
        listing = made() if made is not None else None
        if listing is not None:
            self._listed.update(listing)
            return listing
        base = self._inside(prefix.rstrip("/"))
        if base is None or not base.is_dir() or (self.root / prefix.rstrip("/")).is_symlink():
            return []
        found: list[str] = []
        _walk(str(base), prefix.strip("/"), found, self._real)
        self._listed.update(found)
        return sorted(found)


def _read_fd(fd: int, limit: int, size: int) -> bytes:
    """At most ``limit`` bytes from ``fd`` up to its end. A regular file's ``read`` comes
    back short only at its end, so a file that did not grow since ``fstat`` (``size``)
    takes one call; one that grew is read on, up to ``limit``."""
    want = min(limit, size + 1)
    data = os.read(fd, want)
    if len(data) < want or len(data) >= limit:
        return data
    chunks = [data]
    left = limit - len(data)
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


#: Opening a listed file: never through a final link, never blocking on a FIFO put there since.
_LISTED_OPEN = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)


def _walk(directory: str, rel: str, found: list[str], root: Path) -> None:
    """Regular files under ``directory`` by relative path, one ``os.scandir`` per folder.

    Linked folders are not entered; a linked file is listed only when it leads to a
    regular file inside the bundle (``root``); FIFOs and devices are skipped; more
    than MAX_FILES entries is an error.
    """
    with os.scandir(directory) as entries:
        for entry in entries:
            name = f"{rel}/{entry.name}" if rel else entry.name
            if entry.is_dir(follow_symlinks=False):
                _walk(entry.path, name, found, root)
            elif entry.is_file(follow_symlinks=False) or _link_inside(entry, root):
                found.append(name)
                if len(found) > MAX_FILES:
                    raise BundleError(f"{directory}: more than {MAX_FILES} files in the bundle")


def _link_inside(entry: os.DirEntry[str], root: Path) -> bool:
    if not entry.is_symlink():
        return False
    try:
        real = Path(entry.path).resolve()
        return real.is_relative_to(root) and stat.S_ISREG(real.stat().st_mode)
    except (OSError, RuntimeError):
        return False


class TarSource:
    """A bundle packed as .tar.gz; members may sit under one top-level folder."""

    def __init__(self, path: Path) -> None:
        self.location = str(path)
        self._path = path
        try:
            self._file = _uncompressed(path)
            self._tar = tarfile.open(fileobj=self._file, mode="r:")  # noqa: SIM115 - lazy reads
            members = _regular_members(self._tar, path)
        except BundleError:
            raise
        except _ARCHIVE_ERRORS as exc:
            raise BundleError(f"{path}: not a readable tar archive ({_first_line(exc)})") from None
        strip = _single_top(members)
        self._members = {_strip(m.name, strip): m for m in members}

    def read(self, rel: str, limit: int | None = None) -> bytes | None:
        member = self._members.get(rel)
        if member is None:
            return None
        if limit is None and member.size > MAX_MEMBER_BYTES:
            raise BundleError(f"{self._path}: member {rel} is too large ({member.size} bytes, "
                              f"limit {MAX_MEMBER_BYTES})")
        try:
            handle = self._tar.extractfile(member)
            return handle.read(MAX_MEMBER_BYTES if limit is None else limit) if handle else None
        except _ARCHIVE_ERRORS as exc:
            raise BundleError(f"{self._path}: truncated or corrupt at {rel} "
                              f"({_first_line(exc)})") from None

    def open(self, rel: str) -> tuple[IO[bytes], int] | None:
        member = self._members.get(rel)
        if member is None:
            return None
        try:
            handle = self._tar.extractfile(member)
        except _ARCHIVE_ERRORS as exc:
            raise BundleError(f"{self._path}: truncated or corrupt at {rel} "
                              f"({_first_line(exc)})") from None
        return (handle, member.size) if handle else None

    def list(self, prefix: str) -> list[str]:
        prefix = prefix.rstrip("/") + "/"
        return sorted(name for name in self._members if name.startswith(prefix))


_TOP_LEVEL = {"cluster", "logs", "nodes", "manifest.json"}


def _decompressor(magic: bytes, raw: IO[bytes]) -> IO[bytes] | None:
    """A decompressing reader for gzip, bzip2 or xz data; None for a plain tar."""
    if magic.startswith(b"\x1f\x8b"):
        return cast("IO[bytes]", gzip.GzipFile(fileobj=raw))
    if magic.startswith(b"BZh"):
        return bz2.BZ2File(raw)
    if magic.startswith(b"\xfd7zXZ\x00"):
        return lzma.LZMAFile(raw)
    return None


def _uncompressed(path: Path) -> IO[bytes]:
    """The archive as an uncompressed, seekable file: decompressed once, at most
    MAX_TOTAL_BYTES (a gzip bomb ends here with one line)."""
    raw = path.open("rb")
    magic = raw.read(6)
    raw.seek(0)
    decompressor = _decompressor(magic, raw)
    if decompressor is None:
        return raw
    spool = tempfile.TemporaryFile(prefix="gpunode-bundle-")  # noqa: SIM115 - returned
    total = 0
    try:
        with raw, decompressor as stream:
            while chunk := stream.read(1 << 20):
                total += len(chunk)
                if total > MAX_TOTAL_BYTES:
                    raise BundleError(f"{path}: expands to more than {MAX_TOTAL_BYTES} bytes "
                                      "(the limit for one bundle)")
                spool.write(chunk)
    except BaseException:
        spool.close()
        raise
    spool.seek(0)
    return spool


def _regular_members(tar: tarfile.TarFile, path: Path) -> list[tarfile.TarInfo]:
    """Regular-file members, indexed in one pass; links, devices and FIFOs are ignored."""
    members: list[tarfile.TarInfo] = []
    for count, member in enumerate(tar, 1):
        if count > MAX_FILES:
            raise BundleError(f"{path}: more than {MAX_FILES} members")
        if member.isfile() and _safe_rel(member.name.lstrip("./") or "."):
            members.append(member)
    return members


def _single_top(members: list[tarfile.TarInfo]) -> bool:
    """Whether every member sits under one top-level folder that is not a bundle part."""
    tops = {PurePosixPath(m.name.lstrip("./")).parts[0] for m in members if m.name.strip("./")}
    return len(tops) == 1 and next(iter(tops)) not in _TOP_LEVEL and all(
        len(PurePosixPath(m.name.lstrip("./")).parts) > 1 for m in members)


def _strip(name: str, strip_top: bool) -> str:
    """Drop the single top-level folder ("bundle/cluster/x" → "cluster/x")."""
    parts = PurePosixPath(name.lstrip("./")).parts
    return "/".join(parts[1:] if strip_top else parts)


def _safe_rel(rel: str) -> bool:
    """A relative path that names no parent folder, no absolute path, no NUL."""
    parts = PurePosixPath(rel).parts
    return bool(parts) and not rel.startswith("/") and ".." not in parts and "\0" not in rel


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def open_bundle(path: Path) -> BundleSource:
    """A source for a bundle directory or archive; missing paths are BundleErrors."""
    if path.is_dir():
        return DirSource(path)
    if path.is_file():
        return TarSource(path)
    if path.exists():
        raise BundleError(f"{path}: not a bundle (a FIFO or device; expected a directory or a .tar.gz)")
    raise BundleError(f"{path}: no such bundle (expected a directory or a .tar.gz)")


def iter_lines(data: bytes) -> Iterator[str]:
    """Decode bytes leniently: logs may hold invalid UTF-8 from kernels and tools."""
    yield from data.decode("utf-8", errors="replace").splitlines()


@dataclass
class Copied:
    """What ``copy_bundle_folder`` copied, and one line for each thing it left out or cut."""

    files: int = 0
    data_bytes: int = 0
    notes: list[str] = field(default_factory=list)


def copy_bundle_folder(src: Path, dst: Path) -> Copied:
    """Copy a bundle folder's regular files into ``dst`` (made here). Nothing outside the
    bundle is read or copied: links (to /etc, to /dev/zero …), FIFOs and devices are
    skipped, and so is a file with a hard link outside the bundle (more links than the
    bundle holds: /etc/shadow linked in). Holes are not read (a sparse 100 GiB file is
    copied as what it holds), a file is cut at MAX_FILE_BYTES and the copy at
    MAX_TOTAL_BYTES of data; each skip and cut is one note. More than MAX_FILES files is
    a BundleError."""
    files = _regular_files(src)
    links = Counter((info.st_dev, info.st_ino) for _, info in files if info.st_nlink > 1)
    copied = Copied()
    for rel, info in files:
        if info.st_nlink > max(1, links[(info.st_dev, info.st_ino)]):
            copied.notes.append(f"{rel}: not copied: it has hard links outside the bundle")
            continue
        left = MAX_TOTAL_BYTES - copied.data_bytes
        if left <= 0:
            copied.notes.append(f"{rel}: not copied: the copy reached {MAX_TOTAL_BYTES} bytes")
            continue
        target = dst / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            data, cut = copy_sparse(src / rel, target, min(MAX_FILE_BYTES, left))
        except OSError as exc:  # replaced by a link or a FIFO since it was listed
            copied.notes.append(f"{rel}: not copied: {exc.strerror or exc}")
            continue
        copied.files += 1
        copied.data_bytes += data
        if cut:
            copied.notes.append(f"{rel}: cut at {min(MAX_FILE_BYTES, left)} bytes (docs/limits.md)")
    dst.mkdir(parents=True, exist_ok=True)
    return copied


def _regular_files(src: Path) -> list[tuple[str, os.stat_result]]:
    """Every regular file under ``src`` (links not followed), with its lstat."""
    found: list[tuple[str, os.stat_result]] = []
    for folder, dirs, names in os.walk(src, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not Path(folder, d).is_symlink())
        for name in sorted(names):
            path = Path(folder, name)
            info = path.lstat()
            if stat.S_ISREG(info.st_mode):
                found.append((str(path.relative_to(src)), info))
                if len(found) > MAX_FILES:
                    raise BundleError(f"{src}: more than {MAX_FILES} files")
    return found
