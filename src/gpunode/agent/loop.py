"""The agent's probe loop: probe, judge, publish, set the node condition; repeat.

One background thread runs the cycle every interval. A cycle never raises: a
failed step is counted in ``gpunode_probe_errors_total{step}`` and logged, and
the last good facts keep being served until they are older than
``stale_after`` (then ``/healthz`` answers 503 and the condition turns
Unknown). Only the latest snapshot is kept, so memory does not grow.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from gpunode.agent.condition import ConditionKeeper, ConditionValue, NodeApi, condition_for, stale_condition
from gpunode.agent.history import HistoryStore
from gpunode.agent.metrics import AgentMetrics, XidTracker
from gpunode.agent.nodereport import ReportPublisher, verdict_of
from gpunode.errors import UsageError
from gpunode.fleet.history import entry_from_probe, trends
from gpunode.fleet.model import Trend
from gpunode.model import NodeReport, Report
from gpunode.probe.result import ProbeResult, probe_json

log = logging.getLogger(__name__)

ProbeFn = Callable[[], ProbeResult]
JudgeFn = Callable[[ProbeResult, Mapping[str, Any] | None], Report]
Clock = Callable[[], float]

# Node fields the engine reads; the rest (images, volumes) can be large and is dropped.
_NODE_STATUS_KEEP = ("conditions", "capacity", "allocatable", "nodeInfo")
_NODE_META_KEEP = ("name", "uid", "labels", "annotations", "creationTimestamp")


@dataclass(frozen=True)
class AgentConfig:
    """How often to probe and when facts count as stale."""

    node_name: str
    interval_s: float = 30.0
    stale_after_s: float | None = None
    node_refresh_s: float = 300.0

    @property
    def stale_after(self) -> float:
        """Default: three missed intervals, but never less than one interval plus a minute."""
        if self.stale_after_s is not None:
            return self.stale_after_s
        return max(3 * self.interval_s, self.interval_s + 60.0)


@dataclass(frozen=True)
class Snapshot:
    """The last good probe: its result, the JSON served at /facts, and its verdict."""

    result: ProbeResult
    facts_json: bytes
    report: Report | None
    finished_at: float
    finished_mono: float

    @property
    def node_report(self) -> NodeReport | None:
        return self.report.nodes[0] if self.report and self.report.nodes else None


def slim_node(node: Mapping[str, Any]) -> dict[str, Any]:
    """The parts of a Node object the engine reads (labels, taints, conditions, capacity)."""
    meta = node.get("metadata") or {}
    status = node.get("status") or {}
    return {
        "metadata": {k: meta[k] for k in _NODE_META_KEEP if k in meta},
        "spec": dict(node.get("spec") or {}),
        "status": {k: status[k] for k in _NODE_STATUS_KEEP if k in status},
    }


def error_step(message: str) -> str:
    """``"nvml: NVMLError: ..."`` → ``"nvml"`` (the probe prefixes each error with its step)."""
    return message.split(":", 1)[0].strip() or "probe"


class Agent:
    """Probes this node every interval and keeps what the HTTP endpoints serve.

    ``judge`` turns a probe into a report (the agent command hands it ``judge_probe``); the
    loop does not import the judge, so it stands below the diagnosis, not above it."""

    def __init__(
        self,
        config: AgentConfig,
        probe: ProbeFn,
        *,
        judge: JudgeFn,
        node_api: NodeApi | None = None,
        set_condition: bool = False,
        metrics: AgentMetrics | None = None,
        clock: Clock = time.monotonic,
        reports: ReportPublisher | None = None,
        history: HistoryStore | None = None,
    ) -> None:
        if set_condition and node_api is None:
            raise UsageError("--node-condition needs access to the Kubernetes API")
        self.config = config
        self.metrics = metrics or AgentMetrics()
        self._probe, self._judge, self._api, self._clock = probe, judge, node_api, clock
        self._keeper = ConditionKeeper(node_api, config.node_name) if set_condition and node_api else None
        self._reports = reports
        self.history = history
        self._node: dict[str, Any] | None = None
        self._node_fetched: float | None = None
        self._snapshot: Snapshot | None = None
        self._lock = threading.Lock()
        self._xids = XidTracker()
        self._started = clock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def snapshot(self) -> Snapshot | None:
        with self._lock:
            return self._snapshot

    @property
    def condition(self) -> ConditionValue | None:
        """The condition value last set on (or found on) the Node."""
        return self._keeper.last if self._keeper else None

    def health(self) -> tuple[bool, str]:
        """Fresh while the last probe (or, before the first, the start) is within stale_after."""
        now, snap = self._clock(), self.snapshot
        if snap is None:
            waited = now - self._started
            return waited <= self.config.stale_after, f"no probe finished yet ({waited:.1f}s after start)"
        age = now - snap.finished_mono
        return age <= self.config.stale_after, f"last probe finished {age:.1f}s ago"

    def run_once(self) -> None:
        """One cycle; every failure is counted and logged, none is raised."""
        self._refresh_node()
        result = self._timed_probe()
        if result is not None:
            self._publish(result, self._judged(result))
        self._update_condition()
        self._publish_report()

    def _refresh_node(self) -> None:
        if self._api is None:
            return
        now = self._clock()
        if self._node_fetched is not None and now - self._node_fetched < self.config.node_refresh_s:
            return
        try:
            node = self._api.get_node(self.config.node_name)
        except Exception as exc:  # API down or forbidden: judge without the Node, retry next cycle
            log.warning("cannot read node %s: %s", self.config.node_name, exc)
            self.metrics.count_error("node-get")
            return
        self._node, self._node_fetched = slim_node(node), now
        if self._keeper is not None:
            self._keeper.adopt(node)

    def _timed_probe(self) -> ProbeResult | None:
        started = self._clock()
        try:
            result = self._probe()
        except Exception:  # a broken probe must not stop the agent: keep the last good facts
            log.exception("probe failed")
            self.metrics.count_error("probe")
            return None
        finally:
            self.metrics.probe_duration.observe(max(0.0, self._clock() - started))
        for message in result.errors:
            self.metrics.count_error(error_step(message))
        if result.host.kernel_log.source is None and result.host.kernel_log.error:
            self.metrics.count_error("kernel-log")
        return result

    def _judged(self, result: ProbeResult) -> Report | None:
        try:
            return self._judge(result, self._node)
        except Exception:  # keep serving the facts and the previous verdict
            log.exception("diagnosis of the probe result failed")
            self.metrics.count_error("judge")
            return None

    def _publish(self, result: ProbeResult, report: Report | None) -> None:
        kernel_log = result.host.kernel_log
        new_xids = self._xids.new_events(kernel_log.xids) if kernel_log.source is not None else []
        self.metrics.count_xids(new_xids)
        previous = self.snapshot
        if report is None and previous is not None:
            report = previous.report
        snap = Snapshot(result, probe_json(result), report, time.time(), self._clock())
        if snap.node_report is not None:
            self.metrics.report.update(snap.node_report)
        with self._lock:
            self._snapshot = snap
        self.metrics.last_probe.set(snap.finished_at)
        self._record(snap, [x.xid for x in new_xids])

    def _record(self, snap: Snapshot, new_xids: list[int]) -> None:
        """Add this probe's state to the node's history (never raises)."""
        if self.history is None:
            return
        node = snap.node_report
        causes = [f"{rc.component}/{rc.cause}" for rc in node.root_causes] if node else []
        try:
            self.history.add(entry_from_probe(snap.result, snap.finished_at, verdict=verdict_of(node).verdict,
                                              root_causes=causes, new_xids=new_xids))
        except Exception:  # the history is an extra: probing and serving go on without it
            log.exception("cannot record the probe in the history")
            self.metrics.count_error("history")

    def trends(self) -> tuple[Trend, ...]:
        """Trends over this node's history (none without a history)."""
        return trends(self.history.history.entries) if self.history is not None else ()

    def _condition_value(self) -> ConditionValue | None:
        fresh, _ = self.health()
        snap = self.snapshot
        if not fresh:
            since = snap.finished_mono if snap else self._started
            return stale_condition(self._clock() - since)
        if snap is None or snap.report is None:
            return None
        return condition_for(snap.node_report)

    def _update_condition(self) -> None:
        value = self._condition_value() if self._keeper else None
        if self._keeper is None or value is None:
            return
        try:
            if self._keeper.update(value):
                self.metrics.condition_updates.inc()
        except Exception as exc:  # API down: the keeper still holds the old value, retry next cycle
            log.warning("cannot set node condition on %s: %s", self.config.node_name, exc)
            self.metrics.count_error("node-condition")

    def _publish_report(self) -> None:
        """This node's GPUNodeReport, when its verdict changed or the last one is getting old."""
        snap = self.snapshot
        if self._reports is None or snap is None:
            return
        fresh, _ = self.health()
        stale = f"no successful gpunode probe for more than {self.config.stale_after:.0f}s"
        verdict = verdict_of(snap.node_report, "" if fresh else stale)  # stable: no churn
        if not self._reports.due(verdict):
            return
        uid = str((self._node or {}).get("metadata", {}).get("uid") or "") or None
        if not self._reports.publish(verdict, snap.facts_json, uid, self.trends()):
            self.metrics.count_error("node-report")

    def start(self) -> None:
        """Run cycles in a background thread until stop()."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._loop, name="gpunode-agent-probe", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 10.0) -> bool:
        """Ask the loop to end and wait for it; False when a probe is still stuck."""
        self._stop.set()
        thread = self._thread
        if thread is None:
            return True
        thread.join(timeout_s)
        return not thread.is_alive()

    def _loop(self) -> None:
        while not self._stop.is_set():
            started = self._clock()
            try:
                self.run_once()
            except Exception:  # defensive: the loop itself must survive anything
                log.exception("probe cycle failed")
                self.metrics.count_error("probe")
            self._stop.wait(max(0.0, self.config.interval_s - (self._clock() - started)))


def encode_report(report: Report) -> bytes:
    """The report JSON (v1) for /report."""
    return msgspec.json.encode(report)
