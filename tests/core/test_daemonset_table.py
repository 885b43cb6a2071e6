"""The report's table of GPU-stack DaemonSets (gpunode.daemonsets): desired vs scheduled vs
ready per DaemonSet and, for a GPU node its component is missing from, the reason."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.diagnose import diagnose
from gpunode.model import Status
from gpunode.report.daemonsets import markdown, rows
from gpunode.sim import build_bundle, load_scenario

TAINT = {"key": "dedicated", "value": "training", "effect": "NoSchedule"}


def _edit(path: Path, change) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads(path.read_text())
    change(doc["items"])
    path.write_text(json.dumps(doc))


def _tainted(tmp_path: Path) -> Path:
    """gpu-wk-01 carries a taint the DCGM exporter's DaemonSet does not tolerate: the
    DaemonSet controller leaves the node out (desired one less) and deletes its pod there."""
    root = build_bundle(load_scenario("falcon-ai"), tmp_path / "falcon")

    def taint(items: list[dict]) -> None:  # type: ignore[type-arg]
        for item in items:
            if item["metadata"]["name"] == "gpu-wk-01":
                item["spec"]["taints"] = [*item["spec"].get("taints", []), TAINT]

    def drop_pod(items: list[dict]) -> None:  # type: ignore[type-arg]
        items[:] = [p for p in items if not (p["spec"].get("nodeName") == "gpu-wk-01"
                                            and p["metadata"]["name"].startswith("nvidia-dcgm-exporter"))]

    def recount(items: list[dict]) -> None:  # type: ignore[type-arg]
        for ds in items:
            if ds["metadata"]["name"] == "nvidia-dcgm-exporter":
                for key in ("desiredNumberScheduled", "currentNumberScheduled", "numberReady",
                            "numberAvailable"):
                    ds["status"][key] -= 1

    _edit(root / "cluster" / "nodes.json", taint)
    _edit(root / "cluster" / "pods.json", drop_pod)
    _edit(root / "cluster" / "daemonsets.json", recount)
    (root / "nodes" / "gpu-wk-01" / "metrics" / "dcgm-exporter.prom").unlink(missing_ok=True)
    return root


def test_a_healthy_cluster_has_no_table(tmp_path: Path) -> None:
    root = build_bundle(load_scenario("falcon-ai"), tmp_path / "falcon")
    report = diagnose(load_bundle(root), read_node_observations)
    assert report.daemonsets is msgspec.UNSET
    assert b'"daemonsets"' not in msgspec.json.encode(report)


def test_a_gpu_node_left_out_by_a_taint_is_named_with_the_reason(tmp_path: Path) -> None:
    report = diagnose(load_bundle(_tainted(tmp_path)), read_node_observations)
    table = {row.component: row for row in rows(report)}
    dcgm = table["dcgm-exporter"]
    assert (dcgm.desired, dcgm.current, dcgm.ready) == (1, 1, 1)  # the counts leave the node out
    assert not dcgm.complete
    [gap] = dcgm.gpu_nodes_without_pod
    assert gap.node == "gpu-wk-01" and gap.status in (Status.FAILED, Status.DEGRADED)
    assert "taint" in gap.reason, gap.reason
    assert gap.cause is not None
    assert table["device-plugin"].complete  # the others run everywhere
    assert any("gpu-wk-01: " in line and "nvidia-dcgm-exporter" in line for line in markdown(report))
