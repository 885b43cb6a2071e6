"""The agent's Prometheus metrics, in a registry of its own.

Component statuses and root causes are exposed by a collector that reads the
latest node report at scrape time, so a scrape never sees a half-updated set
and label sets of causes that went away disappear with them. Xid counts are
real counters, fed only with the Xid lines that are new since the last probe.
"""

from __future__ import annotations

import threading
from collections import Counter as Tally
from collections.abc import Iterable, Iterator, Sequence

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from gpunode.model import NodeReport, Status
from gpunode.parse.kernel_log import XidEvent

PROBE_STEPS = (
    "probe",
    "nvml",
    "host",
    "kernel-log",
    "nvidia-smi",
    "judge",
    "node-get",
    "node-condition",
    "node-report",
)
DURATION_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
MAX_XID_SERIES = 512
OVERFLOW_GPU = "other"


class ReportCollector(Collector):
    """``gpunode_component_status`` and ``gpunode_root_cause_info`` from the last report."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._node: NodeReport | None = None

    def update(self, node: NodeReport) -> None:
        with self._lock:
            self._node = node

    def collect(self) -> Iterator[GaugeMetricFamily]:
        with self._lock:
            node = self._node
        status = GaugeMetricFamily(
            "gpunode_component_status",
            "1 for the component's current status on this node, 0 for the other statuses.",
            labels=["layer", "component", "status"],
        )
        causes = GaugeMetricFamily(
            "gpunode_root_cause_info",
            "A root cause found on this node (always 1; the series goes away when it does).",
            labels=["component", "cause"],
        )
        if node is not None:
            _add_statuses(status, node)
            for rc in node.root_causes:
                causes.add_metric([rc.component, rc.cause], 1.0)
        yield status
        yield causes


def _add_statuses(family: GaugeMetricFamily, node: NodeReport) -> None:
    for comp in node.components:
        for status in Status:
            value = 1.0 if comp.status == status else 0.0
            family.add_metric([str(comp.layer), comp.component, status.value], value)


class XidTracker:
    """Finds Xid lines that are new since the previous probe.

    The probe re-reads the kernel ring buffer each time; a line seen before
    (same timestamp and text) is not counted again. Only the lines of the
    current buffer are remembered, so memory stays bounded by the buffer.
    """

    def __init__(self) -> None:
        self._previous: Tally[str] = Tally()

    def new_events(self, events: Sequence[XidEvent]) -> list[XidEvent]:
        seen: Tally[str] = Tally()
        fresh: list[XidEvent] = []
        for event in events:
            seen[event.line] += 1
            if seen[event.line] > self._previous[event.line]:
                fresh.append(event)
        self._previous = seen
        return fresh


class AgentMetrics:
    """Every metric the agent exports; one instance per agent."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.report = ReportCollector()
        self.registry.register(self.report)
        self.xid_errors = Counter(
            "gpunode_gpu_xid_errors_total",
            "Xid errors the kernel logged for a GPU (gpu = PCI address as the kernel prints it).",
            ["gpu", "xid"],
            registry=self.registry,
        )
        self.probe_duration = Histogram(
            "gpunode_probe_duration_seconds",
            "Time one probe of the node took.",
            buckets=DURATION_BUCKETS,
            registry=self.registry,
        )
        self.probe_errors = Counter(
            "gpunode_probe_errors_total",
            "Failures per step (probe steps, judging, Node reads, condition updates).",
            ["step"],
            registry=self.registry,
        )
        self.last_probe = Gauge(
            "gpunode_last_probe_timestamp_seconds",
            "Unix time the last successful probe finished.",
            registry=self.registry,
        )
        self.condition_updates = Counter(
            "gpunode_node_condition_updates_total",
            "Times the agent changed the GPUStackHealthy node condition.",
            registry=self.registry,
        )
        self._xid_series: set[tuple[str, str]] = set()
        for step in PROBE_STEPS:
            self.probe_errors.labels(step=step)

    def count_error(self, step: str) -> None:
        self.probe_errors.labels(step=step if step in PROBE_STEPS else "probe").inc()

    def count_xids(self, events: Iterable[XidEvent]) -> None:
        """Add new Xid events; past MAX_XID_SERIES label sets they count as gpu="other", xid="other"."""
        for event in events:
            key = (event.pci.lower(), str(event.xid))
            if key not in self._xid_series and len(self._xid_series) >= MAX_XID_SERIES:
                key = (OVERFLOW_GPU, OVERFLOW_GPU)
            self._xid_series.add(key)
            self.xid_errors.labels(gpu=key[0], xid=key[1]).inc()
