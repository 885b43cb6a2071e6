"""The agent's history file: survives restarts, written atomically, bounded, damage set aside."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import msgspec
import pytest
from agent_helpers import (
    NODE,
    XID_79,
    AgentFactory,
    ScriptedProbe,
    recorded_probe,
    wait_until,
    with_kernel_lines,
)

from gpunode.agent.history import HistoryStore, history_file
from gpunode.agent.loop import Agent, AgentConfig
from gpunode.fleet.history import HISTORY_FORMAT, GpuCounters, HistoryEntry, decode_history
from gpunode.model import Report
from gpunode.probe import ProbeResult

T0 = 1_796_000_000.0


def _entry(at: float, sbe: int = 0, xids: dict[str, int] | None = None) -> HistoryEntry:
    return HistoryEntry(at, at, "ok", (), xids or {}, gpus=(GpuCounters("GPU-0", ecc_volatile_sbe=sbe),))


def _no_judge(_result: ProbeResult, _node: object) -> Report:
    raise RuntimeError("not judged in this test")


def test_history_survives_a_restart(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path, NODE)
    store.add(_entry(T0, xids={"79": 1}))
    store.add(_entry(T0 + 30, sbe=2))
    again = HistoryStore(tmp_path, NODE)
    assert again.history == store.history and len(again.history.entries) == 2
    assert decode_history(history_file(tmp_path, NODE).read_bytes()) == store.history
    assert again.data == store.data


def test_written_by_rename_leaving_no_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = HistoryStore(tmp_path, NODE)
    store.add(_entry(T0))
    before = history_file(tmp_path, NODE).read_bytes()
    renames: list[tuple[str, str]] = []
    real = os.replace

    def spy(src: str, dst: str) -> None:
        renames.append((Path(src).name, Path(dst).name))
        real(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    store.add(_entry(T0 + 30, sbe=1))
    assert renames and renames[0][1] == history_file(tmp_path, NODE).name != renames[0][0]
    assert history_file(tmp_path, NODE).read_bytes() != before
    assert sorted(p.name for p in tmp_path.iterdir()) == [history_file(tmp_path, NODE).name]


def test_a_failed_write_keeps_the_old_file_and_the_history_in_memory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    store = HistoryStore(tmp_path, NODE)
    store.add(_entry(T0))
    before = history_file(tmp_path, NODE).read_bytes()

    def full(_src: str, _dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    with caplog.at_level(logging.WARNING, "gpunode.agent.history"):
        store.add(_entry(T0 + 30, sbe=1))
        store.add(_entry(T0 + 60, sbe=2))
    assert history_file(tmp_path, NODE).read_bytes() == before
    assert len(store.history.entries) == 3
    assert len(caplog.records) == 1 and "No space left" in caplog.records[0].getMessage()
    assert sorted(p.name for p in tmp_path.iterdir()) == [history_file(tmp_path, NODE).name]


def test_bounded_to_64_kib_oldest_first(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path, NODE)
    for i in range(1500):
        store.add(_entry(T0 + i * 30, sbe=i))
    size = history_file(tmp_path, NODE).stat().st_size
    assert size <= 64 * 1024
    entries = store.history.entries
    assert entries[-1].at == T0 + 1499 * 30 and entries[0].at > T0
    assert [e.at for e in entries] == sorted(e.at for e in entries)


@pytest.mark.parametrize("damage", [b"\x00\xff garbage", b'{"format": "gpunode-history/v1", "node": ',
                                    json.dumps({"format": "gpunode-history/v9", "node": NODE}).encode()])
def test_a_damaged_file_is_set_aside_with_one_warning(
        tmp_path: Path, damage: bytes, caplog: pytest.LogCaptureFixture) -> None:
    path = history_file(tmp_path, NODE)
    path.write_bytes(damage)
    with caplog.at_level(logging.WARNING, "gpunode.agent.history"):
        store = HistoryStore(tmp_path, NODE)
    assert store.history.entries == () and store.history.format == HISTORY_FORMAT
    assert len(caplog.records) == 1 and "set aside" in caplog.records[0].getMessage()
    assert path.with_name(path.name + ".damaged").read_bytes() == damage
    store.add(_entry(T0))
    assert decode_history(path.read_bytes()).entries == (_entry(T0),)


def test_the_loop_records_each_probe_and_new_xids_once(tmp_path: Path) -> None:
    clean = recorded_probe()
    probe = ScriptedProbe(clean, with_kernel_lines(clean, XID_79), with_kernel_lines(clean, XID_79))
    agent = Agent(AgentConfig(NODE), probe, judge=_no_judge, history=HistoryStore(tmp_path, NODE))
    for _ in range(3):
        agent.run_once()
    assert agent.history is not None
    entries = agent.history.history.entries
    assert [e.xids for e in entries] == [{}, {"79": 1}]  # the third probe saw the same line again
    assert [t.message for t in agent.trends()] == ["Xid 79 once in 1 hour"]


def test_served_at_history_and_trends(run_agent: AgentFactory, tmp_path: Path) -> None:
    probe = ScriptedProbe(recorded_probe(), with_kernel_lines(recorded_probe(), XID_79))
    running = run_agent(probe, history=HistoryStore(tmp_path, NODE))
    assert wait_until(lambda: probe.calls >= 2 and bool(json.loads(running.get("/trends")[2])["trends"]))
    code, kind, body = running.get("/history")
    assert (code, kind) == (200, "application/json")
    assert decode_history(body).node == NODE
    trends = json.loads(running.get("/trends")[2])["trends"]
    assert trends[0]["kind"] == "xid" and trends[0]["message"].startswith("Xid 79 once")
    report = json.loads(running.get("/report")[2])  # report JSON v1 with the agent's trends
    assert report["schema"] == "gpunode.report/v1" and report["trends"] == trends


def test_without_history_the_endpoints_say_so(run_agent: AgentFactory) -> None:
    running = run_agent(ScriptedProbe(recorded_probe()))
    code, _, body = running.get("/history")
    assert code == 404 and b"no history" in body
    assert msgspec.json.decode(running.get("/trends")[2]) == {"trends": []}
    assert wait_until(lambda: running.get("/report")[0] == 200)
    assert "trends" not in json.loads(running.get("/report")[2])
