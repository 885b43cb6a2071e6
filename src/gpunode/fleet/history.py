"""A node's history: the agent's probes kept as states over time, and the trends read from it.

The agent (``gpunode.agent.history``) keeps one small file per node. An entry is a
*state* of the node: its verdict, root causes, boot and driver-load times and each
GPU's error counters (ECC, retired pages, remapped rows, NVLink), with when that state
was first and last seen. A probe that finds the same state only moves ``seen``; a
change, or new Xid lines in the kernel log, opens a new entry. So a quiet node keeps
one entry for days and the file's bound (64 KiB) holds weeks of changes.

Everything here is pure: entries in, trends and changes out; the file lives in the agent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Final

import msgspec

from gpunode.errors import ParseError
from gpunode.fleet.model import NodeHistoryChanges, Trend
from gpunode.probe.result import ProbeResult

HISTORY_FORMAT: Final = "gpunode-history/v1"
#: The most bytes one node's history file may take (issue 25: ≤ 64 KiB per node).
HISTORY_MAX_BYTES: Final = 64 * 1024
#: The window trends are counted in ("Xid 79 three times in 7 days").
TREND_WINDOW_S: Final = 7 * 24 * 3600.0
#: Two boot or driver-load times closer than this are the same event (clock jitter).
_SAME_EVENT_S: Final = 5.0


class GpuCounters(msgspec.Struct, frozen=True, omit_defaults=True):
    """One GPU's error counters as NVML gave them (None: not read or not supported)."""

    gpu: str
    ecc_volatile_dbe: int | None = None
    ecc_aggregate_dbe: int | None = None
    ecc_volatile_sbe: int | None = None
    retired_pages_dbe: int | None = None
    retired_pages_pending: bool | None = None
    remapped_rows_correctable: int | None = None
    remapped_rows_uncorrectable: int | None = None
    remapped_rows_pending: bool | None = None
    remapped_rows_failure: bool | None = None
    nvlink_errors: dict[str, int] = msgspec.field(default_factory=dict)


class HistoryEntry(msgspec.Struct, frozen=True, omit_defaults=True):
    """One state of the node, first seen at ``at`` and last at ``seen`` (Unix seconds)."""

    at: float
    seen: float
    verdict: str = ""
    root_causes: tuple[str, ...] = ()
    xids: dict[str, int] = msgspec.field(default_factory=dict)
    boot_time: float | None = None
    driver_loaded_at: float | None = None
    gpus: tuple[GpuCounters, ...] = ()


class History(msgspec.Struct, frozen=True):
    """The file's content: oldest entry first."""

    format: str
    node: str
    entries: tuple[HistoryEntry, ...] = ()


_DECODER = msgspec.json.Decoder(History)


def rfc3339(ts: float) -> str:
    """Unix seconds as the RFC 3339 UTC time the reports print."""
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def encode_history(history: History) -> bytes:
    """The file's bytes (compact JSON: the bound is on bytes)."""
    return msgspec.json.encode(history)


def decode_history(data: bytes) -> History:
    """The history in ``data``; ParseError when it is not one (damaged, other format)."""
    try:
        history = _DECODER.decode(data)
    except msgspec.DecodeError as exc:
        raise ParseError(f"not a gpunode history: {str(exc).splitlines()[0]}") from None
    except RecursionError:
        raise ParseError("not a gpunode history: nested too deeply") from None
    if history.format != HISTORY_FORMAT:
        raise ParseError(f"unsupported history format {history.format!r}")
    return history


def gpu_counters(result: ProbeResult) -> tuple[GpuCounters, ...]:
    """Each GPU's counters from a probe, NVLink counters summed over the GPU's links."""
    out = []
    for gpu in result.nvml.gpus:
        links: dict[str, int] = {}
        for link in gpu.nvlinks:
            for name, value in link.errors.items():
                links[name] = links.get(name, 0) + value
        out.append(GpuCounters(
            gpu=gpu.uuid or f"GPU {gpu.index}",
            ecc_volatile_dbe=gpu.ecc_volatile_dbe, ecc_aggregate_dbe=gpu.ecc_aggregate_dbe,
            ecc_volatile_sbe=gpu.ecc_volatile_sbe, retired_pages_dbe=gpu.retired_pages_dbe,
            retired_pages_pending=gpu.retired_pages_pending,
            remapped_rows_correctable=gpu.remapped_rows_correctable,
            remapped_rows_uncorrectable=gpu.remapped_rows_uncorrectable,
            remapped_rows_pending=gpu.remapped_rows_pending,
            remapped_rows_failure=gpu.remapped_rows_failure, nvlink_errors=links))
    return tuple(out)


def entry_from_probe(result: ProbeResult, at: float, *, verdict: str = "",
                     root_causes: Iterable[str] = (), new_xids: Iterable[int] = ()) -> HistoryEntry:
    """The state one probe found; ``new_xids`` are the Xid codes of lines not seen before."""
    xids: dict[str, int] = {}
    for code in new_xids:
        xids[str(code)] = xids.get(str(code), 0) + 1
    return HistoryEntry(at=at, seen=at, verdict=verdict, root_causes=tuple(sorted(set(root_causes))),
                        xids=xids, boot_time=result.host.boot_time,
                        driver_loaded_at=result.host.driver_loaded_at, gpus=gpu_counters(result))


def _state(entry: HistoryEntry) -> HistoryEntry:
    return msgspec.structs.replace(entry, at=0.0, seen=0.0, xids={})


def record(history: History, entry: HistoryEntry) -> History:
    """The history with ``entry``: the last entry's ``seen`` moves when the state is unchanged
    and no new Xid appeared; otherwise the entry is appended."""
    last = history.entries[-1] if history.entries else None
    if last is not None and not entry.xids and _state(last) == _state(entry) and entry.at >= last.at:
        moved = msgspec.structs.replace(last, seen=max(last.seen, entry.seen))
        return msgspec.structs.replace(history, entries=(*history.entries[:-1], moved))
    return msgspec.structs.replace(history, entries=(*history.entries, entry))


def compact(history: History, max_bytes: int = HISTORY_MAX_BYTES) -> tuple[History, bytes]:
    """Oldest entries dropped until the file fits ``max_bytes`` (the newest is always kept)."""
    data = encode_history(history)
    if len(data) <= max_bytes:
        return history, data
    sizes = [len(msgspec.json.encode(e)) + 1 for e in history.entries]  # each with its comma
    excess, drop = len(data) - max_bytes, 0
    while excess > 0 and drop < len(sizes) - 1:
        excess -= sizes[drop]
        drop += 1
    history = msgspec.structs.replace(history, entries=history.entries[drop:])
    return history, encode_history(history)


# --- trends ------------------------------------------------------------------------------

_TIMES = {1: "once", 2: "twice"}


def _times(n: int) -> str:
    return _TIMES.get(n, f"{n} times")


def _span(seconds: float) -> str:
    days = seconds / 86400
    if days >= 1:
        return f"{days:.0f} day{'s' if round(days) != 1 else ''}"
    hours = max(1, round(seconds / 3600))
    return f"{hours} hour{'s' if hours != 1 else ''}"


def trends(entries: Sequence[HistoryEntry], now: float | None = None,
           window_s: float = TREND_WINDOW_S) -> tuple[Trend, ...]:
    """Xid counts, ECC and NVLink counter growth, pending remaps and restarts in the window.

    Counters are compared from the first entry in the window to the last; a counter that
    went down was reset (driver reload for volatile ECC and NVLink counters), so only the
    rises are added up. An empty history has no trends."""
    if not entries:
        return ()
    end = entries[-1].seen if now is None else now
    window = [e for e in entries if e.seen >= end - window_s]
    if not window:
        return ()
    span = _span(min(window_s, end - window[0].at) if end > window[0].at else window_s)
    out: list[Trend] = []
    out += _xid_trends(window, span)
    out += _restart_trends(entries, window, span)
    out += _pending_trends(window)
    out += _counter_trends(window, span)
    return tuple(out)


def _xid_trends(window: Sequence[HistoryEntry], span: str) -> list[Trend]:
    counts: dict[str, int] = {}
    first: dict[str, float] = {}
    for entry in window:
        for code, n in entry.xids.items():
            counts[code] = counts.get(code, 0) + n
            first.setdefault(code, entry.at)
    return [Trend("xid", f"Xid {code} {_times(n)} in {span}", n, rfc3339(first[code]))
            for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0].zfill(4)))]


def _changes(values: Sequence[tuple[float, float | None]]) -> list[float]:
    """The times at which a boot or driver-load time moved to a new value."""
    out, last = [], None
    for at, value in values:
        if value is None:
            continue
        if last is not None and abs(value - last) > _SAME_EVENT_S:
            out.append(at)
        last = value
    return out


def _restart_trends(entries: Sequence[HistoryEntry], window: Sequence[HistoryEntry],
                    span: str) -> list[Trend]:
    start = window[0].at
    out = []
    for kind, what, values in (
        ("node_reboot", "node rebooted", [(e.at, e.boot_time) for e in entries]),
        ("driver_reload", "NVIDIA driver reloaded", [(e.at, e.driver_loaded_at) for e in entries]),
    ):
        times = [t for t in _changes(values) if t >= start]
        if times:
            out.append(Trend(kind, f"{what} {_times(len(times))} in {span}", len(times), rfc3339(times[0])))
    return out


def _gpu_series(window: Sequence[HistoryEntry]) -> dict[str, list[tuple[float, GpuCounters]]]:
    series: dict[str, list[tuple[float, GpuCounters]]] = {}
    for entry in window:
        for gpu in entry.gpus:
            series.setdefault(gpu.gpu, []).append((entry.at, gpu))
    return series


_FLAGS: Final = (  # the GPU needs a reset (or more) while these hold
    ("remapped_rows_pending", "remapped rows pending since {since} (reset the GPU)"),
    ("remapped_rows_failure", "row remapping failed since {since} (replace the GPU)"),
    ("retired_pages_pending", "retired pages pending since {since} (reset the GPU)"),
)


def _pending_trends(window: Sequence[HistoryEntry]) -> list[Trend]:
    """A flag true in the newest entry, since the start of its unbroken run of true."""
    out = []
    for gpu, points in sorted(_gpu_series(window).items()):
        for attr, text in _FLAGS:
            if getattr(points[-1][1], attr) is not True:
                continue
            since = points[-1][0]
            for at, counters in reversed(points):
                if getattr(counters, attr) is not True:
                    break
                since = at
            out.append(Trend(attr, f"{gpu}: " + text.format(since=rfc3339(since)), 1, rfc3339(since), gpu))
    return out


_COUNTERS: Final = (
    ("ecc_aggregate_dbe", "aggregate uncorrectable ECC errors"),
    ("ecc_volatile_dbe", "volatile uncorrectable ECC errors"),
    ("ecc_volatile_sbe", "volatile correctable ECC errors"),
    ("retired_pages_dbe", "pages retired for uncorrectable errors"),
    ("remapped_rows_uncorrectable", "rows remapped for uncorrectable errors"),
    ("remapped_rows_correctable", "rows remapped for correctable errors"),
)


def _rise(values: Sequence[tuple[float, int | None]]) -> tuple[int, float | None]:
    """Sum of the counter's rises (a drop is a reset) and when the first rise was seen."""
    total, first, last = 0, None, None
    for at, value in values:
        if value is None:
            continue
        if last is not None and value > last:
            total += value - last
            first = at if first is None else first
        last = value
    return total, first


def _counter_trends(window: Sequence[HistoryEntry], span: str) -> list[Trend]:
    out = []
    for gpu, points in sorted(_gpu_series(window).items()):
        for attr, what in _COUNTERS:
            n, first = _rise([(at, getattr(c, attr)) for at, c in points])
            if n:
                since = rfc3339(first or points[0][0])
                out.append(Trend(attr, f"{gpu}: {what} +{n} in {span}", n, since, gpu))
        names = sorted({name for _, c in points for name in c.nvlink_errors})
        for name in names:
            n, first = _rise([(at, c.nvlink_errors.get(name)) for at, c in points])
            if n:
                out.append(Trend(f"nvlink_{name}", f"{gpu}: NVLink {name.replace('_', ' ')} errors +{n} in "
                                 f"{span}", n, rfc3339(first or points[0][0]), gpu))
    return out


# --- what changed since ------------------------------------------------------------------


def changes_since(entries: Sequence[HistoryEntry], since: float) -> list[str]:
    """What changed on the node after ``since``, one line each, oldest first; [] when nothing.

    The baseline is the state the node was in at ``since`` (the last entry opened before it;
    the oldest entry when the history starts later, which the first line then says)."""
    if not entries:
        return []
    before = [e for e in entries if e.at <= since]
    base = before[-1] if before else entries[0]
    later = [e for e in entries if e.at > since and e is not base]
    lines = []
    if not before:
        lines.append(f"history starts at {rfc3339(entries[0].at)}, after the time asked for; "
                     "compared from there")
    if not later:
        return lines
    last = later[-1]
    if last.verdict != base.verdict:
        lines.append(f"verdict {base.verdict or 'unknown'} -> {last.verdict or 'unknown'} "
                     f"(at {rfc3339(_first_with(later, lambda e: e.verdict == last.verdict))})")
    for cause in sorted(set(last.root_causes) - set(base.root_causes)):
        began = _first_with(later, lambda e, c=cause: c in e.root_causes)  # type: ignore[misc]
        lines.append(f"new root cause {cause} (since {rfc3339(began)})")
    for cause in sorted(set(base.root_causes) - set(last.root_causes)):
        lines.append(f"root cause {cause} resolved")
    quiet_base = msgspec.structs.replace(base, xids={})
    span = last.seen - base.at + 1
    lines += [t.message for t in trends([quiet_base, *later], now=last.seen, window_s=span)]
    return lines


def _first_with(entries: Sequence[HistoryEntry], test: Callable[[HistoryEntry], bool]) -> float:
    """When the newest unbroken run of entries passing ``test`` began."""
    run_start = entries[-1].at
    for entry in reversed(entries):
        if not test(entry):
            break
        run_start = entry.at
    return run_start



def node_changes(node: str, history: History | None, since: float,
                 note: str | None = None) -> NodeHistoryChanges:
    """One node's part of ``diagnose --since``: its changes, that there were none, or that it
    has no history (never an error: a node without an agent simply has none)."""
    if history is None or not history.entries:
        why = note or ("the agent's history is empty" if history is not None else "no agent history")
        return NodeHistoryChanges(node, "no_history", note=why)
    start, end = rfc3339(history.entries[0].at), history.entries[-1].seen
    if end < since:  # the agent stopped recording before that time: nothing is known since
        return NodeHistoryChanges(node, "no_history", history_from=start,
                                  note=f"the agent's history ends at {rfc3339(end)}, before that time")
    lines = changes_since(history.entries, since)
    changed = [line for line in lines if not line.startswith("history starts at")]
    return NodeHistoryChanges(node, "changed" if changed else "unchanged", tuple(lines), start, note)
