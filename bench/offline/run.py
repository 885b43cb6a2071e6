"""Offline engine benchmark: ``diagnose --from`` and ``validate --from`` against the floor.

    PYTHONPATH=src .venv/bin/python bench/offline/run.py                      # quick: 625, 1250
    PYTHONPATH=src .venv/bin/python bench/offline/run.py --nodes 625 1250 2500 5000   # full

For each size, builds (or reuses, under --work) the live benchmark's synthetic
bundle (every GPU node with the recorded H200's nvidia-smi XML, dmesg, containerd
config and both exporter scrapes; 20 pods per GPU node), then runs, each in its own
process and in the same run: the floor script (bench/offline/floor.py), ``gpunode
diagnose --from`` and ``gpunode validate --from`` as they run by default (nodes judged
in worker processes, one per core, from 256 GPU nodes on) and with ``GPUNODE_JOBS=1``
(serial, one process). Wall and CPU seconds (user + system of the process and its
worker processes) and the largest single process's peak RSS (``wait4``'s ru_maxrss)
come from the kernel; the memory of the command and its workers together is their
summed PSS (shared pages counted once), sampled every 20 ms. Prints and writes JSON (--json).
``--without-read-ahead`` adds ``diagnose`` with its node files not read ahead
(``GPUNODE_READ_AHEAD=0``, bundle/ahead.py), to show what that gives.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
MAKE = REPO / "bench" / "live" / "make_cluster.py"


def _env() -> dict[str, str]:
    """The commands' environment: gpunode from this tree, started from its compiled bytecode
    as an installed package is (a PYTHONDONTWRITEBYTECODE left in the environment would make
    every command compile the modules it imports again)."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _compile_package() -> None:
    """Byte-compile gpunode once before anything is timed, as installing it does."""
    import compileall

    compileall.compile_dir(str(REPO / "src" / "gpunode"), quiet=1)


def _children(pid: int) -> list[int]:
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    found: list[int] = []
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as handle:
                found.extend(int(c) for c in handle.read().split())
        except OSError:
            continue
    return found


def _tree(pid: int) -> list[int]:
    todo, seen = [pid], []
    while todo:
        current = todo.pop()
        seen.append(current)
        todo.extend(_children(current))
    return seen


def _pss_kib(pid: int) -> int:
    """Proportional set size: pages shared with forked workers are counted once in a sum."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class TreeMemory(threading.Thread):
    """Samples the summed PSS of a process and its descendants (its workers) every 20 ms."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak_kib, self.most_processes = pid, 0, 1
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.02):
            pids = _tree(self.pid)
            self.most_processes = max(self.most_processes, len(pids))
            self.peak_kib = max(self.peak_kib, sum(_pss_kib(p) for p in pids))


def measure(argv: list[str], env: dict[str, str] | None = None) -> dict[str, float]:
    """Wall, CPU (with its workers) and memory of one command (its stdout discarded).

    ``peak_rss_mib`` is the largest single process (``wait4``); ``peak_pss_total_mib`` the
    most the command and its worker processes held together (sampled summed PSS)."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, env={**_env(), **(env or {})})
    sampler = TreeMemory(proc.pid)
    sampler.start()
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    sampler.done.set()
    sampler.join()
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):  # 1: the bundle has failures (one node in a hundred is broken)
        raise SystemExit(f"{' '.join(argv)} exited {code}")
    return {"wall_s": round(wall, 2), "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
            "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
            "peak_pss_total_mib": round(sampler.peak_kib / 1024, 1),
            "processes": sampler.most_processes}


def bundle(work: Path, nodes: int) -> Path:
    path = work / f"offline-{nodes}"
    # Rebuilt whenever the generator changed since it was built (a stale bundle misleads).
    subprocess.run([sys.executable, str(MAKE), str(path), "--gpu-nodes", str(nodes),
                    "--pods", str(nodes * 20), "--if-stale"], check=True, env=_env(),
                   stdout=subprocess.DEVNULL)
    return path


def run_size(work: Path, nodes: int, repeat: int, without_read_ahead: bool = False) -> dict[str, Any]:
    path = bundle(work, nodes)
    gpunode = [str(Path(sys.executable).with_name("gpunode"))]
    serial = {"GPUNODE_JOBS": "1"}
    commands: dict[str, tuple[list[str], dict[str, str] | None]] = {
        "floor": ([sys.executable, str(HERE / "floor.py"), str(path)], None),
        "diagnose": ([*gpunode, "diagnose", "--from", str(path), "-o", "json"], None),
        "diagnose_serial": ([*gpunode, "diagnose", "--from", str(path), "-o", "json"], serial),
        "validate": ([*gpunode, "validate", "--from", str(path), "-o", "json"], None),
        "validate_serial": ([*gpunode, "validate", "--from", str(path), "-o", "json"], serial),
    }
    if without_read_ahead:  # what the node files read ahead (bundle/ahead.py) gives
        commands["diagnose_no_read_ahead"] = ([*gpunode, "diagnose", "--from", str(path), "-o", "json"],
                                              {"GPUNODE_READ_AHEAD": "0"})
    results: dict[str, Any] = {"gpu_nodes": nodes, "pods": nodes * 20}
    # Rounds interleave the commands, so a machine that slows down or speeds up during the
    # run (a shared host) weighs on every command alike, not on those measured last.
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, (argv, env) in commands.items():
            runs[name].append(measure(argv, env))
    for name, measured in runs.items():
        results[name] = min(measured, key=lambda r: r["wall_s"]) | {"runs": measured}
    floor = results["floor"]
    for view in [name for name in commands if name.startswith("diagnose")]:
        results[f"{view}_vs_floor_wall"] = round(results[view]["wall_s"] / floor["wall_s"], 2)
        results[f"{view}_vs_floor_cpu"] = round(results[view]["cpu_s"] / floor["cpu_s"], 2)
    for view, base in (("validate", "diagnose"), ("validate_serial", "diagnose_serial")):
        results[f"{view}_vs_{base}_wall"] = round(results[view]["wall_s"] / results[base]["wall_s"], 2)
        results[f"{view}_vs_{base}_cpu"] = round(results[view]["cpu_s"] / results[base]["cpu_s"], 2)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, nargs="+", default=[625, 1250])
    parser.add_argument("--repeat", type=int, default=1, help="runs per command (the fastest is kept)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/gpunode-bench-offline"))
    parser.add_argument("--json", type=Path)
    parser.add_argument("--without-read-ahead", action="store_true",
                        help="also diagnose with GPUNODE_READ_AHEAD=0 (node files not read ahead)")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    _compile_package()
    results = {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "cpus": os.cpu_count(), "load_avg_at_start": os.getloadavg()[0],
               "sizes": [run_size(args.work, n, args.repeat, args.without_read_ahead) for n in args.nodes]}
    results["load_avg_at_end"] = os.getloadavg()[0]
    text = json.dumps(results, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    for size in results["sizes"]:
        line = [f"{size['gpu_nodes']:>5} GPU nodes:"]
        for view in ("floor", "diagnose", "diagnose_serial", "validate", "validate_serial",
                     "diagnose_no_read_ahead"):
            if view not in size:
                continue
            r = size[view]
            line.append(f"{view} {r['wall_s']} s wall {r['cpu_s']} s CPU "
                        f"{r['peak_pss_total_mib']} MiB;")
        print(" ".join(line), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
