"""The node pass's cost in counts that do not move with a shared machine's load.

    PYTHONPATH=src .venv/bin/python bench/offline/counts.py bytecodes BUNDLE [--nodes 100]
    PYTHONPATH=src valgrind --tool=cachegrind --cache-sim=no \\
        .venv/bin/python bench/offline/counts.py grind BUNDLE [--nodes 200] --rounds R

``bytecodes``: the Python bytecodes the node pass (``judge_node``, the node report and the
fleet's ``observe``) runs for the first ``--nodes`` GPU nodes, counted by ``sys.settrace``
with opcode events after 20 other nodes warmed the caches; prints the count a node.
``grind``: loads the bundle and judges the nodes ``--rounds`` times, for valgrind to count
machine instructions: run it with 1 and 2 rounds, and the difference divided by the nodes is
a node's steady cost, without start-up and loading. The engine is the one on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from gpunode import diagnose as engine
from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.checks.context import NodeContext
from gpunode.kb import load_kb

try:
    from gpunode.fleet.profile import observe
except ImportError:  # an engine from before the fleet profile
    def observe(ctx: NodeContext) -> None:
        return None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=("bytecodes", "grind"))
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--nodes", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    gc.disable()
    facts = load_bundle(args.bundle)
    kb = load_kb()
    diagnoser = engine.Diagnoser(facts, kb)
    cluster = diagnoser.cluster_report(engine.judge_cluster(facts, kb))
    problems = {c.component: c.status for c in cluster.components if c.status.is_problem}
    names = [n for n in facts.gpu_nodes() if facts.is_gpu_node(n)]
    count = args.nodes or (100 if args.mode == "bytecodes" else 200)
    observations = {n: read_node_observations(facts, n) for n in names[:count + 20]}

    def judge(name: str) -> None:
        ctx = NodeContext(facts, name, observations[name], kb)
        diagnoser.node_report(ctx, engine.judge_node(ctx, facts.catalog), problems)
        observe(ctx)

    if args.mode == "grind":
        for _ in range(args.rounds):
            for name in names[:count]:
                judge(name)
        return
    for name in names[count:count + 20]:
        judge(name)
    print(f"{_bytecodes(lambda: [judge(n) for n in names[:count]]) / count:.0f} bytecodes a node")


def _bytecodes(run: Callable[[], object]) -> int:
    """The bytecodes ``run`` executes, counted one by one."""
    seen = [0]

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "opcode":
            seen[0] += 1
        return local

    def tracer(frame: FrameType, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        return local

    sys.settrace(tracer)
    try:
        run()
    finally:
        sys.settrace(None)
    return seen[0]


if __name__ == "__main__":
    main()
