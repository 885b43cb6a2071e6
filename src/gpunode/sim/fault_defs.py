"""The fault catalogue (registered into `faults.FAULTS` by the `@fault` decorator)."""

from __future__ import annotations
