"""The node pass less its parsers and signature scans: the checks and the node report alone.

    PYTHONPATH=src .venv/bin/python bench/offline/checkpass.py BUNDLE [--nodes N] [--passes 3]

``nodepass.py`` times everything a node costs; this times what remains of the judging
once the nvidia-smi XML, dmesg and DCGM parses, the signature scans (per component and
traced) and the Xid check are taken out: a first pass records their results for every
node, and the timed passes give them back (parsed forms put in the node's context, the
scans' findings returned as recorded), so what runs is the check framework, every other
check and the report building. Prints CPU microseconds per GPU node (best of the passes).

For a count that the load of a shared machine does not change, count instructions
instead (only the passes run inside ``functools.reduce`` are counted):

    PYTHONPATH=src valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
      --toggle-collect=functools_reduce .venv/bin/python bench/offline/checkpass.py BUNDLE \\
      --nodes 100 --passes 2 --instructions

and divide the "Collected" count by nodes x passes.
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from gpunode import diagnose
from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.checks.base import REGISTRY
from gpunode.checks.context import NodeContext
from gpunode.kb import load_kb

#: NodeContext values whose computing belongs to the parsers (given back, not timed).
PARSED = ("nvidia_smi", "kernel_log", "_dcgm_families", "dcgm_samples", "node_exporter_samples")
REPLAYED_CHECKS = ("xid_reports",)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--nodes", type=int, default=0, help="judge only the first N GPU nodes")
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--all", action="store_true",
                        help="replay nothing: the judge and report phases of nodepass.py whole")
    parser.add_argument("--instructions", action="store_true",
                        help="run the passes inside functools.reduce, untimed (for callgrind)")
    args = parser.parse_args()
    gc.disable()  # as diagnose runs
    facts = load_bundle(args.bundle)
    kb = load_kb()
    judge = diagnose.Diagnoser(facts, kb)
    cluster = judge.cluster_report(diagnose.judge_cluster(facts, kb))
    problems = {c.component: c.status for c in cluster.components if c.status.is_problem}
    names = facts.gpu_nodes()[: args.nodes or None]
    observations = {name: read_node_observations(facts, name) for name in names}
    recorded: dict[Any, Any] = {}

    def one(name: str) -> None:
        ctx = NodeContext(facts, name, observations[name], kb)
        parsed = None if args.all else recorded.get(("parsed", name))
        if parsed is not None:
            ctx.__dict__.update(parsed[0])
            ctx._dcgm_parsed.update(parsed[1])
        judge.node_report(ctx, diagnose.judge_node(ctx, facts.catalog), problems)
        if parsed is None and not args.all:
            kept = {key: ctx.__dict__[key] for key in PARSED if key in ctx.__dict__}
            recorded["parsed", name] = (kept, dict(ctx._dcgm_parsed))

    if args.all:
        [one(name) for name in names]  # fills the per-process caches, as nodepass.py does
    else:
        _record(recorded, lambda: [one(name) for name in names])
    if args.instructions:
        functools.reduce(lambda _a, _b: [one(name) for name in names], range(args.passes), None)
        return
    best = float("inf")
    for _ in range(args.passes):
        started = time.process_time()
        for name in names:
            one(name)
        best = min(best, time.process_time() - started)
    print(json.dumps({"gpu_nodes": len(names), "checks_and_report_us": round(best / len(names) * 1e6)}))


def _record(recorded: dict[Any, Any], first_pass: Callable[[], object]) -> None:
    """Run ``first_pass`` recording the scans' and replayed checks' results, then make
    them answer from the record."""
    scans, traced = diagnose.signature_findings, diagnose.traced_findings
    checks = [c for c in REGISTRY if c.name in REPLAYED_CHECKS]
    real = {c.name: c.fn for c in checks}

    def scan(ctx: NodeContext, component: str) -> list[Any]:
        found = recorded["scan", ctx.name, component] = scans(ctx, component)
        return list(found)

    def trace(ctx: NodeContext, failing: list[str]) -> Iterator[Any]:
        found = recorded["traced", ctx.name, tuple(failing)] = list(traced(ctx, failing))
        return iter(found)

    def checked(name: str) -> Callable[[NodeContext, str], list[Any]]:
        def run(ctx: NodeContext, component: str) -> list[Any]:
            found = recorded[name, ctx.name, component] = list(real[name](ctx, component))
            return found
        return run

    diagnose.signature_findings, diagnose.traced_findings = scan, trace
    for chk in checks:
        object.__setattr__(chk, "fn", checked(chk.name))
    first_pass()
    diagnose.signature_findings = lambda ctx, cid: list(recorded["scan", ctx.name, cid])
    diagnose.traced_findings = lambda ctx, failing: iter(recorded["traced", ctx.name, tuple(failing)])
    for chk in checks:
        object.__setattr__(chk, "fn", lambda ctx, cid, n=chk.name: recorded[n, ctx.name, cid])


if __name__ == "__main__":
    main()
