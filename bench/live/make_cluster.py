"""A large synthetic bundle for the live benchmark: N GPU nodes, P pods in total.

Each GPU node runs the GPU Operator's driver, toolkit, device plugin and DCGM
exporter plus a node exporter, shaped like the hand-made Falcon AI slice in
tests/live/fixtures (same builders, ``tests/live/fixtures/fleet.py``); the rest
of the pods are workloads. One node in ``--broken-every`` (default 100) has a
crash-looping device plugin (so logs are read). Node observations (nvidia-smi,
dmesg, containerd config, scrapes) are the recorded H200 outputs, written once
per node. ``--agents`` adds a gpunode agent pod and its probe facts per GPU node,
``--reports`` a fresh ``GPUNodeReport`` per GPU node as the agents publish them.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "src"))


def _fleet_module():  # type: ignore[no-untyped-def]
    path = REPO / "tests" / "live" / "fixtures" / "fleet.py"
    spec = importlib.util.spec_from_file_location("fleet", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["fleet"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def build(out: Path, gpu_nodes: int, pods: int, *, broken_every: int = 100,
          agents: bool = False, reports: bool = False) -> Path:
    fleet = _fleet_module()
    broken = range(0, gpu_nodes, broken_every) if broken_every > 0 else ()
    return fleet.build(out, fleet.Fleet(gpu_nodes, pods, broken=set(broken), agents=agents,
                                        reports=reports))  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--gpu-nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=100_000)
    parser.add_argument("--broken-every", type=int, default=100,
                        help="every Nth GPU node has a crash-looping device plugin (0: none)")
    parser.add_argument("--agents", action="store_true", help="a gpunode agent pod per GPU node")
    parser.add_argument("--reports", action="store_true", help="a fresh GPUNodeReport per GPU node")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    build(args.out, args.gpu_nodes, args.pods, broken_every=args.broken_every,
          agents=args.agents, reports=args.reports)
    size = sum(p.stat().st_size for p in args.out.rglob("*") if p.is_file())
    print(json.dumps({"bundle": str(args.out), "seconds": round(time.perf_counter() - started, 1),
                      "bytes": size}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
