"""What the fleet analysis adds to ``diagnose --from``, and ``gpunode diff`` after loading.

    PYTHONPATH=src .venv/bin/python bench/fleet/run.py --bundle /tmp/fb/offline-5000

The bundle is the offline benchmark's (bench/offline/run.py --work /tmp/fb --nodes 5000
builds it: 5,000 GPU nodes, 100,000 pods, every node's recorded H200 files). Measured, in
one process, CPU seconds (this process; what a loaded machine does not inflate) and wall:

- ``analyse``: outliers, shared factors and wedges over the diagnosed fleet (runs once, in
  the main process, after the nodes are judged);
- ``observe``: what the node pass adds per node (reading the fleet's facts off the already
  parsed node files), timed over a sample of nodes and scaled to the fleet;
- ``diff``: two 5,000-node bundles (the second a copy whose nodes.json has a tenth of the
  nodes on another kernel and without one GFD label), after both are loaded and diagnosed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "src"))


def _timed(work: Callable[[], Any], repeat: int) -> tuple[list[float], list[float], Any]:
    cpu: list[float] = []
    wall: list[float] = []
    result = None
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        result = work()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return cpu, wall, result


def _changed_copy(old: Path, where: Path, every: int) -> Path:
    """OLD with every ``every``-th node on another kernel and without GFD's gpu.family label
    (node files and logs shared through symlinks)."""
    new = where / "new"
    (new / "cluster").mkdir(parents=True)
    for name in ("nodes", "logs"):
        if (old / name).exists():
            (new / name).symlink_to((old / name).resolve())
    shutil.copy(old / "manifest.json", new / "manifest.json")
    for item in (old / "cluster").iterdir():
        if item.name != "nodes.json":
            (new / "cluster" / item.name).symlink_to(item.resolve())
    doc = json.loads((old / "cluster" / "nodes.json").read_text())
    for i, node in enumerate(doc["items"]):
        if i % every == 0:
            node["status"]["nodeInfo"]["kernelVersion"] = "5.15.0-139-generic"
            node["metadata"]["labels"].pop("nvidia.com/gpu.family", None)
    (new / "cluster" / "nodes.json").write_text(json.dumps(doc))
    return new


def _observe_cost(facts: Any, nodes: list[str], sample: int) -> dict[str, Any]:
    """observe() over a sample of nodes whose files the checks already parsed, scaled."""
    from gpunode import nodepool
    from gpunode.bundle.load import read_node_observations
    from gpunode.checks.context import NodeContext
    from gpunode.fleet.profile import observe
    from gpunode.kb import load_kb

    kb = load_kb()
    contexts = []
    for name in nodes[:sample]:
        ctx = NodeContext(facts, name, read_node_observations(facts, name), kb)
        _ = ctx.nvidia_smi, ctx.dcgm_gpus  # parsed by the checks before observe runs
        contexts.append(ctx)
    c0 = time.process_time()
    for ctx in contexts:
        observe(ctx)
    per_node = (time.process_time() - c0) / max(1, len(contexts))
    workers = nodepool.jobs(len(nodes))
    return {
        "observe_us_per_node": round(per_node * 1e6, 1),
        "observe_fleet_cpu_s": round(per_node * len(nodes), 3),
        "workers": workers,
        "observe_fleet_wall_s_estimate": round(per_node * len(nodes) / workers, 3),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bundle", type=Path, default=Path("/tmp/fb/offline-5000"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sample", type=int, default=200, help="nodes timed for observe")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    from gpunode.commands.diff import side
    from gpunode.fleet.analysis import analyse
    from gpunode.fleet.diff import diff

    out: dict[str, Any] = {"bundle": str(args.bundle)}
    w0 = time.perf_counter()
    old = side(args.bundle)
    out["load_and_diagnose_s"] = round(time.perf_counter() - w0, 2)
    facts, report, observed = old
    out["gpu_nodes"] = len(report.nodes)
    cpu, wall, fleet = _timed(lambda: analyse(facts, report.nodes, observed), args.repeat)
    out["analyse_cpu_s"], out["analyse_wall_s"] = [round(x, 3) for x in cpu], [round(x, 3) for x in wall]
    out["outliers"], out["correlations"], out["wedges"] = (
        len(fleet.outliers), len(fleet.correlations), len(fleet.wedges))

    out |= _observe_cost(facts, [n.name for n in report.nodes], args.sample)

    with tempfile.TemporaryDirectory() as tmp:
        new_path = _changed_copy(args.bundle, Path(tmp), every=10)
        w0 = time.perf_counter()
        new = side(new_path)
        out["new_load_and_diagnose_s"] = round(time.perf_counter() - w0, 2)
        cpu, wall, result = _timed(lambda: diff(old, new), args.repeat)
        out["diff_cpu_s"], out["diff_wall_s"] = [round(x, 3) for x in cpu], [round(x, 3) for x in wall]
        out["diff_changes"] = len(result.changes)
        out["diff_first"] = f"{result.changes[0].what}: {len(result.changes[0].nodes)} nodes" \
            if result.changes else ""
        cpu, wall, _ = _timed(lambda: diff(old, old), args.repeat)
        out["diff_same_cpu_s"] = [round(x, 3) for x in cpu]
        out["diff_same_wall_s"] = [round(x, 3) for x in wall]
    out["median"] = {k: round(statistics.median(v), 3) for k, v in out.items()
                     if isinstance(v, list) and v and isinstance(v[0], float)}
    text = json.dumps(out, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
