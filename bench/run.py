"""``make bench``: every benchmark once, in quick mode by default (minutes on 2 cores).

    .venv/bin/python bench/run.py            # quick: 625/1,250 nodes offline, 200-node live, 20 MB explain
    .venv/bin/python bench/run.py --full     # the issue-11 sizes: 625-5,000 nodes, 5,000-node live, 200 MB

Each suite is its own script with its own README section; this runs them in turn
and writes their JSON under --out (default bench/results/).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

QUICK = {
    "offline": ["offline/run.py", "--nodes", "625", "1250"],
    "live": ["live/run.py", "--gpu-nodes", "200", "--pods", "4000", "--reports", "--live-diagnose"],
    "explain": ["explain/run.py", "--mb", "20"],
}
FULL = {
    "offline": ["offline/run.py", "--nodes", "625", "1250", "2500", "5000"],
    "live": ["live/run.py", "--gpu-nodes", "5000", "--pods", "100000", "--reports", "--live-diagnose"],
    "explain": ["explain/run.py", "--mb", "200"],
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full", action="store_true", help="the issue-11 sizes (about 15 minutes)")
    parser.add_argument("--only", choices=sorted(QUICK), action="append")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(HERE.parent / "src")}
    failed = []
    for name, argv in (FULL if args.full else QUICK).items():
        if args.only and name not in args.only:
            continue
        target = args.out / f"{name}{'-full' if args.full else ''}.json"
        started = time.perf_counter()
        print(f"== {name}: {' '.join(argv)}", file=sys.stderr, flush=True)
        with target.open("w") as out:
            code = subprocess.call([sys.executable, str(HERE / argv[0]), *argv[1:]], stdout=out,
                                   env=env)
        print(f"== {name}: exit {code} in {time.perf_counter() - started:.0f} s -> {target}",
              file=sys.stderr)
        if code:
            failed.append(name)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
