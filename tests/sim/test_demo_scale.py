"""``demo`` runs what fits its memory: a benchmark fleet (scale-5000) is not offered (issue 22).

Building scale-5000 in memory takes 2.9 GiB and judging it 890 MiB, past the 416 MiB a run
may grow by default; ``demo`` says so at once, naming what to run instead, and its list
leaves it out. ``gpunode sim`` still writes it for benchmarks."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from gpunode.sim import demo_scenarios, list_scenarios, load_scenario, not_for_demo

GPUNODE = Path(__file__).parents[2] / ".venv" / "bin" / "gpunode"


def test_a_benchmark_fleet_is_refused_at_once_with_what_to_run() -> None:
    started = time.monotonic()
    done = subprocess.run([str(GPUNODE), "demo", "--scenario", "scale-5000"], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 2, done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr
    line, = done.stderr.splitlines()
    assert "gpunode sim scale-5000 -o DIR" in line and "GPUNODE_MAX_MEMORY_MIB" in line
    assert time.monotonic() - started < 30  # refused before anything is built


def test_demo_lists_only_what_it_runs() -> None:
    shown = dict(demo_scenarios())
    assert "scale-5000" not in shown and "falcon-ai-broken" in shown
    assert set(shown) == {name for name, _ in list_scenarios() if not_for_demo(load_scenario(name)) is None}
    assert len(shown) == len(list_scenarios()) - 1
