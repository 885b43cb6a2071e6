"""Wall time of whole commands: best and median of N runs, each in a fresh process.

    python3 bench/startup/wall.py [--runs N] -- 'gpunode probe -o json' 'nvidia-smi -q' ...

Each argument is one command (split on spaces); its output is captured and thrown away.
Prints one line per command with its exit codes.
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import subprocess
import time


def wall(command: list[str], runs: int) -> tuple[list[float], set[int]]:
    times, codes = [], set()
    for _ in range(runs):
        started = time.perf_counter()
        proc = subprocess.run(command, capture_output=True, check=False)
        times.append(time.perf_counter() - started)
        codes.add(proc.returncode)
    return times, codes


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("commands", nargs=argparse.REMAINDER)
    ns = parser.parse_args()
    for command in (c for c in ns.commands if c != "--"):
        times, codes = wall(shlex.split(command), ns.runs)
        best, median = min(times) * 1000, statistics.median(times) * 1000
        print(f"{command:40} best {best:7.1f} ms  median {median:7.1f} ms  exit {sorted(codes)}")


if __name__ == "__main__":
    main()
