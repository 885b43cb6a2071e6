"""``gpunode explain`` against ``grep -c -E`` with the same patterns, on one large log.

    PYTHONPATH=src .venv/bin/python bench/explain/run.py                 # quick: 20 MB
    PYTHONPATH=src .venv/bin/python bench/explain/run.py --mb 200        # the issue's size

Writes (or reuses, under --work) a log of healthy GPU-stack lines (tests/kb/kb_noise.py)
with two signatures planted, then measures, each in its own process: ``grep -c -E -f``
with every pattern explain looks for (translated to POSIX ERE: ``\\d`` → ``[0-9]``,
``(?:`` → ``(``), and ``gpunode explain -o json``. CPU is user + system seconds of the
process (``wait4``); the fastest of --repeat runs is kept. Prints JSON.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PLANTED = ("NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.",
           "Failed to initialize NVML: Driver/library version mismatch")


def _noise() -> Any:
    spec = importlib.util.spec_from_file_location("kb_noise", REPO / "tests" / "kb" / "kb_noise.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_log(path: Path, megabytes: int) -> None:
    lines = list(_noise().noise_lines(20_000))
    chunk = ("\n".join(lines) + "\n").encode()
    target = megabytes * 1024 * 1024
    with path.open("wb") as out:
        written, planted = 0, 0
        while written < target:
            out.write(chunk)
            written += len(chunk)
            if planted < len(PLANTED) and written >= target * (planted + 1) // 3:
                line = (PLANTED[planted] + "\n").encode()
                out.write(line)
                written += len(line)
                planted += 1


def ere_patterns() -> list[str]:
    """Every pattern explain searches for, as POSIX ERE for grep."""
    from gpunode.explain import candidate_matchers
    from gpunode.kb import load_kb
    from gpunode.xid import XID_LINE_PATTERNS

    patterns = [m.pattern for _, m in candidate_matchers(load_kb())]
    patterns += [p.pattern for p in XID_LINE_PATTERNS]
    return [_as_ere(p) for p in dict.fromkeys(patterns)]


def _as_ere(pattern: str) -> str:
    """Python syntax to GNU ERE. A bounded gap ``.{0,N}`` keeps Python's backtracking linear;
    grep's automaton is linear already and a bound only multiplies its states (a 2 MB log took
    80 s), so grep gets the plain ``.*`` it would be given by hand."""
    pattern = pattern.replace("(?:", "(").replace("\\d", "[0-9]")
    return re.sub(r"\.\{0,[0-9]+\}", ".*", pattern)


def measure(argv: list[str]) -> dict[str, Any]:
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONPATH": str(REPO / "src"), "LC_ALL": "C.UTF-8"})
    assert proc.stdout is not None
    output = proc.stdout.read()
    _pid, _status, usage = os.wait4(proc.pid, 0)
    return {"wall_s": round(time.perf_counter() - started, 3),
            "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
            "peak_rss_mib": round(usage.ru_maxrss / 1024, 1), "output": output}


def best(argv: list[str], repeat: int) -> dict[str, Any]:
    runs = [measure(argv) for _ in range(repeat)]
    return min(runs, key=lambda r: r["cpu_s"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path("/tmp/gpunode-bench-explain"))
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    log = args.work / f"log-{args.mb}mb.txt"
    if not log.exists():
        write_log(log, args.mb)
    patterns = args.work / "patterns.ere"
    patterns.write_text("\n".join(ere_patterns()) + "\n")
    grep = best(["grep", "-c", "-E", "-f", str(patterns), str(log)], args.repeat)
    gpunode = str(Path(sys.executable).with_name("gpunode"))
    explain = best([gpunode, "explain", str(log), "-o", "json"], args.repeat)
    found = json.loads(explain.pop("output"))
    result = {
        "log_mb": round(log.stat().st_size / 2**20, 1), "patterns": len(ere_patterns()),
        "grep_matching_lines": int(grep.pop("output")), "grep": grep, "explain": explain,
        "explain_causes": [m["cause"] for m in found["matches"]],
        "explain_vs_grep_cpu": round(explain["cpu_s"] / grep["cpu_s"], 2),
        "explain_vs_grep_wall": round(explain["wall_s"] / grep["wall_s"], 2),
        "load_avg": os.getloadavg()[0],
    }
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
