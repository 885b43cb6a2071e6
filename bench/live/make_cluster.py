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
import hashlib
import importlib.util
import json
import shutil
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


#: What a built bundle's content follows from: a bundle built by other versions of these is rebuilt.
GENERATOR = (HERE / "make_cluster.py", REPO / "tests/live/fixtures/fleet.py",
             REPO / "tests/live/fixtures/build_mini_bundle.py")


def stamp(argv: list[str]) -> str:
    """The generator's sources and the arguments that shaped a bundle, hashed."""
    digest = hashlib.sha256(json.dumps(argv).encode())
    for path in GENERATOR:
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _stamp_path(out: Path) -> Path:
    return out.with_name(out.name + ".stamp")  # beside the bundle, not in it


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
    parser.add_argument("--if-stale", action="store_true",
                        help="keep OUT when these generator sources and arguments built it; else rebuild")
    args = parser.parse_args(argv)
    shaped = stamp([args.gpu_nodes, args.pods, args.broken_every, args.agents, args.reports])
    if args.if_stale:
        if _stamp_path(args.out).is_file() and _stamp_path(args.out).read_text() == shaped:
            return 0
        shutil.rmtree(args.out, ignore_errors=True)
    started = time.perf_counter()
    build(args.out, args.gpu_nodes, args.pods, broken_every=args.broken_every,
          agents=args.agents, reports=args.reports)
    _stamp_path(args.out).write_text(shaped)
    size = sum(p.stat().st_size for p in args.out.rglob("*") if p.is_file())
    print(json.dumps({"bundle": str(args.out), "seconds": round(time.perf_counter() - started, 1),
                      "bytes": size}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
