"""The serial part of ``diagnose --from`` / ``validate --from``: the parent process's CPU
outside the node pass, by phase.

    GPUNODE_JOBS=2 PYTHONPATH=src .venv/bin/python bench/offline/parent.py diagnose BUNDLE > /dev/null

Runs the command as ``gpunode COMMAND --from BUNDLE -o json`` in this process (the report
goes to stdout) and times, with this process's CPU clock (workers' CPU is not counted):
start-up (imports, argument parsing), loading the bundle (its cluster lists, then the
indexes of ``ClusterFacts.build``), the node pass as the parent sees it (judging the first
node, waiting for and decoding the workers' results), emitting the report and the cyclic
GC's passes. Prints one JSON line on stderr; ``outside_node_pass`` is what the worker
processes cannot take over. One run: take the best of several (other work only adds).
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

clock = time.process_time
started = clock()
spent: dict[str, float] = {}
collections: list[float] = []
_gc_began = [0.0]


def _on_gc(phase: str, _info: dict[str, Any]) -> None:
    if phase == "start":
        _gc_began[0] = clock()
    else:
        collections.append(clock() - _gc_began[0])


def _timed(key: str, func: Callable[..., Any]) -> Callable[..., Any]:
    def run(*args: Any, **kwargs: Any) -> Any:
        began = clock()
        try:
            return func(*args, **kwargs)
        finally:
            spent[key] = spent.get(key, 0.0) + clock() - began

    return run


def _install() -> None:
    from gpunode import cli, diagnose, facts, nodepool
    from gpunode.bundle import load

    judged = nodepool.judged

    def timed_judged(*args: Any, **kwargs: Any) -> Iterator[Any]:
        results = judged(*args, **kwargs)
        while True:
            began = clock()
            try:
                result = next(results)
            except StopIteration:
                return
            finally:
                spent["node_pass"] = spent.get("node_pass", 0.0) + clock() - began
            yield result

    diagnose.nodepool.judged = timed_judged  # type: ignore[assignment]
    load._load_list = _timed("cluster_lists", load._load_list)  # type: ignore[assignment]
    build = facts.ClusterFacts.build.__func__  # type: ignore[attr-defined]
    facts.ClusterFacts.build = classmethod(_timed("facts_build", build))  # type: ignore[assignment]
    load.load_bundle = _timed("load_bundle", load.load_bundle)
    cli.emit = _timed("emit", cli.emit)
    gc.callbacks.append(_on_gc)


def main() -> None:
    command, bundle = sys.argv[1], sys.argv[2]
    _install()
    from gpunode import cli

    setup = clock() - started
    sys.argv = ["gpunode", command, "--from", bundle, "-o", "json"]
    code: Any = None
    try:
        cli.main()
    except SystemExit as exc:
        code = exc.code
    sys.stdout.flush()
    total = clock() - started
    result = {
        "command": command, "bundle": bundle, "exit": code,
        "cpu": round(total, 3), "setup": round(setup, 3),
        **{k: round(v, 3) for k, v in spent.items()},
        "gc": round(sum(collections), 3), "gc_passes": len(collections),
        "outside_node_pass": round(total - spent.get("node_pass", 0.0), 3),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    print(json.dumps(result), file=sys.stderr)


if __name__ == "__main__":
    main()
