"""Xid counting across probes, and the bounds on the agent's label sets."""

from __future__ import annotations

from gpunode.agent.metrics import MAX_XID_SERIES, AgentMetrics, XidTracker
from gpunode.parse.kernel_log import XidEvent, parse_kernel_log

FALLEN = "NVRM: Xid (PCI:0000:db:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
LINES = [
    "[ 8711.204318] NVRM: Xid (PCI:0000:ab:00): 119, pid=2079991, name=pt_main_thread, Timeout after 6s "
    "of waiting for RPC response from GPU5 GSP!",
    f"[ 9120.551877] {FALLEN}",
    f"[ 9300.000001] {FALLEN}",
]


def _events(*lines: str) -> tuple[XidEvent, ...]:
    return parse_kernel_log("".join(line + "\n" for line in lines)).xids


def test_only_lines_new_since_the_last_probe_count() -> None:
    tracker = XidTracker()
    assert [e.xid for e in tracker.new_events(_events(LINES[0]))] == [119]
    assert tracker.new_events(_events(LINES[0])) == []
    fresh = tracker.new_events(_events(LINES[0], LINES[1], LINES[2]))
    assert [(e.pci, e.xid) for e in fresh] == [("0000:db:00", 79), ("0000:db:00", 79)]


def test_lines_leaving_the_ring_buffer_are_not_counted_again() -> None:
    tracker = XidTracker()
    tracker.new_events(_events(LINES[0], LINES[1]))
    assert [e.line for e in tracker.new_events(_events(LINES[1], LINES[2]))] == [LINES[2]]


def test_identical_repeated_lines_each_count_once() -> None:
    tracker = XidTracker()
    assert len(tracker.new_events(_events(LINES[1], LINES[1]))) == 2
    assert len(tracker.new_events(_events(LINES[1], LINES[1]))) == 0
    assert len(tracker.new_events(_events(LINES[1], LINES[1], LINES[1]))) == 1


def _value(metrics: AgentMetrics, gpu: str, xid: str) -> float | None:
    return metrics.registry.get_sample_value("gpunode_gpu_xid_errors_total", {"gpu": gpu, "xid": xid})


def test_xid_counter_labels_and_overflow_bound() -> None:
    metrics = AgentMetrics()
    metrics.count_xids(_events(*LINES))
    assert _value(metrics, "0000:db:00", "79") == 2.0
    assert _value(metrics, "0000:ab:00", "119") == 1.0
    many = [f"[ 1.0] NVRM: Xid (PCI:0000:{i // 256:02x}:{i % 256:02x}): 13, Graphics" for i in range(600)]
    metrics.count_xids(_events(*many))
    series = {s.labels["gpu"] for m in metrics.registry.collect() for s in m.samples
              if s.name == "gpunode_gpu_xid_errors_total"}
    assert len(series) == MAX_XID_SERIES + 1  # every first-seen GPU up to the bound, then "other"
    assert _value(metrics, "other", "other") == 600 + 2 - MAX_XID_SERIES


def test_unknown_step_names_do_not_create_label_sets() -> None:
    metrics = AgentMetrics()
    metrics.count_error("nvml")
    metrics.count_error("a step nobody knows")
    value = metrics.registry.get_sample_value
    assert value("gpunode_probe_errors_total", {"step": "nvml"}) == 1.0
    assert value("gpunode_probe_errors_total", {"step": "probe"}) == 1.0
    assert value("gpunode_probe_errors_total", {"step": "a step nobody knows"}) is None
