"""Live collection with and without gpunode agents on every GPU node.

    PYTHONPATH=src .venv/bin/python bench/live/agents.py --gpu-nodes 200 --pods 5000

Builds bench/live's synthetic cluster, gives every GPU node the host files the recorded
H200 probe read (driver version, /proc/modules, validator markers), then a copy with an
agent pod per GPU node and the recorded probe JSON (renamed, fresh). Each variant is
served from a subprocess and collected in a child process (wall, peak RSS, API calls).
"""
from __future__ import annotations

import argparse
import copy
import datetime as dt
import importlib.util
import json
import shutil
import sys
from collections import Counter
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]  # bench/live/agents.py
sys.path.insert(0, str(REPO / "src"))
from gpunode.apiserver import serve_bundle  # noqa: E402


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make = _load("make_cluster", REPO / "bench/live/make_cluster.py")
run = _load("bench_run", REPO / "bench/live/run.py")
H200 = REPO / "tests/fixtures/node/h200-device"
MARKERS = {".driver-ctr-ready": "IS_HOST_DRIVER=false\nNVIDIA_DRIVER_ROOT=/run/nvidia/driver\n",
           "driver-ready": "IS_HOST_DRIVER=false\nNVIDIA_DRIVER_ROOT=/run/nvidia/driver\n",
           "toolkit-ready": "", "plugin-ready": "", "cuda-ready": ""}


def node_files(bundle: Path) -> list[str]:
    names = sorted(p.name for p in (bundle / "nodes").iterdir())
    recorded = H200 / "bundle/nodes/h200-device/files"
    for name in names:
        base = bundle / "nodes" / name / "files"
        for rel in ("proc/driver/nvidia/version", "proc/modules"):
            (base / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(recorded / rel, base / rel)
        for marker, text in MARKERS.items():
            path = base / "run/nvidia/validations" / marker
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    return names


def add_agents(bundle: Path, names: list[str]) -> None:
    template = yaml.safe_load((REPO / "deploy/agent/daemonset.yaml").read_text())["spec"]["template"]
    facts = json.loads((H200 / "probe.json").read_text())
    facts["collected_at"] = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    pods = json.loads((bundle / "cluster/pods.json").read_text())
    for i, name in enumerate(names):
        spec = copy.deepcopy(template["spec"])
        spec["nodeName"] = name
        pods["items"].append({
            "metadata": {"name": f"gpunode-agent-{i:05x}", "namespace": "gpunode",
                         "labels": dict(template["metadata"]["labels"]),
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet",
                                              "name": "gpunode-agent", "controller": True}]},
            "spec": spec,
            "status": {"phase": "Running", "containerStatuses": [{
                "name": "agent", "ready": True, "restartCount": 0,
                "state": {"running": {"startedAt": "2026-11-30T12:00:00Z"}}}]}})
        (bundle / "nodes" / name / "cmd/gpunode-probe.json").write_text(
            json.dumps({**facts, "node_name": name}, indent=2))
    (bundle / "cluster/pods.json").write_text(json.dumps(pods))


def measure(bundle: Path, out: Path) -> dict:
    shutil.rmtree(out, ignore_errors=True)
    with serve_bundle(bundle, in_subprocess=True) as server:
        collect, wall, rss = run._child(run.CHILD, str(out), str(server.kubeconfig_path))
        stats = server.stats()
    verbs = Counter(f"{v} {r}" for v, r, _n, _m in stats["audit"])
    return {"collect_wall_s": round(wall, 2), "peak_rss_mib": round(rss / 1024),
            "requests": stats["requests"], "by_verb": dict(sorted(verbs.items())),
            "extras": collect.get("extras"), "partial": collect.get("partial"),
            "warnings": collect.get("warnings")}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpu-nodes", type=int, default=200)
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/gpunode-bench-agents"))
    args = parser.parse_args()
    shutil.rmtree(args.workdir, ignore_errors=True)
    plain = make.build(args.workdir / "plain", args.gpu_nodes, args.pods)
    names = node_files(plain)
    names = [n for n in names if n.startswith("gpu-")]
    agents = args.workdir / "agents"
    shutil.copytree(plain, agents)
    add_agents(agents, names)
    result = {"gpu_nodes": args.gpu_nodes, "pods": args.pods,
              "without_agents": measure(plain, args.workdir / "out-plain"),
              "with_agents": measure(agents, args.workdir / "out-agents")}
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
