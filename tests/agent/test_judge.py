"""Judging a probe in memory gives what the engine gives on the probe's bundle on disk."""

from __future__ import annotations

from pathlib import Path

import msgspec
from agent_helpers import NODE, XID_79, node_object, recorded_probe, with_kernel_lines

from gpunode.agent.condition import CONDITION_TYPE
from gpunode.agent.fold import probe_files
from gpunode.agent.judge import MemorySource, judge_probe, node_list
from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.diagnose import diagnose
from gpunode.model import Report, Status
from gpunode.probe import write_probe_bundle


def _verdict(report: Report) -> tuple[object, ...]:
    node = report.nodes[0]
    return (
        node.name,
        node.status,
        tuple((c.component, c.status, c.cause, c.blocked_by) for c in node.components),
        tuple((rc.component, rc.cause, rc.evidence) for rc in node.root_causes),
    )


def test_probe_files_are_what_write_probe_bundle_writes(tmp_path: Path) -> None:
    result = with_kernel_lines(recorded_probe(), XID_79)
    write_probe_bundle(result, tmp_path)
    on_disk = {
        p.relative_to(tmp_path).as_posix(): p.read_bytes()
        for p in tmp_path.rglob("*")
        if p.is_file() and p.name != "manifest.json"
    }
    assert probe_files(result) == on_disk


def test_in_memory_verdict_equals_the_bundle_on_disk(tmp_path: Path) -> None:
    result = with_kernel_lines(recorded_probe(), XID_79)
    write_probe_bundle(result, tmp_path)
    from_disk = diagnose(load_bundle(tmp_path), read_node_observations, [NODE])
    in_memory = judge_probe(result)
    assert _verdict(in_memory) == _verdict(from_disk)
    assert [rc.cause for rc in in_memory.nodes[0].root_causes] == ["gpu_fallen_off_bus"]


def test_recorded_h200_has_healthy_driver_and_gpu() -> None:
    node = judge_probe(recorded_probe()).nodes[0]
    statuses = {c.component: c.status for c in node.components}
    assert statuses["driver"] == Status.OK
    assert statuses["gpu-hardware"] == Status.OK
    assert node.root_causes == ()


def test_node_object_feeds_labels_and_capacity() -> None:
    node = node_object()
    node["metadata"]["labels"]["nvidia.com/gpu.count"] = "8"
    report = judge_probe(recorded_probe(), node)
    assert report.nodes[0].gpus == 8
    assert report.nodes[0].roles == ()
    kubelet = next(c for c in report.nodes[0].components if c.component == "kubelet")
    assert kubelet.status == Status.OK


def test_own_condition_is_not_judged() -> None:
    own = {"type": CONDITION_TYPE, "status": "False", "reason": "GpuFallenOffBus", "message": "x"}
    ready = {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "ok"}
    items = msgspec.json.decode(node_list(node_object(conditions=[ready, own])))["items"]
    assert [c["type"] for c in items[0]["status"]["conditions"]] == ["Ready"]


def test_memory_source_lists_by_directory_prefix() -> None:
    source = MemorySource({"nodes/a/cmd/x": b"1", "nodes/ab/cmd/y": b"2", "cluster/nodes.json": b"{}"}, "mem")
    assert source.list("nodes/a") == ["nodes/a/cmd/x"]
    assert source.list("nodes/") == ["nodes/a/cmd/x", "nodes/ab/cmd/y"]
    assert source.read("nodes/a/cmd/x") == b"1"
    assert source.read("nodes/a/cmd/missing") is None
