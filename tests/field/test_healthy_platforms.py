"""Healthy stays healthy on every platform: a cluster with control-plane, CPU and GPU nodes,
its GPU nodes shaped as each platform of the field corpus shapes them (labels, node info,
runtime), exits 0 from ``diagnose`` (the command line's ``main`` in this process,
tests/inprocess.py: the exit code and the JSON are all these cases read); the control planes
and the CPU worker are not reported as GPU nodes."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any, get_args

import pytest
from builder import build_case
from case import Platform, load_case

from inprocess import run_cli

PLATFORMS = get_args(Platform)


def _with_cpu_worker(root: Path) -> None:
    """A plain CPU worker beside the control planes: a copy of a control plane without its
    role labels and taints, and the pods every node runs (CNI, kube-proxy, exporters)."""
    path = root / "cluster/nodes.json"
    data = json.loads(path.read_text())
    plane = next(n for n in data["items"] if n["metadata"]["name"].startswith("mgmt-"))
    worker: dict[str, Any] = copy.deepcopy(plane)
    worker["metadata"]["name"] = "cpu-wk-01"
    labels = worker["metadata"]["labels"]
    worker["metadata"]["labels"] = {
        k: v for k, v in labels.items() if not k.startswith("node-role.kubernetes.io/")
    }
    worker["metadata"]["labels"]["kubernetes.io/hostname"] = "cpu-wk-01"
    worker["spec"].pop("taints", None)
    data["items"].append(worker)
    path.write_text(json.dumps(data))


def _case(platform: str, folder: Path) -> Path:
    path = folder / f"healthy-{platform}.yaml"
    path.write_text(
        f"id: healthy-{platform}\nsource: https://example.invalid/healthy\n"
        f"title: a healthy cluster on {platform}\nplatform: {platform}\nexpect:\n  healthy: true\n"
    )
    return path


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_healthy_cluster_of_each_platform_exits_0(platform: str, tmp_path: Path) -> None:
    case = load_case(_case(platform, tmp_path))
    root = build_case(case, tmp_path / case.id)
    _with_cpu_worker(root)
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    done = run_cli("diagnose", "--from", str(root), "-o", "json", env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    report = json.loads(done.stdout)
    nodes = [n["name"] for n in report["nodes"]]
    assert nodes and all(n.startswith("gpu-") for n in nodes), nodes
    assert not report["cluster"]["root_causes"]
    assert not any(w["failing"] for w in report["gpu_workloads"])
