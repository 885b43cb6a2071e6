"""One bounded reader: bytes from a source gpunode does not trust are gathered here.

API bodies (list pages, logs, proxied metrics, agent facts, ``/version``, error
answers), the output of commands run in pods or on the node, and files read whole
(kubeconfig, must-gather listings and logs) all pass through ``Capped``: it keeps at
most its limit, stops the reading there, and says in one line what was cut and where
the limit is documented (docs/limits.md). A cut is never silent and never a crash:
callers decide whether the part read is worth keeping (a log's head, a scrape's
whole lines) or the source counts as lost.

Bodies read at once by the collector's workers share one pool (IN_FLIGHT_BYTES), so
32 exporters streaming endless ``/metrics`` at once cost that pool, not 32 limits.
"""

from __future__ import annotations

import os
import selectors
import stat
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, BinaryIO

#: An error answer (status 400 and above) read at most this far: its message is one line.
MAX_ERROR_BODY_BYTES = 64 * 1024
#: Bytes of answers the collector's workers may hold at once while reading them.
IN_FLIGHT_BYTES = 256 * 1024 * 1024
#: stderr of a command kept at most this large (its first line is what is shown).
MAX_STDERR_BYTES = 64 * 1024


def size_text(size: int) -> str:
    """A limit as people read it: 32 MiB, 256 KiB, 100 bytes."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift} {unit}"
    return f"{size:,} bytes"


class BytePool:
    """Bytes shared by readers running at once; a reader that finds none left is cut."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.used = 0
        self._lock = threading.Lock()

    def take(self, count: int) -> bool:
        with self._lock:
            if self.used + count > self.size:
                return False
            self.used += count
            return True

    def give(self, count: int) -> None:
        with self._lock:
            self.used = max(0, self.used - count)


#: The collector's pool (see the module's docstring).
IN_FLIGHT = BytePool(IN_FLIGHT_BYTES)


class Capped:
    """Bytes gathered up to ``limit``; past it nothing more is kept and ``cut`` says so.

    With a ``pool``, each kept byte is taken from it while reading and given back by
    ``release()`` (or ``value()``); a pool run dry cuts the read there too."""

    def __init__(self, limit: int, what: str, pool: BytePool | None = None) -> None:
        self.limit = limit
        self.what = what
        self.size = 0
        self.cut = False
        self.pool_dry = False
        self._parts: list[bytes] = []
        self._pool = pool
        self._taken = 0

    def add(self, chunk: bytes) -> bool:
        """Keep what fits of ``chunk``; False once the limit is reached (stop reading)."""
        if not chunk:  # nothing yet: whether more comes decides whether it is cut
            return True
        room = self.limit - self.size
        if room <= 0:
            self.cut = True
            return False
        kept = chunk[:room]
        if self._pool is not None:
            if not self._pool.take(len(kept)):
                self.cut = self.pool_dry = True
                return False
            self._taken += len(kept)
        self._parts.append(kept)
        self.size += len(kept)
        if len(chunk) > room:
            self.cut = True
            return False
        return True

    def release(self) -> None:
        if self._pool is not None and self._taken:
            self._pool.give(self._taken)
            self._taken = 0

    def value(self) -> bytes:
        """What was kept (the pool's share given back: the caller holds it now)."""
        self.release()
        data = b"".join(self._parts)
        self._parts = [data] if data else []
        return data

    def held(self) -> bytes:
        """What was kept, its pool share still taken: the share is given back by this thread's
        next ``release_held()``, once the job that read the bytes is done with them. Outputs
        read whole and still being stored count against the pool, so readers that finish at
        once cannot each hold a whole limit outside it."""
        data = b"".join(self._parts)
        self._parts = [data] if data else []
        if self._pool is not None and self._taken:
            shares: list[tuple[BytePool, int]] = getattr(_HELD, "shares", [])
            shares.append((self._pool, self._taken))
            _HELD.shares = shares
            self._taken = 0
        return data

    def note(self) -> str:
        """The one line naming the cut."""
        if self.pool_dry and self._pool is not None:
            return (f"{self.what}: cut at {self.size:,} bytes: more than "
                    f"{size_text(self._pool.size)} of answers were being read at once "
                    "(docs/limits.md)")
        return f"{self.what}: cut at {size_text(self.limit)} (its limit, docs/limits.md)"


_HELD = threading.local()


def release_held() -> None:
    """Give back the pool shares this thread's ``Capped.held()`` kept (its job is done)."""
    for pool, count in getattr(_HELD, "shares", ()):
        pool.give(count)
    _HELD.shares = []


class OutputCut(Exception):
    """A writable sink (``CappedSink``) was given more than its limit."""


class CappedSink:
    """A binary writable (what lightkube's exec writes a command's output to) that keeps
    at most ``limit`` bytes and raises OutputCut past it, which ends the reading."""

    def __init__(self, capped: Capped) -> None:
        self.capped = capped

    def write(self, data: bytes) -> int:
        if not self.capped.add(bytes(data)):
            raise OutputCut(self.capped.note())
        return len(data)

    def flush(self) -> None:
        pass


@dataclass(frozen=True)
class Ran:
    """A command's bounded result: ``cut`` holds the line naming a cut, else ""."""

    returncode: int
    stdout: bytes
    stderr: bytes
    cut: str = ""


def run_capped(argv: Sequence[str], *, timeout: float, max_bytes: int, what: str = "") -> Ran:
    """Run ``argv`` with its stdout kept up to ``max_bytes`` and stderr up to
    MAX_STDERR_BYTES; past the limit the command is killed and ``cut`` says so. Past
    ``timeout`` it is killed and subprocess.TimeoutExpired raised; OSError when it cannot
    start (as subprocess.run)."""
    out = Capped(max_bytes, what or os.path.basename(argv[0]))
    err = Capped(MAX_STDERR_BYTES, "stderr")
    with subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        try:
            _pump(proc, {proc.stdout: out, proc.stderr: err}, time.monotonic() + timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise subprocess.TimeoutExpired(list(argv), timeout) from None
        finally:
            if proc.poll() is None:
                proc.kill()
        code = proc.wait()
    return Ran(code, out.value(), err.value(), out.note() if out.cut else "")


def _pump(proc: subprocess.Popen[bytes], sinks: dict[IO[bytes], Capped], ends: float) -> None:
    """Read the pipes until both end or stdout is full; TimeoutExpired at ``ends``."""
    with selectors.DefaultSelector() as selector:
        for stream, sink in sinks.items():
            selector.register(stream, selectors.EVENT_READ, sink)
        while selector.get_map():
            left = ends - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(proc.args, 0)
            for key, _ in selector.select(min(left, 1.0)):
                capped: Capped = key.data
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    selector.unregister(key.fileobj)
                elif not capped.add(chunk) and capped.what != "stderr":
                    return  # stdout is full: the command is killed by the caller


class TooLarge(ValueError):
    """A file read whole is larger than its limit; the message is one line naming it."""


def read_whole(path: Path, limit: int, what: str) -> bytes:
    """The whole of a regular file no larger than ``limit`` bytes (TooLarge beyond it,
    named with ``what``; OSError when it cannot be read). FIFOs and devices are refused
    before they are opened (a FIFO would block, /dev/zero never ends)."""
    info = path.stat()
    if not stat.S_ISREG(info.st_mode):
        raise TooLarge(f"{path}: not a regular file ({what})")
    with path.open("rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(f"{path}: larger than {size_text(limit)}, the limit for {what} "
                       "(docs/limits.md)")
    return data


def tail_lines(path: Path, max_bytes: int, max_line: int) -> tuple[Iterator[bytes], bool]:
    """The lines of the last ``max_bytes`` of a file (a partial first line dropped), each
    cut to ``max_line`` bytes; and whether anything before them was left unread. Only one
    piece of a line is held at a time, whatever its length."""
    handle = path.open("rb")
    size = os.fstat(handle.fileno()).st_size
    skipped = size > max_bytes
    if skipped:
        handle.seek(size - max_bytes)
        _skip_line(handle, max_line)

    def lines() -> Iterator[bytes]:
        with handle:
            yield from capped_lines(handle, max_line)
    return lines(), skipped


def capped_lines(stream: IO[bytes] | BinaryIO, max_line: int) -> Iterator[bytes]:
    """Lines of a binary stream (newline kept), each cut to ``max_line`` bytes; the rest
    of a longer line is read in pieces and dropped."""
    while True:
        line = stream.readline(max_line)
        if not line:
            return
        if not line.endswith(b"\n") and len(line) >= max_line:
            _skip_line(stream, max_line)
            line += b"\n"
        yield line


def _skip_line(stream: IO[bytes] | BinaryIO, piece: int) -> None:
    while True:
        rest = stream.readline(piece)
        if not rest or rest.endswith(b"\n"):
            return


def copy_sparse(src: Path, dst: Path, limit: int) -> tuple[int, bool]:
    """Copy the regular file ``src`` to the new file ``dst`` without reading its holes (the
    copy keeps them: a sparse 100 GiB file costs what it holds), at most its first
    ``limit`` bytes; the bytes of data copied, and whether the file was cut. ``src`` is
    opened without following a link, and must still be the regular file it was; ``dst``
    must not exist (an OSError otherwise: nothing is overwritten)."""
    fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{src}: not a regular file")
        end = min(info.st_size, limit)
        out = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            copied = sum(_copy_range(fd, out, start, stop) for start, stop in _data_ranges(fd, end))
            os.ftruncate(out, end)
        finally:
            os.close(out)
    finally:
        os.close(fd)
    return copied, info.st_size > limit


def _data_ranges(fd: int, end: int) -> Iterator[tuple[int, int]]:
    """The ranges of ``fd`` below ``end`` that hold data (SEEK_DATA/SEEK_HOLE; the whole
    file where the file system cannot tell)."""
    pos = 0
    while pos < end:
        try:
            start = os.lseek(fd, pos, os.SEEK_DATA)
            stop = os.lseek(fd, start, os.SEEK_HOLE)
        except OSError as exc:
            if exc.errno == 6:  # ENXIO: only a hole from here to the end
                return
            yield pos, end  # no hole support: read it all
            return
        if start >= end:
            return
        yield start, min(stop, end)
        pos = stop


def _copy_range(src: int, dst: int, start: int, stop: int) -> int:
    done = start
    while done < stop:
        chunk = os.pread(src, min(1 << 20, stop - done), done)
        if not chunk:
            break
        os.pwrite(dst, chunk, done)
        done += len(chunk)
    return done - start
