"""Insufficient nvidia.com/gpu while a node's GPUs look free (checks/held_gpus.py): pods
stuck Terminating hold them; a node simply full is no finding."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.diagnose import diagnose
from gpunode.model import Report
from gpunode.sim import build_bundle, load_scenario

SCHEDULER_SAID = ("0/5 nodes are available: 2 Insufficient nvidia.com/gpu, 3 node(s) had untolerated taint "
                  "{node-role.kubernetes.io/control-plane: }. preemption: 0/5 nodes are available: 2 No "
                  "preemption victims found for incoming pod, 3 Preemption is not helpful for scheduling.")


def _gpus(pod: dict[str, Any]) -> int:
    return sum(int(c.get("resources", {}).get("limits", {}).get("nvidia.com/gpu", 0))
               for c in pod["spec"]["containers"])


def _pod(name: str, node: str | None, gpus: int, **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "cuda", "image": "nvcr.io/nvidia/pytorch:24.05-py3",
                                            "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]}
    if node:
        spec["nodeName"] = node
    running = {"name": "cuda", "ready": True, "restartCount": 0,
               "state": {"running": {"startedAt": "2025-05-19T09:00:00Z"}}}
    unschedulable = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                     "message": SCHEDULER_SAID}
    status = ({"phase": "Running", "containerStatuses": [running]} if node
              else {"phase": "Pending", "conditions": [unschedulable]})
    meta = {"name": name, "namespace": "ml", **extra}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def _full_cluster(tmp_path: Path, terminating: bool) -> Report:
    """Both GPU nodes full; on gpu-wk-01 the pod filling it was deleted two hours ago
    (``terminating``) and is still there; a new 1-GPU pod waits."""
    root = build_bundle(load_scenario("falcon-ai"), tmp_path / "falcon")
    collected = json.loads((root / "manifest.json").read_text())["collected_at"]
    deleted = datetime.fromisoformat(collected.replace("Z", "+00:00")) - timedelta(hours=2)
    pods_path = root / "cluster" / "pods.json"
    pods = json.loads(pods_path.read_text())
    # the training job on gpu-wk-01 is gone; the notebook that took all its GPUs is the one left
    pods["items"] = [p for p in pods["items"] if not (p["spec"].get("nodeName") == "gpu-wk-01" and _gpus(p))]
    for node, name in (("gpu-wk-01", "notebook-old"), ("gpu-wk-02", "train-b")):
        used = sum(_gpus(p) for p in pods["items"] if p["spec"].get("nodeName") == node)
        stamp = deleted.strftime("%Y-%m-%dT%H:%M:%SZ")
        extra = ({"deletionTimestamp": stamp, "deletionGracePeriodSeconds": 30}
                 if terminating and node == "gpu-wk-01" else {})
        pods["items"].append(_pod(name, node, 8 - used, **extra))
    pods["items"].append(_pod("train-new", None, 1))
    pods_path.write_text(json.dumps(pods))
    events_path = root / "cluster" / "events.json"
    events = json.loads(events_path.read_text())
    events["items"].append({
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": "train-new.17f", "namespace": "ml"},
        "involvedObject": {"kind": "Pod", "namespace": "ml", "name": "train-new"},
        "reason": "FailedScheduling", "message": SCHEDULER_SAID, "type": "Warning", "count": 12,
        "source": {"component": "default-scheduler"}, "lastTimestamp": collected,
    })
    events_path.write_text(json.dumps(events))
    return diagnose(load_bundle(root), read_node_observations)


def test_gpus_held_by_a_pod_stuck_terminating_are_named(tmp_path: Path) -> None:
    report = _full_cluster(tmp_path, terminating=True)
    node = next(n for n in report.nodes if n.name == "gpu-wk-01")
    found = [rc for rc in node.root_causes if rc.cause == "gpus_held_by_terminating_pods"]
    assert found and found[0].component == "kubelet", [(r.component, r.cause) for r in node.root_causes]
    excerpt = found[0].evidence[0].excerpt
    assert "ml/notebook-old" in excerpt and "ml/train-new" in excerpt, excerpt
    other = next(n for n in report.nodes if n.name == "gpu-wk-02")
    assert not any(rc.cause == "gpus_held_by_terminating_pods" for rc in other.root_causes)


def test_a_cluster_simply_full_is_no_finding(tmp_path: Path) -> None:
    report = _full_cluster(tmp_path, terminating=False)
    assert not any(rc.cause == "gpus_held_by_terminating_pods" for n in report.nodes for rc in n.root_causes)
