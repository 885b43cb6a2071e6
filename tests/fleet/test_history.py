"""A node's history: states recorded, the bound kept, trends and changes read from injected entries."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from gpunode.errors import ParseError
from gpunode.fleet.history import (
    HISTORY_FORMAT,
    GpuCounters,
    History,
    HistoryEntry,
    changes_since,
    compact,
    decode_history,
    encode_history,
    entry_from_probe,
    record,
    rfc3339,
    trends,
)
from gpunode.probe.result import load_probe_json

DEVICE = Path(__file__).resolve().parents[1] / "fixtures" / "node" / "h200-device"
DAY = 86400.0
T0 = 1_796_000_000.0  # 2026-11-29
GPU = "GPU-6b3b0f3e-0000-4c2f-9f00-5a1b2c3d4e5f"


def gpu(**counters: object) -> GpuCounters:
    return GpuCounters(GPU, **counters)  # type: ignore[arg-type]


def entry(at: float, *, xids: dict[str, int] | None = None, verdict: str = "ok",
          causes: tuple[str, ...] = (), boot: float = T0 - DAY, driver: float = T0 - DAY,
          **counters: object) -> HistoryEntry:
    return HistoryEntry(at, at, verdict, causes, xids or {}, boot, driver, (gpu(**counters),))


def messages(entries: list[HistoryEntry], now: float | None = None) -> list[str]:
    return [t.message for t in trends(entries, now)]


def test_an_empty_history_has_no_trends_and_no_changes() -> None:
    assert trends([]) == ()
    assert changes_since([], T0) == []


def test_a_quiet_node_has_no_trends() -> None:
    entries = [entry(T0 + i * DAY, ecc_aggregate_dbe=0, remapped_rows_pending=False) for i in range(7)]
    assert trends(entries) == ()


def test_xid_counted_in_the_window() -> None:
    entries = [entry(T0, xids={"79": 1}), entry(T0 + 2 * DAY, xids={"79": 1, "48": 1}),
               entry(T0 + 6 * DAY, xids={"79": 1})]
    found = trends(entries)
    assert found[0].message == "Xid 79 3 times in 6 days"
    assert (found[0].kind, found[0].count, found[0].since) == ("xid", 3, rfc3339(T0))
    assert found[1].message == "Xid 48 once in 6 days"


def test_xids_older_than_seven_days_fall_out() -> None:
    entries = [entry(T0, xids={"79": 2}), entry(T0 + 9 * DAY, xids={"79": 1})]
    assert messages(entries) == ["Xid 79 once in 7 days"]


def test_remapped_rows_pending_since_the_start_of_its_run() -> None:
    entries = [entry(T0, remapped_rows_pending=True), entry(T0 + DAY, remapped_rows_pending=False),
               entry(T0 + 2 * DAY, remapped_rows_pending=True, remapped_rows_uncorrectable=1),
               entry(T0 + 3 * DAY, remapped_rows_pending=True, remapped_rows_uncorrectable=1)]
    found = {t.kind: t for t in trends(entries)}
    assert found["remapped_rows_pending"].message == (
        f"{GPU}: remapped rows pending since {rfc3339(T0 + 2 * DAY)} (reset the GPU)")
    assert found["remapped_rows_pending"].gpu == GPU


def test_ecc_counters_rise_and_a_reset_is_not_a_fall() -> None:
    entries = [entry(T0, ecc_aggregate_dbe=1, ecc_volatile_sbe=10),
               entry(T0 + DAY, ecc_aggregate_dbe=3, ecc_volatile_sbe=15),
               entry(T0 + 2 * DAY, ecc_aggregate_dbe=3, ecc_volatile_sbe=0),  # driver reloaded
               entry(T0 + 3 * DAY, ecc_aggregate_dbe=4, ecc_volatile_sbe=2)]
    found = {t.kind: t for t in trends(entries)}
    assert found["ecc_aggregate_dbe"].count == 3
    assert found["ecc_aggregate_dbe"].since == rfc3339(T0 + DAY)
    assert found["ecc_volatile_sbe"].count == 7
    assert found["ecc_aggregate_dbe"].message == f"{GPU}: aggregate uncorrectable ECC errors +3 in 3 days"


def test_nvlink_counters_and_restarts() -> None:
    entries = [entry(T0, nvlink_errors={"replay": 5, "crc_flit": 0}),
               entry(T0 + DAY, nvlink_errors={"replay": 25, "crc_flit": 1}, driver=T0 + DAY - 60),
               entry(T0 + 2 * DAY, nvlink_errors={"replay": 0}, boot=T0 + 2 * DAY - 300,
                     driver=T0 + 2 * DAY - 200)]
    found = {t.kind: t for t in trends(entries)}
    assert found["nvlink_replay"].count == 20
    assert found["nvlink_crc_flit"].message == f"{GPU}: NVLink crc flit errors +1 in 2 days"
    assert found["node_reboot"].message == "node rebooted once in 2 days"
    assert found["driver_reload"].message == "NVIDIA driver reloaded twice in 2 days"


def test_record_moves_an_unchanged_state_and_opens_a_new_one_on_change() -> None:
    history = History(HISTORY_FORMAT, "n1")
    for i in range(100):
        history = record(history, entry(T0 + i * 30, ecc_aggregate_dbe=0))
    assert len(history.entries) == 1 and history.entries[0].seen == T0 + 99 * 30
    history = record(history, entry(T0 + 3000, ecc_aggregate_dbe=0, xids={"79": 1}))
    history = record(history, entry(T0 + 3030, ecc_aggregate_dbe=0))
    history = record(history, entry(T0 + 3060, ecc_aggregate_dbe=1))
    # the Xid opened an entry; the same state after it only moved that entry's seen
    assert [(e.at, e.seen) for e in history.entries] == [
        (T0, T0 + 99 * 30), (T0 + 3000, T0 + 3030), (T0 + 3060, T0 + 3060)]


def test_compact_drops_the_oldest_first_and_keeps_the_bound() -> None:
    history = History(HISTORY_FORMAT, "n1", tuple(
        entry(T0 + i * 60, ecc_volatile_sbe=i, nvlink_errors={"replay": i}) for i in range(2000)))
    kept, data = compact(history, 64 * 1024)
    assert len(data) <= 64 * 1024 < len(encode_history(history))
    assert kept.entries[-1] == history.entries[-1]
    assert kept.entries == history.entries[-len(kept.entries):]
    assert decode_history(data) == kept
    assert compact(kept, 64 * 1024)[0] is kept


@pytest.mark.parametrize("damaged", [b"", b"{", b"[1, 2]", b'{"format": "other/v9", "node": "n"}',
                                     b'{"format": "gpunode-history/v1", "node": "n", "entries": 3}'])
def test_a_damaged_history_is_a_parse_error(damaged: bytes) -> None:
    with pytest.raises(ParseError, match="history"):
        decode_history(damaged)


def test_changes_since_a_time() -> None:
    entries = [entry(T0, xids={"13": 1}), entry(T0 + DAY, xids={"79": 1}, verdict="failed",
                                               causes=("gpu-hardware/gpu_fallen_off_bus",)),
               entry(T0 + DAY + 600, verdict="failed", causes=("gpu-hardware/gpu_fallen_off_bus",),
                     remapped_rows_pending=True)]
    lines = changes_since(entries, T0 + DAY / 2)
    assert lines[0] == f"verdict ok -> failed (at {rfc3339(T0 + DAY)})"
    assert lines[1] == f"new root cause gpu-hardware/gpu_fallen_off_bus (since {rfc3339(T0 + DAY)})"
    assert "Xid 79 once in" in lines[2] and not any("Xid 13" in line for line in lines)
    assert any("remapped rows pending since" in line for line in lines)


def test_changes_since_say_where_the_history_starts_and_nothing_when_unchanged() -> None:
    entries = [entry(T0), entry(T0 + DAY, verdict="failed", causes=("driver/x",))]
    lines = changes_since(entries, T0 - DAY)
    assert lines[0].startswith(f"history starts at {rfc3339(T0)}")
    assert changes_since([entry(T0)], T0 + DAY) == []


def test_entry_from_a_recorded_probe() -> None:
    result = load_probe_json((DEVICE / "probe.json").read_bytes())
    made = entry_from_probe(result, T0, verdict="ok", root_causes=["b/x", "a/y", "a/y"], new_xids=[79, 79])
    assert made.root_causes == ("a/y", "b/x") and made.xids == {"79": 2}
    assert len(made.gpus) == len(result.nvml.gpus) >= 1
    assert made.gpus[0].gpu == (result.nvml.gpus[0].uuid or "GPU 0")
    assert msgspec.json.decode(msgspec.json.encode(made), type=HistoryEntry) == made
