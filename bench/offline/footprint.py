"""How much of the engine's code a node's pass runs: a measure of its cache footprint.

    PYTHONPATH=/tmp/bench-<commit>/src .venv/bin/python bench/offline/footprint.py BUNDLE \\
        [--nodes 50] [--files 25]

Loads the bundle, judges the cluster, warms the per-process caches with 20 GPU nodes, then
for each of the next ``--nodes`` nodes (``_NodeJudge``, as the command's node pass) counts
the Python calls, the distinct functions called and their bytecode's size (``sys.setprofile``),
and the distinct source lines run (``sys.settrace``); prints the means a node and the
distinct lines a node by file. Two engines that run as many bytecodes a node may still
differ here: a pass spread over more functions and lines reads more of the interpreter's
code objects (bytecode, inline caches, constants) from beyond the first-level cache each
node, which instruction counts do not show.
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

from gpunode import diagnose as engine
from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.kb import load_kb


def _short(filename: str) -> str:
    return filename.split("/src/", 1)[-1] if "/src/" in filename else filename.rsplit("/", 1)[-1]


def _functions(run: Callable[[], object]) -> Counter[CodeType]:
    """The Python functions ``run`` calls, with how often."""
    called: Counter[CodeType] = Counter()

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            called[frame.f_code] += 1

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return called


def _lines(run: Callable[[], object]) -> set[tuple[str, int]]:
    """The distinct source lines ``run`` runs."""
    seen: set[tuple[str, int]] = set()

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line":
            seen.add((frame.f_code.co_filename, frame.f_lineno))
        return local

    def tracer(frame: FrameType, event: str, arg: Any) -> Any:
        return local

    sys.settrace(tracer)
    try:
        run()
    finally:
        sys.settrace(None)
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--nodes", type=int, default=50)
    parser.add_argument("--files", type=int, default=25)
    args = parser.parse_args()
    gc.disable()  # as diagnose runs
    facts = load_bundle(args.bundle)
    kb = load_kb()
    diagnoser = engine.Diagnoser(facts, kb)
    cluster = diagnoser.cluster_report(engine.judge_cluster(facts, kb))
    problems = {c.component: c.status for c in cluster.components if c.status.is_problem}
    names = [n for n in facts.gpu_nodes() if facts.is_gpu_node(n)]
    judge = engine._NodeJudge(facts, read_node_observations, diagnoser, problems, None, True)
    for name in names[:20]:
        judge(name)
    sample = names[20:20 + args.nodes]
    calls = functions = code_bytes = lines = 0
    by_file: Counter[str] = Counter()
    for name in sample:
        called = _functions(lambda n=name: judge(n))  # type: ignore[misc]
        calls += sum(called.values())
        functions += len(called)
        code_bytes += sum(len(code.co_code) for code in called)
        ran = _lines(lambda n=name: judge(n))  # type: ignore[misc]
        lines += len(ran)
        by_file.update(_short(filename) for filename, _ in ran)
    count = len(sample)
    print(f"a node: {calls / count:.0f} calls, {functions / count:.0f} distinct functions "
          f"({code_bytes / count / 1024:.0f} KiB of bytecode), {lines / count:.0f} distinct lines "
          f"in {len(by_file)} files ({count} nodes)")
    for filename, seen in by_file.most_common(args.files):
        print(f"{seen / count:8.1f}  {filename}")


if __name__ == "__main__":
    main()
