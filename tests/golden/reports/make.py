"""Reference reports (diagnose and validate JSON) for every bundled scenario and fixture bundle.

    PYTHONPATH=src .venv/bin/python tests/golden/reports/make.py

The engine's speed work (issue 11) must not change a single report: tests/core/
test_reports_unchanged.py diffs today's reports against these. When a change to
the checks is meant to change reports, rerun this and review the diff in git.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import msgspec

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parents[1] / "fixtures"
#: Scenarios too large to build in a test run.
SKIPPED = frozenset({"scale-5000"})


def cases() -> list[str]:
    from gpunode.sim import list_scenarios

    return [name for name, _ in list_scenarios() if name not in SKIPPED] + ["fixture:handmade"]


def bundle_for(case: str, workdir: Path) -> Path:
    if case.startswith("fixture:"):
        return FIXTURES / case.removeprefix("fixture:")
    from gpunode.sim import build_bundle, load_scenario

    return build_bundle(load_scenario(case), workdir / case)


def reports(bundle: Path) -> bytes:
    """Both reports of one bundle as JSON, the bundle's own path replaced by ``<bundle>``."""
    from gpunode.bundle.load import load_bundle, read_node_observations
    from gpunode.cli import build_report
    from gpunode.validate.context import ValidationOptions
    from gpunode.validate.runner import validate_facts

    diagnosis = msgspec.to_builtins(build_report(bundle, None))
    validation = msgspec.to_builtins(
        validate_facts(load_bundle(bundle), read_node_observations, ValidationOptions()))
    text = msgspec.json.format(msgspec.json.encode(
        {"diagnose": diagnosis, "validate": validation}), indent=1)
    return text.replace(msgspec.json.encode(str(bundle))[1:-1], b"<bundle>")


def golden_path(case: str) -> Path:
    return HERE / f"{case.replace(':', '-')}.json"


def iter_reports(workdir: Path) -> Iterator[tuple[str, bytes]]:
    for case in cases():
        yield case, reports(bundle_for(case, workdir))


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        for case, both in iter_reports(Path(tmp)):
            golden_path(case).write_bytes(both)
            print(case, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
