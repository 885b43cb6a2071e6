"""A large synthetic bundle for the live benchmark: N GPU nodes, P pods in total.

Each GPU node runs the GPU Operator's driver, toolkit, device plugin and DCGM
exporter plus a node exporter, shaped like the hand-made Falcon AI slice in
tests/live/fixtures (same builders); the rest of the pods are workloads.
One node in a hundred has a crash-looping device plugin (so logs are read).
Node observations (nvidia-smi, dmesg, containerd config, scrapes) are the
recorded H200 outputs, written once per node.
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import json
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def _builders() -> ModuleType:
    path = REPO / "tests" / "live" / "fixtures" / "build_mini_bundle.py"
    spec = importlib.util.spec_from_file_location("build_mini_bundle", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _node_pods(b: ModuleType, name: str, i: int) -> list[dict[str, Any]]:
    suffix = f"{i:05x}"
    return [b.driver_pod(name, "d" + suffix), b.toolkit_pod(name, "t" + suffix),
            b.device_plugin_pod(name, "p" + suffix, broken=i % 100 == 0),
            b.dcgm_pod(name, "e" + suffix, stuck=False), b.node_exporter_pod(name, "n" + suffix)]


def _workload(template: dict[str, Any], i: int, node: str) -> dict[str, Any]:
    pod = copy.deepcopy(template)
    pod["metadata"].update(name=f"trainer-{i:06d}", namespace=f"team-{i % 40:02d}",
                           labels={"app": "trainer", "job": f"job-{i // 8}"}, ownerReferences=[])
    pod["spec"].update(nodeName=node, containers=[{
        "image": "registry.example.com/ml/trainer:2.4", "name": "trainer",
        "resources": {"limits": {"nvidia.com/gpu": "1"}, "requests": {"nvidia.com/gpu": "1"}}}])
    pod["status"]["containerStatuses"] = [{**template["status"]["containerStatuses"][0],
                                           "name": "trainer", "image": "trainer:2.4"}]
    return pod


def build(out: Path, gpu_nodes: int, pods: int) -> Path:
    b = _builders()
    b.OUT = out
    names = [f"gpu-{i:05d}" for i in range(gpu_nodes)]
    nodes = [b.node(f"mgmt-0{i}", False, 100 + i) for i in range(1, 4)]
    nodes += [b.node(n, True, 1000 + i) for i, n in enumerate(names)]
    stack = [p for i, n in enumerate(names) for p in _node_pods(b, n, i)]
    template = stack[-1]
    work = [_workload(template, i, names[i % gpu_nodes]) for i in range(max(0, pods - len(stack)))]
    b.write("manifest.json", {"format": "gpunode-bundle/v1", "source": "manual",
                              "collected_at": b.T1, "cluster_name": "bench"})
    b.write("cluster/nodes.json", b.as_list(nodes))
    b.write("cluster/pods.json", b.as_list(stack + work))
    b.write("cluster/clusterpolicies.json", b.as_list([b.cluster_policy()]))
    _node_files(b, names)
    return out


def _node_files(b: ModuleType, names: list[str]) -> None:
    real = {n: (b.REAL / f).read_bytes() for n, f in (("xml", "nvidia-smi-q.xml"),
                                                     ("txt", "nvidia-smi.txt"),
                                                     ("dmesg", "dmesg-nvidia.txt"))}
    for i, name in enumerate(names):
        base = f"nodes/{name}"
        b.write(f"{base}/cmd/nvidia-smi-q.xml", real["xml"])
        b.write(f"{base}/cmd/nvidia-smi.txt", real["txt"])
        b.write(f"{base}/cmd/dmesg.txt", real["dmesg"])
        b.write(f"{base}/files/etc/containerd/config.toml", b.CONTAINERD)
        b.write(f"{base}/files/etc/containerd/conf.d/99-nvidia.toml", b.DROP_IN)
        b.write(f"{base}/metrics/dcgm-exporter.prom", b.DCGM_METRICS)
        b.write(f"{base}/metrics/node-exporter.prom", b.NODE_METRICS)
        if i % 100 == 0:
            ns, pod = "gpu-operator", f"nvidia-device-plugin-daemonset-p{i:05x}"
            b.write(f"logs/{ns}/{pod}/nvidia-device-plugin.log", b.DP_LOG)
            b.write(f"logs/{ns}/{pod}/nvidia-device-plugin.previous.log", b.DP_LOG)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--gpu-nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=100_000)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    build(args.out, args.gpu_nodes, args.pods)
    size = sum(p.stat().st_size for p in args.out.rglob("*") if p.is_file())
    print(json.dumps({"bundle": str(args.out), "seconds": round(time.perf_counter() - started, 1),
                      "bytes": size}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
