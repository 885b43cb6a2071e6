"""The diagnose command stopped at a phase's end, for valgrind to count each phase's instructions.

    PYTHONHASHSEED=0 GPUNODE_JOBS=1 PYTHONPATH=/tmp/bench-<commit>/src valgrind --tool=cachegrind \\
        --cache-sim=no .venv/bin/python bench/offline/stops.py STOP \\
        diagnose --from /tmp/gpunode-bench-offline/offline-5000 -o json > /dev/null

Runs the command as ``python -m gpunode`` does and ends the process (``os._exit``) where STOP
says: ``imports`` (``gpunode.cli`` and ``gpunode.diagnose`` imported), ``loaded``
(``load_source`` returned), ``cluster`` (``judge_cluster`` returned: the knowledge base loaded
too), ``nodes`` (the last node judged: ``Diagnoser.explain_aggregates`` called), ``report``
(``_diagnose`` returned: the aggregates, groups, workloads, daemonsets and the fleet section),
``end`` (the command's own end: the report made safe, encoded, formatted and written); or
``MODULE:NAME`` (``NAME`` may be ``Class.method``): the first call of that function returned,
``MODULE:NAME^``: the first call began. The difference of two stops' counts is the phase
between them. Valgrind 3.19 has no client request
to count from a point on, and the machine's counters are not exposed; the stops stand in.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from typing import Any

STOPS = ("imports", "loaded", "cluster", "nodes", "report", "end")
#: What the stopping call returned, kept so that ending the process frees nothing.
KEPT: list[Any] = []


def _stop_after(module: str, name: str, owner_name: str | None = None, before: bool = False) -> None:
    owner: Any = importlib.import_module(module)
    if owner_name is not None:
        owner = getattr(owner, owner_name)
    fn: Callable[..., Any] = getattr(owner, name)

    def stopped(*args: Any, **kwargs: Any) -> Any:
        if not before:
            KEPT.append(fn(*args, **kwargs))
        sys.stdout.flush()
        os._exit(0)

    setattr(owner, name, stopped)


def main() -> None:
    stop = sys.argv[1]
    if stop not in STOPS and ":" not in stop:
        raise SystemExit(f"STOP is one of {', '.join(STOPS)}, or MODULE:NAME[^]")
    sys.argv = ["gpunode", *sys.argv[2:]]
    import gpunode.cli
    import gpunode.diagnose

    if stop == "imports":
        os._exit(0)
    if stop == "loaded":
        _stop_after("gpunode.bundle.load", "load_source")
    elif stop == "cluster":
        _stop_after("gpunode.diagnose", "judge_cluster")
    elif stop == "nodes":
        _stop_after("gpunode.diagnose", "explain_aggregates", "Diagnoser", before=True)
    elif stop == "report":
        _stop_after("gpunode.diagnose", "_diagnose")
    elif ":" in stop:
        module, _, name = stop.partition(":")
        owner, _, name = name.rstrip("^").rpartition(".")
        _stop_after(module, name, owner or None, before=stop.endswith("^"))
    gpunode.cli.run()


if __name__ == "__main__":
    main()
