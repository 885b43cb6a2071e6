"""The diagnose command's memory at its phases, in the command's own process.

    GPUNODE_JOBS=1 PYTHONPATH=/tmp/bench-<commit>/src .venv/bin/python bench/offline/heap.py OUT \\
        diagnose --from /tmp/gpunode-bench-offline/offline-5000 -o json > /dev/null

At the end of loading (``load_source``), before the first node's pass, after the node pass
(``Diagnoser.explain_aggregates``) and at the command's end (``os._exit``) writes to OUT the
resident set (``VmRSS``, ``VmHWM``), the objects the collector tracks counted by type, and,
with ``HEAP_TRACE=N`` in the environment, ``tracemalloc``'s allocations by line, N frames
deep (the run is several times slower then). ``HEAP_TRACE_DUMP=PREFIX`` also writes each
phase's snapshot to ``PREFIX-<phase>.snap``, to compare two engines' with
``tracemalloc.Snapshot.load``; ``HEAP_STOP=<phase>`` ends the run there.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
import tracemalloc
from collections import Counter
from collections.abc import Callable
from typing import Any, TextIO

TRACE = int(os.environ.get("HEAP_TRACE", "0"))
DUMP = os.environ.get("HEAP_TRACE_DUMP", "")
STOP = os.environ.get("HEAP_STOP", "")
if TRACE:
    tracemalloc.start(TRACE)


def _status() -> str:
    with open("/proc/self/status", encoding="ascii") as f:
        fields = dict(line.split(":", 1) for line in f if ":" in line)
    return " ".join(f"{k}={fields[k].strip()}" for k in ("VmRSS", "VmHWM") if k in fields)


def _record(f: TextIO, phase: str) -> None:
    print(f"== {phase}: {_status()}", file=f)
    if TRACE:
        current, peak = tracemalloc.get_traced_memory()
        print(f"   traced {current / 1e6:.1f} MB, peak {peak / 1e6:.1f} MB", file=f)
    counts = Counter(type(o).__qualname__ for o in gc.get_objects())
    print(f"   gc objects {sum(counts.values()):,}", file=f)
    for name, n in counts.most_common(30):
        print(f"   {n:10,d} {name}", file=f)
    if TRACE:
        snap = tracemalloc.take_snapshot()
        if DUMP:
            snap.dump(f"{DUMP}-{phase}.snap")
        for stat in snap.statistics("lineno")[:30]:
            print(f"   {stat.size / 1e6:8.2f} MB {stat.count:9,d} {stat.traceback[0]}", file=f)
    f.flush()
    if phase == STOP:
        os._exit(0)


def _before(module: str, owner_name: str | None, name: str, hook: Callable[[], None],
            after: bool = False) -> None:
    owner: Any = importlib.import_module(module)
    if owner_name is not None:
        owner = getattr(owner, owner_name)
    fn: Callable[..., Any] = getattr(owner, name)
    done = [False]

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if not done[0] and not after:
            done[0] = True
            hook()
        result = fn(*args, **kwargs)
        if not done[0] and after:
            done[0] = True
            hook()
        return result

    setattr(owner, name, wrapped)


def main() -> None:
    out = open(sys.argv[1], "w", encoding="utf-8")  # noqa: SIM115 (open until os._exit)
    sys.argv = ["gpunode", *sys.argv[2:]]
    import gpunode.cli
    import gpunode.diagnose

    _before("gpunode.bundle.load", None, "load_source", lambda: _record(out, "loaded"), after=True)
    _before("gpunode.diagnose", "_NodeJudge", "__call__", lambda: _record(out, "first-node"))
    _before("gpunode.diagnose", "Diagnoser", "explain_aggregates", lambda: _record(out, "node-pass"))
    real_exit = os._exit

    def report(code: int) -> None:
        _record(out, "end")
        out.close()
        real_exit(code)

    os._exit = report  # type: ignore[assignment]
    gpunode.cli.run()


if __name__ == "__main__":
    main()
