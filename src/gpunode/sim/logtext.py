"""Log line formats the GPU stack's components really use (klog, logrus, slog, zap, plain)."""

from __future__ import annotations

from datetime import datetime, timedelta


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


def ticks(start: datetime, step_ms: int) -> list[datetime]:
    """A generator of increasing timestamps for a burst of log lines."""
    return [start + timedelta(milliseconds=step_ms * i, microseconds=(i * 7919) % 1000) for i in range(400)]


def join(lines: list[str]) -> str:
    """Lines to log-file text (trailing newline, as kubectl logs prints)."""
    return "\n".join(lines) + "\n"
