"""The probe tests here reuse the probe-check helpers (recorded H200 probe facts)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "probe_checks"))
