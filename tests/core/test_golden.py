"""Golden outputs of `gpunode demo` in every format (reviewed by hand).

Regenerate after an intended change with GPUNODE_UPDATE_GOLDEN=1, then read
the diff before committing it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from inprocess import run_cli

GOLDEN = Path(__file__).parent.parent / "golden"
FORMATS = {"table": "demo.txt", "json": "demo.json", "markdown": "demo.md"}


def demo_output(fmt: str) -> str:
    env = {**os.environ, "COLUMNS": "80", "NO_COLOR": "1", "TERM": "dumb"}
    proc = run_cli("demo", "-o", fmt, env=env)  # the command line in this process: the same output
    assert proc.returncode == 1, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_demo_matches_golden(fmt: str) -> None:
    path = GOLDEN / FORMATS[fmt]
    out = demo_output(fmt)
    if os.environ.get("GPUNODE_UPDATE_GOLDEN") == "1":
        path.write_text(out)
    assert out == path.read_text(), f"{path} differs; regenerate with GPUNODE_UPDATE_GOLDEN=1 and review"
