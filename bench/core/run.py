"""Core benchmark: decode and diagnose cost of large bundles, on this machine.

Builds simulated clusters (GPU nodes x ~20 pods each) with gpunode.sim, then
measures, each in its own process so peak RSS is its own:
  * decoding pods.json with json / msgspec untyped (GC on and off) and with
    gpunode's slim structs;
  * a full `gpunode diagnose --from` (wall time and peak RSS) at two sizes,
    to show cost grows linearly with the bundle.

Usage: python bench/core/run.py [--nodes 2500] [--small 625] [--out bench/core/results.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gpunode.sim import build_bundle, parse_scenario

HERE = Path(__file__).parent
SCENARIO = """
name: bench-{nodes}
description: {nodes} GPU nodes for the decode benchmark
cluster:
  name: bench
  api_server: https://api.bench.example.com:6443
  gpu_nodes:
    - {{name: gpu-model, gpus: 8}}
  scale: {{gpu_node_count: {nodes}, pods_per_node: 20}}
"""
DECODE_MODES = ["json-gc", "json-nogc", "msgspec-untyped-gc", "msgspec-untyped-nogc", "gpunode-slim"]
DIAGNOSE = """
import sys, time
from pathlib import Path
from gpunode.cli import build_report
start = time.perf_counter()
report = build_report(Path(sys.argv[1]), None)
seconds = time.perf_counter() - start
status = Path("/proc/self/status").read_text().splitlines()
rss = next(int(l.split()[1]) for l in status if l.startswith("VmHWM:")) / 1024
print(f'{{"seconds": {seconds:.3f}, "peak_rss_mib": {rss:.1f}, "nodes": {len(report.nodes)}}}')
"""


def build(nodes: int, root: Path) -> Path:
    scenario = parse_scenario(SCENARIO.format(nodes=nodes), f"bench-{nodes}")
    return build_bundle(scenario, root / f"bench-{nodes}")


def child(*args: str) -> dict[str, object]:
    out = subprocess.run([sys.executable, *args], capture_output=True, text=True, check=True)
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def pods_in(bundle: Path) -> int:
    return len(json.loads((bundle / "cluster/pods.json").read_bytes())["items"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=2500)
    parser.add_argument("--small", type=int, default=625)
    parser.add_argument("--out", type=Path, default=HERE / "results.json")
    args = parser.parse_args()
    results: dict[str, object] = {
        "machine": "2-core CI-sized machine",
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    with tempfile.TemporaryDirectory(prefix="gpunode-bench-") as tmp:
        t0 = time.perf_counter()
        big = build(args.nodes, Path(tmp))
        results["build_seconds"] = round(time.perf_counter() - t0, 2)
        small = build(args.small, Path(tmp))
        results["pods"] = pods_in(big)
        results["pods_small"] = pods_in(small)
        results["decode"] = [
            child(str(HERE / "decode.py"), str(big / "cluster/pods.json"), m) for m in DECODE_MODES
        ]
        results["diagnose_large"] = child("-c", DIAGNOSE, str(big))
        results["diagnose_small"] = child("-c", DIAGNOSE, str(small))
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
