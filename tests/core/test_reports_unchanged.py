"""Speed work must not change a report: every scenario's diagnose and validate JSON, as recorded.

The references were made before the engine's fleet-scale rework (issue 11) by
tests/golden/reports/make.py; a change meant to alter reports regenerates them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from goldenmaker import MAKE, MAKER


@pytest.mark.parametrize("case", MAKER.cases())
def test_report_is_what_it_was(case: str, tmp_path: Path) -> None:
    expected = MAKER.golden_path(case).read_bytes()
    actual = MAKER.reports(MAKER.bundle_for(case, tmp_path))
    assert actual.decode().splitlines() == expected.decode().splitlines(), \
        f"{case}: reports changed; if meant, rerun {MAKE.relative_to(MAKE.parents[3])}"
