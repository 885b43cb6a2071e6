"""One full probe vs one ``nvidia-smi -q``, timed on the same GPU machine.

Runs are interleaved (probe, nvidia-smi, probe, ...) so clock or load drift hits
both sides alike; medians are reported. The probe is timed in-process (NVML init and
shutdown included in every run, and also reported on their own) and as a cold
``python -m gpunode.probe`` process, which adds interpreter start-up and imports.
Usage: python3 bench/probe/bench_probe.py --runs 25 --out bench.json
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from gpunode.probe import run_probe


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def run_quiet(argv: list[str]) -> None:
    subprocess.run(argv, capture_output=True, check=True)


def probe_once(samples: dict[str, list[float]]) -> None:
    """One in-process probe; its own step timings are kept too."""
    started = time.perf_counter()
    result = run_probe("/", "bench", kernel_log=True)
    total = time.perf_counter() - started
    if not result.nvml.init_ok:
        raise SystemExit(f"NVML did not start: {result.nvml.init_error}")
    init = result.timings["nvml_init"]
    samples["probe_total"].append(total)
    samples["probe_nvml_init"].append(init)
    samples["probe_without_init"].append(total - init)
    samples["probe_nvml_step"].append(result.timings["nvml"])
    samples["probe_host_step"].append(result.timings["host"])


SERIES = (
    "probe_total",
    "probe_nvml_init",
    "probe_without_init",
    "probe_nvml_step",
    "probe_host_step",
    "nvidia_smi_q",
    "nvidia_smi_q_x",
    "probe_cold_process",
    "python_startup",
)


def one_round(samples: dict[str, list[float]], smi: str) -> None:
    """Each measured thing once, in a fixed order."""
    cold = [sys.executable, "-m", "gpunode.probe", "--node-name", "bench"]
    probe_once(samples)
    samples["nvidia_smi_q"].append(timed(lambda: run_quiet([smi, "-q"])))
    samples["nvidia_smi_q_x"].append(timed(lambda: run_quiet([smi, "-q", "-x"])))
    samples["probe_cold_process"].append(timed(lambda: run_quiet(cold)))
    samples["python_startup"].append(timed(lambda: run_quiet([sys.executable, "-c", "pass"])))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=25)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    smi = shutil.which("nvidia-smi") or "nvidia-smi"
    samples: dict[str, list[float]] = {k: [] for k in SERIES}
    probe_once({k: [] for k in SERIES})  # warm-up: imports, caches, first init
    run_quiet([smi, "-q"])
    for _ in range(args.runs):
        one_round(samples, smi)
    medians = {k: statistics.median(v) for k, v in samples.items()}
    report = {"runs": args.runs, "median_s": medians, "samples_s": samples}
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    for key, value in medians.items():
        print(f"{key:24s} {value * 1000:9.2f} ms")
    print(f"probe_total / nvidia_smi_q = {medians['probe_total'] / medians['nvidia_smi_q']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
