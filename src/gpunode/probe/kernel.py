"""Reading the kernel ring buffer, bounded, without blocking.

``/dev/kmsg`` opened non-blocking returns one record per read and ``EAGAIN`` at the
end, so it never waits for new messages. Records are rewritten in ``dmesg``'s own
``[seconds.micros] message`` form so the bundle's ``cmd/dmesg.txt`` looks like the
command's output whichever source was used. Only the newest ``max_bytes`` are kept.
"""

from __future__ import annotations

import errno
import os
import subprocess
from collections import deque

from gpunode.bounded import run_capped

MAX_KERNEL_LOG_BYTES = 2 * 1024 * 1024
MAX_RECORDS = 500_000
DMESG_TIMEOUT_S = 10.0
#: ``dmesg`` output read at most this far (bounded.run_capped), of which the last
#: MAX_KERNEL_LOG_BYTES are kept; a kernel ring buffer holds 16 MiB at most.
DMESG_READ_BYTES = 32 * 1024 * 1024


class _Tail:
    """Keeps the newest lines within a byte budget."""

    def __init__(self, max_bytes: int) -> None:
        self.lines: deque[str] = deque()
        self.size = 0
        self.max_bytes = max_bytes
        self.truncated = False

    def add(self, line: str) -> None:
        self.lines.append(line)
        self.size += len(line) + 1
        while self.size > self.max_bytes and self.lines:
            self.size -= len(self.lines.popleft()) + 1
            self.truncated = True

    def text(self) -> str:
        return "".join(line + "\n" for line in self.lines)


def kmsg_record_to_dmesg(record: str) -> str | None:
    """``6,1234,5678,-;text`` -> ``[    0.005678] text``; None for non-records."""
    header, sep, message = record.partition(";")
    fields = header.split(",")
    if not sep or len(fields) < 3 or not fields[2].isdigit():
        return None
    micros = int(fields[2])
    body = message.replace("\\x0a", "\n" + " " * 15)
    return f"[{micros // 1_000_000:5d}.{micros % 1_000_000:06d}] {body}"


def read_kmsg(path: str, max_bytes: int = MAX_KERNEL_LOG_BYTES) -> tuple[str, bool]:
    """The ring buffer in dmesg form and whether older lines were dropped.

    The character device returns one record per read; a saved copy (a regular file)
    returns many, so reads are split into lines and continuation lines (starting
    with a space: ``SUBSYSTEM=``/``DEVICE=`` metadata) are skipped either way.
    Raises OSError when the device cannot be opened (not privileged, absent).
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    tail = _Tail(max_bytes)
    carry = ""
    try:
        for _ in range(MAX_RECORDS):
            chunk = _read_record(fd)
            if chunk is None:
                break
            *complete, carry = (carry + chunk.decode("utf-8", errors="replace")).split("\n")
            _add_records(tail, complete)
    finally:
        os.close(fd)
    _add_records(tail, [carry])
    return tail.text(), tail.truncated


def _read_record(fd: int) -> bytes | None:
    """One read; None at the end of the buffer (EAGAIN) or of a file."""
    while True:
        try:
            chunk = os.read(fd, 8192)
        except BlockingIOError:
            return None
        except OSError as exc:
            if exc.errno == errno.EPIPE:  # record overwritten while reading: go on
                continue
            raise
        return chunk or None


def _add_records(tail: _Tail, lines: list[str]) -> None:
    for line in lines:
        if line and not line.startswith(" "):
            converted = kmsg_record_to_dmesg(line)
            if converted is not None:
                tail.add(converted)


def run_dmesg(max_bytes: int = MAX_KERNEL_LOG_BYTES) -> tuple[str, bool]:
    """``dmesg`` output (tail); raises OSError/SubprocessError when it cannot run."""
    done = run_capped(["dmesg"], timeout=DMESG_TIMEOUT_S, max_bytes=DMESG_READ_BYTES)
    if done.returncode != 0 and not done.cut:
        raise subprocess.CalledProcessError(done.returncode, ["dmesg"], done.stdout, done.stderr)
    text = done.stdout.decode("utf-8", errors="replace")
    tail = _Tail(max_bytes)
    for line in text.splitlines():
        tail.add(line)
    return tail.text(), tail.truncated
