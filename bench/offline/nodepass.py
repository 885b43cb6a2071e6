"""The node pass of ``diagnose --from`` alone: CPU microseconds per GPU node, by phase.

    PYTHONPATH=src .venv/bin/python bench/offline/nodepass.py BUNDLE [--passes 3]

Loads the bundle once, judges the cluster once, then judges every GPU node serially
in this process (as ``GPUNODE_JOBS=1`` does), timing each phase with the process's
CPU clock: reading the node's files (``read``), running its checks and signature scans
(``judge``) and building its report (``report``). The first node is judged once
before timing (it fills the per-process caches every node shares). Each pass judges
every node; the pass with the least CPU is kept (other work on the machine only adds).
Prints one JSON line. Start-up, loading and rendering are left to bench/offline/run.py.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from pathlib import Path

from gpunode import diagnose
from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.checks.context import NodeContext
from gpunode.kb import load_kb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--passes", type=int, default=3)
    args = parser.parse_args()
    gc.disable()  # as diagnose runs
    clock = time.process_time
    started = clock()
    facts = load_bundle(args.bundle)
    loaded = clock() - started
    kb = load_kb()
    judge = diagnose.Diagnoser(facts, kb)
    cluster = judge.cluster_report(diagnose.judge_cluster(facts, kb))
    problems = {c.component: c.status for c in cluster.components if c.status.is_problem}
    names = facts.gpu_nodes()

    def one(name: str) -> tuple[float, float, float]:
        a = clock()
        obs = read_node_observations(facts, name)
        b = clock()
        ctx = NodeContext(facts, name, obs, kb)
        judged = diagnose.judge_node(ctx, facts.catalog)
        c = clock()
        judge.node_report(ctx, judged, problems)
        return b - a, c - b, clock() - c

    one(names[0])
    best: tuple[float, float, float] | None = None
    for _ in range(args.passes):
        phases = [one(name) for name in names]
        sums = (sum(p[0] for p in phases), sum(p[1] for p in phases), sum(p[2] for p in phases))
        best = sums if best is None or sum(sums) < sum(best) else best
    assert best is not None
    per_node = [round(s / len(names) * 1e6) for s in best]
    print(json.dumps({"gpu_nodes": len(names), "load_cpu_s": round(loaded, 2),
                      "read_us": per_node[0], "judge_us": per_node[1], "report_us": per_node[2],
                      "node_us": sum(per_node)}))


if __name__ == "__main__":
    main()
