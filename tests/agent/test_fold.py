"""Folding agent facts into a bundle: the cluster diagnosis then sees what the node saw."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec
from agent_helpers import (
    NODE,
    XID_79,
    AgentFactory,
    ScriptedProbe,
    node_object,
    recorded_probe,
    wait_until,
    with_kernel_lines,
)

from gpunode.agent.fold import agent_pods_by_node, facts_proxy_path, fold_agent_facts
from gpunode.bundle.kube import Pod
from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.diagnose import diagnose
from gpunode.probe import probe_json

AGENT = "gpunode-agent"


def _bundle(root: Path) -> Path:
    """A collected bundle with the GPU node's Node object and nothing from the node itself."""
    (root / "cluster").mkdir(parents=True)
    nodes = {"apiVersion": "v1", "kind": "List", "items": [node_object()]}
    (root / "cluster" / "nodes.json").write_bytes(msgspec.json.encode(nodes))
    manifest = {"format": "gpunode-bundle/v1", "collected_at": "2026-11-30T12:00:00Z", "source": "live"}
    (root / "manifest.json").write_bytes(msgspec.json.encode(manifest))
    return root


def _causes(bundle: Path) -> list[str]:
    report = diagnose(load_bundle(bundle), read_node_observations, [NODE])
    return [rc.cause for rc in report.nodes[0].root_causes]


def test_folded_facts_reach_the_cluster_diagnosis(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    assert _causes(bundle) == []
    result = with_kernel_lines(recorded_probe(), XID_79)
    outcome = fold_agent_facts(bundle, {NODE: msgspec.json.encode(result)})
    assert (outcome.folded, outcome.skipped) == ([NODE], {})
    node_dir = bundle / "nodes" / NODE
    assert (node_dir / "cmd" / "gpunode-probe.json").read_bytes() == probe_json(result)
    assert (node_dir / "files" / "proc" / "modules").read_text() == result.raw["files/proc/modules"]
    assert _causes(bundle) == ["gpu_fallen_off_bus"]
    assert msgspec.json.decode((bundle / "manifest.json").read_bytes())["source"] == "live"


def test_what_the_collector_wrote_is_kept(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    collected = bundle / "nodes" / NODE / "cmd" / "dmesg.txt"
    collected.parent.mkdir(parents=True)
    collected.write_text("[    1.000000] collected by exec\n")
    stale_probe = collected.parent / "gpunode-probe.json"
    stale_probe.write_text("{}")
    result = with_kernel_lines(recorded_probe(), XID_79)
    fold_agent_facts(bundle, {NODE: msgspec.json.encode(result)})
    assert collected.read_text() == "[    1.000000] collected by exec\n"
    assert stale_probe.read_bytes() == probe_json(result)  # the probe file is always the agent's


def test_facts_without_raw_texts_give_just_the_probe_file(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    fold_agent_facts(bundle, {NODE: probe_json(recorded_probe())})
    written = sorted(p.relative_to(bundle).as_posix() for p in (bundle / "nodes").rglob("*") if p.is_file())
    assert written == [f"nodes/{NODE}/cmd/gpunode-probe.json"]


def test_unusable_facts_are_skipped_with_a_reason(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path / "bundle")
    probe = recorded_probe()
    good = msgspec.json.encode(msgspec.structs.replace(probe, collected_at="2026-11-30T11:55:00Z"))
    old = msgspec.json.encode(msgspec.structs.replace(probe, collected_at="2026-11-30T11:00:00Z"))
    outcome = fold_agent_facts(
        bundle,
        {"gpu-wk-02": b"<html>502 Bad Gateway</html>", "../etc": good, "gpu-wk-03": old, NODE: good},
        max_age_s=timedelta(minutes=10).total_seconds(),
        now=datetime(2026, 11, 30, 12, 0, tzinfo=UTC),
    )
    assert outcome.folded == [NODE]
    assert set(outcome.skipped) == {"gpu-wk-02", "../etc", "gpu-wk-03"}
    assert "not a gpunode probe result" in outcome.skipped["gpu-wk-02"]
    assert "too old" in outcome.skipped["gpu-wk-03"]
    assert outcome.warnings()[0].startswith("node ../etc: agent facts not used")
    assert [p.name for p in tmp_path.iterdir()] == ["bundle"]
    assert [p.name for p in (bundle / "nodes").iterdir()] == [NODE]


def test_facts_named_for_another_node_are_filed_under_the_pod_node(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    other = msgspec.structs.replace(recorded_probe(), node_name="h200-device")
    fold_agent_facts(bundle, {NODE: msgspec.json.encode(other)})
    assert (bundle / "nodes" / NODE / "cmd" / "gpunode-probe.json").exists()
    assert not (bundle / "nodes" / "h200-device").exists()


def _pod(name: str, node: str, *, ready: bool = True, phase: str = "Running", app: str = AGENT) -> Pod:
    status = {"name": "agent", "ready": ready, "restartCount": 0}
    raw: dict[str, Any] = {
        "metadata": {"name": name, "namespace": "gpunode", "labels": {"app.kubernetes.io/name": app}},
        "spec": {"nodeName": node, "containers": [{"name": "agent", "image": "gpunode:0.1.0"}]},
        "status": {"phase": phase, "containerStatuses": [status]},
    }
    return msgspec.convert(raw, Pod)


def test_agent_pods_to_ask_are_the_ready_ones_by_node() -> None:
    pods = [
        _pod("gpunode-agent-7xk2p", "gpu-wk-01"),
        _pod("gpunode-agent-q9m4t", "gpu-wk-02", ready=False),
        _pod("gpunode-agent-zz1aa", "gpu-wk-03", phase="Pending"),
        _pod("nvidia-dcgm-exporter-4hx8k", "gpu-wk-01", app="nvidia-dcgm-exporter"),
    ]
    assert agent_pods_by_node(pods) == {"gpu-wk-01": "gpunode-agent-7xk2p"}
    assert facts_proxy_path("gpunode-agent-7xk2p") == (
        "/api/v1/namespaces/gpunode/pods/gpunode-agent-7xk2p:9808/proxy/facts?raw=1"
    )


def test_from_a_running_agent_to_the_cluster_verdict(run_agent: AgentFactory, tmp_path: Path) -> None:
    running = run_agent(ScriptedProbe(with_kernel_lines(recorded_probe(), XID_79)))
    assert wait_until(lambda: running.get("/facts")[0] == 200)
    code, _, body = running.get("/facts?raw=1")
    assert code == 200
    bundle = _bundle(tmp_path)
    fold_agent_facts(bundle, {NODE: body})
    assert _causes(bundle) == ["gpu_fallen_off_bus"]
