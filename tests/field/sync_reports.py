"""Write each cause's ``reports`` (the public reports of the field cases that expect it)
into src/gpunode/data/causes/*.toml, in place, touching only that one line per cause.

    .venv/bin/python tests/field/sync_reports.py      (then regenerate docs/knowledge-base.md)

tests/field/test_field.py checks that the KB and the corpus agree.
"""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from case import Case, load_cases

CAUSES = Path(__file__).resolve().parents[2] / "src" / "gpunode" / "data" / "causes"
_CODE = re.compile(r'^code = "([a-z0-9_]+)"\s*$')


def wanted_reports() -> dict[str, list[str]]:
    """Cause code -> sorted sources of the failure cases that expect it."""
    out: dict[str, set[str]] = defaultdict(set)
    for _, case in load_cases():
        if isinstance(case, Case) and not case.expect.healthy and case.expect.cause:
            out[case.expect.cause].add(case.source)
    return {code: sorted(sources) for code, sources in out.items()}


def rewrite(text: str, reports: dict[str, list[str]]) -> str:
    """The TOML text with each cause's ``reports`` line set (after its ``fix`` line)."""
    lines = text.splitlines()
    out: list[str] = []
    code = None
    for line in lines:
        match = _CODE.match(line)
        if match:
            code = match.group(1)
        if line.startswith("reports = ") and code is not None:
            continue  # replaced below
        out.append(line)
        if line.startswith("fix = ") and code in reports:
            out.append("reports = " + json.dumps(reports[code]))
    return "\n".join(out) + "\n"


def main() -> int:
    reports = wanted_reports()
    for path in sorted(CAUSES.glob("*.toml")):
        text = path.read_text(encoding="utf-8")
        new = rewrite(text, reports)
        if new != text:
            path.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
