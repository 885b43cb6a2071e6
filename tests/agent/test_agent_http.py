"""The agent in-process with a scripted probe, seen through its HTTP endpoints."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

import msgspec
from agent_helpers import (
    NODE,
    XID_48,
    XID_79,
    AgentFactory,
    FakeNodeApi,
    RunningAgent,
    ScriptedProbe,
    recorded_probe,
    wait_until,
    with_kernel_lines,
)
from prometheus_client.parser import text_string_to_metric_families

from gpunode.agent.judge import judge_probe
from gpunode.model import Report
from gpunode.probe import ProbeResult, probe_json


def scrape(running: RunningAgent) -> Samples:
    status, content_type, body = running.get("/metrics")
    assert status == 200 and content_type.startswith("text/plain")
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(body.decode())
        for s in family.samples
    }


Samples = Mapping[tuple[str, frozenset[tuple[str, str]]], float]


def sample(metrics: Samples, name: str, **labels: str) -> float:
    return metrics[(name, frozenset(labels.items()))]


def probes_done(running: RunningAgent, count: int) -> bool:
    """At least ``count`` probes ran and one of them has been published."""
    metrics = running.agent.metrics.registry
    done = metrics.get_sample_value("gpunode_probe_duration_seconds_count") or 0
    return done >= count and running.agent.snapshot is not None


def test_endpoints_serve_the_last_probe_and_its_verdict(run_agent: AgentFactory) -> None:
    result = with_kernel_lines(recorded_probe(), XID_79)
    running = run_agent(ScriptedProbe(result))
    assert wait_until(lambda: probes_done(running, 5))
    metrics = scrape(running)
    status = "gpunode_component_status"
    assert sample(metrics, status, layer="0", component="gpu-hardware", status="failed") == 1.0
    assert sample(metrics, status, layer="0", component="gpu-hardware", status="ok") == 0.0
    assert sample(metrics, status, layer="1", component="driver", status="ok") == 1.0
    root = "gpunode_root_cause_info"
    assert sample(metrics, root, component="gpu-hardware", cause="gpu_fallen_off_bus") == 1.0
    # the same Xid line re-read by five probes counts once
    assert sample(metrics, "gpunode_gpu_xid_errors_total", gpu="0000:00:06", xid="79") == 1.0
    assert sample(metrics, "gpunode_probe_duration_seconds_count") >= 5
    assert abs(sample(metrics, "gpunode_last_probe_timestamp_seconds") - time.time()) < 60
    assert sample(metrics, "gpunode_probe_errors_total", step="probe") == 0.0

    assert running.get("/facts") == (200, "application/json", probe_json(result))
    code, _, body = running.get("/facts?raw=1")
    assert code == 200 and msgspec.json.decode(body, type=ProbeResult) == result
    code, _, body = running.get("/report")
    report = msgspec.json.decode(body, type=Report)
    assert [rc.cause for rc in report.nodes[0].root_causes] == ["gpu_fallen_off_bus"]
    assert running.get("/healthz")[0] == 200
    assert running.get("/nothing-here")[0] == 404


def test_openmetrics_when_asked_for(run_agent: AgentFactory) -> None:
    running = run_agent(ScriptedProbe(recorded_probe()))
    assert wait_until(lambda: probes_done(running, 1))
    code, content_type, body = running.get("/metrics", {"Accept": "application/openmetrics-text"})
    assert code == 200 and content_type.startswith("application/openmetrics-text")
    assert body.rstrip().endswith(b"# EOF")
    assert b"gpunode_component_status{" in body


def test_xids_logged_between_probes_are_counted_as_they_appear(run_agent: AgentFactory) -> None:
    base = recorded_probe()
    probe = ScriptedProbe(base)
    running = run_agent(probe)
    assert wait_until(lambda: probes_done(running, 2))
    value = running.agent.metrics.registry.get_sample_value
    assert value("gpunode_gpu_xid_errors_total", {"gpu": "0000:00:06", "xid": "79"}) is None
    probe.set(with_kernel_lines(base, XID_79))
    assert wait_until(lambda: value("gpunode_gpu_xid_errors_total", {"gpu": "0000:00:06", "xid": "79"}) == 1)
    probe.set(with_kernel_lines(base, XID_79, XID_48))
    assert wait_until(lambda: value("gpunode_gpu_xid_errors_total", {"gpu": "0000:00:06", "xid": "48"}) == 1)
    assert value("gpunode_gpu_xid_errors_total", {"gpu": "0000:00:06", "xid": "79"}) == 1


def test_failing_probe_keeps_last_facts_until_stale_then_recovers(run_agent: AgentFactory) -> None:
    good = recorded_probe()
    probe = ScriptedProbe(good, RuntimeError("NVML hung up"))
    running = run_agent(probe, stale_after_s=0.4)
    errors = running.agent.metrics.registry.get_sample_value
    assert wait_until(lambda: (errors("gpunode_probe_errors_total", {"step": "probe"}) or 0) >= 3)
    assert running.get("/facts") == (200, "application/json", probe_json(good))
    assert wait_until(lambda: running.get("/healthz")[0] == 503)
    assert running.get("/healthz")[2].startswith(b"stale: last probe finished")
    assert running.get("/facts")[0] == 200  # stale facts are still served, health says they are stale
    probe.set(good)
    assert wait_until(lambda: running.get("/healthz")[0] == 200)


def test_failed_probe_steps_are_counted_and_facts_still_served(run_agent: AgentFactory) -> None:
    result = msgspec.structs.replace(
        recorded_probe(), errors=("nvml: NVMLError_Unknown: Unknown Error", "host: OSError: [Errno 5] EIO")
    )
    running = run_agent(ScriptedProbe(result))
    value = running.agent.metrics.registry.get_sample_value
    assert wait_until(lambda: (value("gpunode_probe_errors_total", {"step": "host"}) or 0) >= 3)
    metrics = scrape(running)
    # each probe counts its nvml error before its host error
    assert sample(metrics, "gpunode_probe_errors_total", step="nvml") >= 3
    assert sample(metrics, "gpunode_probe_errors_total", step="probe") == 0
    assert running.get("/facts")[2] == probe_json(result)


def test_judge_failure_keeps_the_previous_verdict(run_agent: AgentFactory) -> None:
    calls: list[int] = []

    def flaky_judge(result: ProbeResult, node: Mapping[str, Any] | None) -> Report:
        calls.append(1)
        if len(calls) > 1:
            raise ValueError("engine bug")
        return judge_probe(result, node)

    running = run_agent(ScriptedProbe(with_kernel_lines(recorded_probe(), XID_79)), judge=flaky_judge)
    value = running.agent.metrics.registry.get_sample_value
    assert wait_until(lambda: (value("gpunode_probe_errors_total", {"step": "judge"}) or 0) >= 2)
    code, _, body = running.get("/report")
    assert code == 200
    assert msgspec.json.decode(body, type=Report).nodes[0].root_causes[0].cause == "gpu_fallen_off_bus"
    assert running.get("/healthz")[0] == 200


def test_before_the_first_probe(run_agent: AgentFactory) -> None:
    release = threading.Event()

    def slow_probe() -> ProbeResult:
        release.wait(10)
        return recorded_probe()

    running = run_agent(slow_probe, stale_after_s=0.3)
    try:
        assert running.get("/facts")[0] == 503
        assert running.get("/report")[0] == 503
        code, _, body = running.get("/healthz")
        assert (code, body.startswith(b"ok: no probe finished yet")) == (200, True)
        assert wait_until(lambda: running.get("/healthz")[0] == 503)
    finally:
        release.set()
    assert wait_until(lambda: running.get("/healthz")[0] == 200)


def test_node_condition_is_patched_only_when_it_changes(run_agent: AgentFactory) -> None:
    api = FakeNodeApi()
    healthy = recorded_probe()
    probe = ScriptedProbe(healthy)
    running = run_agent(probe, node_api=api, set_condition=True)
    assert wait_until(lambda: len(api.patches) == 1)
    assert (api.patches[0]["status"], api.patches[0]["reason"]) == ("True", "NoRootCause")
    assert wait_until(lambda: probes_done(running, 10))
    assert len(api.patches) == 1
    probe.set(with_kernel_lines(healthy, XID_79))
    assert wait_until(lambda: len(api.patches) == 2)
    assert (api.patches[1]["status"], api.patches[1]["reason"]) == ("False", "GpuFallenOffBus")
    assert wait_until(lambda: probes_done(running, 20))
    assert len(api.patches) == 2
    assert api.calls.count(("get", NODE)) == 1  # the Node is read once per refresh period, not per probe
    updates = running.agent.metrics.registry.get_sample_value("gpunode_node_condition_updates_total")
    assert updates == 2


def test_condition_turns_unknown_when_probes_go_stale(run_agent: AgentFactory) -> None:
    api = FakeNodeApi()
    probe = ScriptedProbe(recorded_probe(), RuntimeError("probe wedged"))
    running = run_agent(probe, node_api=api, set_condition=True, stale_after_s=0.3)
    assert wait_until(lambda: [p["reason"] for p in api.patches] == ["NoRootCause", "ProbeStale"])
    assert api.patches[1]["status"] == "Unknown"
    assert running.agent.condition is not None and running.agent.condition.reason == "ProbeStale"


def test_api_outage_is_counted_and_the_patch_retried(run_agent: AgentFactory) -> None:
    api = FakeNodeApi()
    api.fail_patch = True
    running = run_agent(ScriptedProbe(recorded_probe()), node_api=api, set_condition=True)
    value = running.agent.metrics.registry.get_sample_value
    assert wait_until(lambda: (value("gpunode_probe_errors_total", {"step": "node-condition"}) or 0) >= 3)
    assert running.get("/healthz")[0] == 200
    api.fail_patch = False
    assert wait_until(lambda: len(api.patches) == 1)
    assert wait_until(lambda: probes_done(running, 30))
    assert len(api.patches) == 1
