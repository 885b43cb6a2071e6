"""tests/golden/reports/make.py loaded as a module (importable as ``goldenmaker``: tests/core
is on sys.path): the reference reports' scenarios, bundles and renderers for the tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

MAKE = Path(__file__).parents[1] / "golden" / "reports" / "make.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("golden_reports_make", MAKE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


MAKER = _load()
