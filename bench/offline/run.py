"""Offline engine benchmark: ``diagnose --from`` and ``validate --from`` against the floor.

    PYTHONPATH=src .venv/bin/python bench/offline/run.py                      # quick: 625, 1250
    PYTHONPATH=src .venv/bin/python bench/offline/run.py --nodes 625 1250 2500 5000   # full

For each size, builds (or reuses, under --work) the live benchmark's synthetic
bundle (every GPU node with the recorded H200's nvidia-smi XML, dmesg, containerd
config and both exporter scrapes; 20 pods per GPU node), then runs, each in its own
process and in the same run: the floor script (bench/offline/floor.py), ``gpunode
diagnose --from`` and ``gpunode validate --from``. Wall and CPU seconds (user +
system of the process and its children) and peak RSS (``wait4``'s ru_maxrss, the
largest single process) come from the kernel. Prints and writes JSON (--json).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
MAKE = REPO / "bench" / "live" / "make_cluster.py"


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO / "src")}


def measure(argv: list[str]) -> dict[str, float]:
    """Wall, CPU and peak RSS of one command (its stdout discarded)."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, env=_env())
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):  # 1: the bundle has failures (one node in a hundred is broken)
        raise SystemExit(f"{' '.join(argv)} exited {code}")
    return {"wall_s": round(wall, 2), "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
            "peak_rss_mib": round(usage.ru_maxrss / 1024, 1)}


def bundle(work: Path, nodes: int) -> Path:
    path = work / f"offline-{nodes}"
    if not (path / "manifest.json").exists():
        subprocess.run([sys.executable, str(MAKE), str(path), "--gpu-nodes", str(nodes),
                        "--pods", str(nodes * 20)], check=True, env=_env(),
                       stdout=subprocess.DEVNULL)
    return path


def run_size(work: Path, nodes: int, repeat: int) -> dict[str, Any]:
    path = bundle(work, nodes)
    gpunode = [str(Path(sys.executable).with_name("gpunode"))]
    commands = {
        "floor": [sys.executable, str(HERE / "floor.py"), str(path)],
        "diagnose": [*gpunode, "diagnose", "--from", str(path), "-o", "json"],
        "validate": [*gpunode, "validate", "--from", str(path), "-o", "json"],
    }
    results: dict[str, Any] = {"gpu_nodes": nodes, "pods": nodes * 20}
    for name, argv in commands.items():
        runs = [measure(argv) for _ in range(repeat)]
        results[name] = min(runs, key=lambda r: r["wall_s"]) | {"runs": runs}
    floor, diagnose = results["floor"], results["diagnose"]
    results["diagnose_vs_floor_wall"] = round(diagnose["wall_s"] / floor["wall_s"], 2)
    results["diagnose_vs_floor_cpu"] = round(diagnose["cpu_s"] / floor["cpu_s"], 2)
    results["validate_vs_diagnose_wall"] = round(results["validate"]["wall_s"] / diagnose["wall_s"], 2)
    results["validate_vs_diagnose_cpu"] = round(results["validate"]["cpu_s"] / diagnose["cpu_s"], 2)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, nargs="+", default=[625, 1250])
    parser.add_argument("--repeat", type=int, default=1, help="runs per command (the fastest is kept)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/gpunode-bench-offline"))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    results = {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "cpus": os.cpu_count(), "load_avg_at_start": os.getloadavg()[0],
               "sizes": [run_size(args.work, n, args.repeat) for n in args.nodes]}
    results["load_avg_at_end"] = os.getloadavg()[0]
    text = json.dumps(results, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    for size in results["sizes"]:
        print(f"{size['gpu_nodes']:>5} GPU nodes: floor {size['floor']['wall_s']} s "
              f"({size['floor']['cpu_s']} CPU), diagnose {size['diagnose']['wall_s']} s "
              f"({size['diagnose']['cpu_s']} CPU, {size['diagnose']['peak_rss_mib']} MiB), "
              f"validate {size['validate']['wall_s']} s ({size['validate']['cpu_s']} CPU)",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
