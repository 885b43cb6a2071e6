"""``gpunode diagnose --since``: what changed on a node from the agent history a bundle holds."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpunode.cli import app
from gpunode.commands.history import since_time
from gpunode.errors import UsageError
from gpunode.fleet.history import HISTORY_FORMAT, GpuCounters, History, HistoryEntry, encode_history
from gpunode.sim import build_bundle, load_scenario

GPU = "GPU-6b3b0f3e-0000-4c2f-9f00-5a1b2c3d4e5f"
CAUSE = "gpu-hardware/gpu_fallen_off_bus"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_bundle(load_scenario("falcon-ai"), tmp_path_factory.mktemp("since") / "bundle")


def _history(now: float) -> bytes:
    def state(at: float, verdict: str, causes: tuple[str, ...], xids: dict[str, int],
              pending: bool) -> HistoryEntry:
        counters = GpuCounters(GPU, remapped_rows_pending=pending, ecc_aggregate_dbe=1 if pending else 0)
        return HistoryEntry(at, at + 60, verdict, causes, xids, now - 9 * 86400, now - 9 * 86400, (counters,))

    return encode_history(History(HISTORY_FORMAT, "gpu-wk-01", (
        state(now - 3 * 86400, "ok", (), {}, False),
        state(now - 3600, "failed", (CAUSE,), {"79": 1}, True),
    )))


def _write(bundle: Path, node: str, data: bytes) -> Path:
    path = bundle / "nodes" / node / "cmd" / "gpunode-history.json"
    path.write_bytes(data)
    return path


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout


def test_json_holds_each_nodes_changes_and_says_where_there_is_no_history(bundle: Path) -> None:
    path = _write(bundle, "gpu-wk-01", _history(time.time()))
    try:
        code, out = _run("diagnose", "--from", str(bundle), "--since", "24h", "-o", "json")
    finally:
        path.unlink()
    assert code == 0
    section = json.loads(out)["changes_since"]
    nodes = {n["node"]: n for n in section["nodes"]}
    assert nodes["gpu-wk-01"]["status"] == "changed"
    changes = nodes["gpu-wk-01"]["changes"]
    assert changes[0].startswith("verdict ok -> failed") and f"new root cause {CAUSE}" in changes[1]
    assert any(c.startswith("Xid 79 once") for c in changes)
    assert any("remapped rows pending since" in c for c in changes)
    assert nodes["gpu-wk-02"] == {"node": "gpu-wk-02", "status": "no_history", "changes": [],
                                  "history_from": None, "note": "no agent history in this bundle"}


def test_table_shows_the_section_and_no_history_plainly(bundle: Path) -> None:
    code, out = _run("diagnose", "--from", str(bundle), "--since", "7d")
    assert code == 0
    section = out[out.index("What changed since"):]
    assert "gpu-wk-01\n    no history: no agent history in this bundle" in section
    assert "no changes" not in section


def test_an_unchanged_node_and_a_damaged_file(bundle: Path) -> None:
    now = time.time()
    quiet = encode_history(History(HISTORY_FORMAT, "gpu-wk-01", (HistoryEntry(now - 5 * 86400, now - 30),)))
    paths = [_write(bundle, "gpu-wk-01", quiet), _write(bundle, "gpu-wk-02", b'{"format": "gpunode-hist')]
    try:
        code, out = _run("diagnose", "--from", str(bundle), "--since", "24h", "-o", "markdown")
    finally:
        for path in paths:
            path.unlink()
    assert code == 0
    assert "- **gpu-wk-01**\n  - no changes (history from" in out
    assert "- **gpu-wk-02**\n  - no history: cmd/gpunode-history.json: not a gpunode history" in out


def test_html_page_shows_the_section(bundle: Path) -> None:
    path = _write(bundle, "gpu-wk-01", _history(time.time()))
    try:
        code, page = _run("diagnose", "--from", str(bundle), "--since", "24h", "-o", "html")
    finally:
        path.unlink()
    assert code == 0
    section = page[page.index('<section id="changes-since">'):]
    section = section[:section.index("</section>")]
    assert "What changed since" in section and "(agent history)" in section
    first = section[section.index("<b>gpu-wk-01</b>"):section.index("<b>gpu-wk-02</b>")]
    assert "<li>verdict ok -&gt; failed" in first and f"new root cause {CAUSE}" in first
    assert "<b>gpu-wk-02</b><ul><li>no history: no agent history in this bundle</li>" in section


def test_without_since_the_report_has_no_section(bundle: Path) -> None:
    code, out = _run("diagnose", "--from", str(bundle), "-o", "json")
    assert code == 0 and "changes_since" not in json.loads(out)
    code, page = _run("diagnose", "--from", str(bundle), "-o", "html")
    assert code == 0 and "changes-since" not in page


def test_since_takes_durations_and_times_and_refuses_the_rest() -> None:
    now = 2_000_000_000.0
    assert since_time("24h", now) == now - 86400
    assert since_time("1d12h", now) == now - 1.5 * 86400
    assert since_time("2033-05-18T03:33:20Z", now) == now
    for bad in ("", "yesterday", "24", "-1h"):
        with pytest.raises(UsageError, match="--since"):
            since_time(bad, now)
    refused = CliRunner().invoke(app, ["diagnose", "--from", "/nonexistent", "--since", "soon"])
    assert isinstance(refused.exception, UsageError)  # the console script exits 2 on it
