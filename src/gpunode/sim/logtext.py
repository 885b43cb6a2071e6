"""Log line formats the GPU stack's components really use (klog, logrus, slog, zap, plain)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import overload


def klog(at: datetime, where: str, message: str, level: str = "I") -> str:
    """`I0512 14:26:03.104812       1 main.go:235] message` (Kubernetes klog)."""
    return f"{level}{at:%m%d %H:%M:%S}.{at.microsecond:06d}       1 {where}] {message}"


def logrus(at: datetime, level: str, message: str) -> str:
    """`time="2025-05-12T14:26:03Z" level=info msg="..."` (logrus text formatter)."""
    escaped = message.replace('"', '\\"')
    return f'time="{at:%Y-%m-%dT%H:%M:%SZ}" level={level} msg="{escaped}"'


def slog(at: datetime, level: str, message: str, attrs: str = "") -> str:
    """`time=2025-05-12T14:26:05.112Z level=INFO msg="..."` (Go slog text handler)."""
    escaped = message.replace('"', '\\"')
    tail = f" {attrs}" if attrs else ""
    return f'time={at:%Y-%m-%dT%H:%M:%S}.{at.microsecond // 1000:03d}Z level={level} msg="{escaped}"{tail}'


def zap_json(at: datetime, level: str, logger: str, message: str, extra: str = "") -> str:
    """controller-runtime zap JSON line with epoch timestamps."""
    escaped = message.replace('"', '\\"')
    tail = f",{extra}" if extra else ""
    return f'{{"level":"{level}","ts":{at.timestamp():.6f},"logger":"{logger}","msg":"{escaped}"{tail}}}'


def stdlog(at: datetime, message: str) -> str:
    """Go's standard `log` package: `2025/05/12 14:26:03 message`."""
    return f"{at:%Y/%m/%d %H:%M:%S} {message}"


def fluentbit(at: datetime, level: str, scope: str, message: str) -> str:
    """`[2025/05/12 14:26:03] [ info] [scope] message`."""
    return f"[{at:%Y/%m/%d %H:%M:%S}] [{level:>5}] [{scope}] {message}"


TICKS = 400


@functools.cache
def _offsets(step_ms: int) -> tuple[timedelta, ...]:
    """The offsets of a burst's ticks from its start; a few dozen steps are ever used."""
    return tuple(timedelta(milliseconds=step_ms * i, microseconds=(i * 7919) % 1000) for i in range(TICKS))


class Ticks(Sequence[datetime]):
    """Increasing timestamps for a burst of log lines, each made when it is read: a log
    template reads a handful of its 400 ticks, and making them all was a quarter of the
    CPU of building a bundle."""

    __slots__ = ("_offsets", "_start")

    def __init__(self, start: datetime, step_ms: int) -> None:
        self._start = start
        self._offsets = _offsets(step_ms)

    def __len__(self) -> int:
        return TICKS

    @overload
    def __getitem__(self, index: int) -> datetime: ...

    @overload
    def __getitem__(self, index: slice) -> list[datetime]: ...

    def __getitem__(self, index: int | slice) -> datetime | list[datetime]:
        if isinstance(index, slice):
            return [self._start + d for d in self._offsets[index]]
        return self._start + self._offsets[index]


def ticks(start: datetime, step_ms: int) -> Ticks:
    """Increasing timestamps for a burst of log lines: tick i is `i * step_ms` ms (plus a
    stable sub-millisecond jitter) after `start`."""
    return Ticks(start, step_ms)


def join(lines: list[str]) -> str:
    """Lines to log-file text (trailing newline, as kubectl logs prints)."""
    return "\n".join(lines) + "\n"
