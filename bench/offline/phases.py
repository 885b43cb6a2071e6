"""CPU time of the diagnose command's phases, in the command's own process.

    GPUNODE_JOBS=1 PYTHONPATH=/tmp/bench-<commit>/src .venv/bin/python bench/offline/phases.py OUT \\
        diagnose --from /tmp/gpunode-bench-offline/offline-5000 -o json > /dev/null

Runs the command as ``python -m gpunode`` does, each phase's function wrapped to add up its
``time.process_time``: loading, each node's pass (the first node apart: what is made once
for the run on first use), the cluster checks, the fleet analysis; writes them to OUT when
the command ends (it ends with ``os._exit``). A phase an older engine does not have is left
out, so two engines' trees can be compared alike.
"""

from __future__ import annotations

import importlib
import os
import sys
import time
from collections.abc import Callable
from typing import Any

START = time.process_time()
#: Per phase: calls, total seconds, the first call's seconds.
STATS: dict[str, list[float]] = {}
PHASES = [
    ("gpunode.bundle.load", "load_source", None),
    ("gpunode.bundle.load", "read_node_observations", None),
    ("gpunode.diagnose", "__call__", "_NodeJudge"),
    ("gpunode.diagnose", "judge_node", None),
    ("gpunode.diagnose", "observe", None),
    ("gpunode.diagnose", "load_kb", None),
    ("gpunode.diagnose", "judge_cluster", None),
    ("gpunode.diagnose", "analyse", None),
    ("gpunode.diagnose", "_diagnose", None),
]


def _wrap(module: str, name: str, owner_name: str | None) -> None:
    owner: Any = importlib.import_module(module)
    if owner_name is not None:
        owner = getattr(owner, owner_name, None)
    if owner is None or name not in vars(owner):
        return
    fn: Callable[..., Any] = getattr(owner, name)
    stats = STATS.setdefault(f"{module}.{owner_name + '.' if owner_name else ''}{name}", [0, 0.0, 0.0])

    def timed(*args: Any, **kwargs: Any) -> Any:
        began = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            spent = time.process_time() - began
            stats[2] = spent if not stats[0] else stats[2]
            stats[0] += 1
            stats[1] += spent

    setattr(owner, name, timed)


def main() -> None:
    out = sys.argv[1]
    sys.argv = ["gpunode", *sys.argv[2:]]
    began = time.process_time()
    import gpunode.cli
    import gpunode.diagnose  # (imported by the command too; timed here)

    imports = time.process_time() - began
    for module, name, owner in PHASES:
        _wrap(module, name, owner)
    real_exit = os._exit

    def report(code: int) -> None:
        with open(out, "w", encoding="utf-8") as f:
            print(f"imports (gpunode.cli, gpunode.diagnose) {imports:.3f} s", file=f)
            for key, (calls, total, first) in STATS.items():
                rest = (total - first) / max(calls - 1, 1) * 1e6
                print(f"{key:45s} calls={int(calls):6d} total={total:.3f} s first={first:.4f} s "
                      f"then={rest:.1f} us a call", file=f)
            print(f"process {time.process_time() - START:.3f} s", file=f)
        real_exit(code)

    os._exit = report  # type: ignore[assignment]
    gpunode.cli.run()


if __name__ == "__main__":
    main()
