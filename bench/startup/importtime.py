"""Start-up cost of a gpunode command: total import time from ``python -X importtime``.

    .venv/bin/python bench/startup/importtime.py [--runs N] -- ARGS...

Runs ``gpunode ARGS`` N times in fresh interpreters and prints the smallest total of
the top-level imports' cumulative times (the minimum filters out a busy machine), plus
the ten largest top-level imports of that run.

The package is byte-compiled first, as ``pip install`` leaves it: where
``PYTHONDONTWRITEBYTECODE`` is set (an editable install in a sandbox), every run
would otherwise compile gpunode's sources again and count that as import time.
"""

from __future__ import annotations

import argparse
import compileall
import subprocess
import sys
from pathlib import Path

import gpunode

RUN = "import sys; sys.argv = ['gpunode', *sys.argv[1:]]; from gpunode.cli import main; main()"


def import_times(args: list[str]) -> dict[str, int]:
    """Top-level module -> cumulative microseconds, for one run."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", RUN, *args], capture_output=True, text=True, check=False
    )
    out: dict[str, int] = {}
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line.split("|", 2)
        if name.startswith(" ") and not name.startswith("  "):
            out[name.strip()] = int(cumulative)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("args", nargs=argparse.REMAINDER)
    ns = parser.parse_args()
    args = [a for a in ns.args if a != "--"]
    compileall.compile_dir(str(Path(gpunode.__file__).parent), quiet=1)
    best = min((import_times(args) for _ in range(ns.runs)), key=lambda t: sum(t.values()))
    print(f"gpunode {' '.join(args)}: {sum(best.values()) / 1000:.0f} ms of imports (best of {ns.runs})")
    for name, us in sorted(best.items(), key=lambda kv: -kv[1])[:10]:
        print(f"  {us / 1000:6.1f} ms  {name}")


if __name__ == "__main__":
    main()
