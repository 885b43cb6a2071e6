"""Score new field cases cold: with a frozen engine, before any change is made for them.

    python tests/field/cold.py --engine DIR CASE.yaml [CASE.yaml ...]

``DIR`` is a checkout of the commit that scores (``git archive <commit> | tar -x -C DIR``);
its own builder and diagnosis judge each case (without any ``cold:`` block), and the
result is appended to the case file as its ``cold:`` record, which is never rewritten
afterwards: a case that already has one is skipped. ``make accuracy`` sums these records.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import yaml

_SCORE = """
import json, sys
from pathlib import Path
sys.path[:0] = [sys.argv[1] + "/tests/field", sys.argv[1] + "/src"]
from case import load_case
from scoreboard import score
o = score(load_case(Path(sys.argv[2])))
print(json.dumps({"reported": o.reported, "crashed": o.crashed}))
"""


def engine_commit(engine: Path) -> str:
    """The commit the engine tree was taken from (its ENGINE file, else git)."""
    marker = engine / "ENGINE"
    if marker.is_file():
        return marker.read_text(encoding="utf-8").strip()
    out = subprocess.run(["git", "-C", str(engine), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True, check=False)
    return out.stdout.strip() or "unknown"


def score_cold(engine: Path, case_file: Path) -> str:
    """What ``engine`` reports for the case, the ``cold:`` block left out."""
    raw = yaml.safe_load(case_file.read_text(encoding="utf-8"))
    raw.pop("cold", None)
    with tempfile.TemporaryDirectory() as tmp:
        plain = Path(tmp) / case_file.name
        plain.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
        env_python = sys.executable
        done = subprocess.run([env_python, "-c", _SCORE, str(engine), str(plain)],
                              capture_output=True, text=True, check=False,
                              env={"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{engine}/src"})
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise SystemExit(f"{case_file}: the engine could not score it: {tail}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if result["crashed"]:  # a case that does not build is the case's fault, not a score
        raise SystemExit(f"{case_file}: not scored, the case does not build: {result['crashed']}")
    return str(result["reported"])


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--engine", type=Path, required=True)
    parser.add_argument("cases", type=Path, nargs="+")
    args = parser.parse_args(argv)
    commit = engine_commit(args.engine)
    for case_file in args.cases:
        text = case_file.read_text(encoding="utf-8")
        if (yaml.safe_load(text) or {}).get("cold"):
            print(f"skip  {case_file.stem}: already scored cold")
            continue
        reported = score_cold(args.engine, case_file)
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        block = f"cold:\n  reported: {reported}\n  engine: \"{commit}\"\n  scored: \"{stamp}\"\n"
        case_file.write_text(text.rstrip("\n") + "\n" + block, encoding="utf-8")
        print(f"cold  {case_file.stem}: {reported}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
