"""Fault types: each is a cause code, the catalog component it breaks, and an `apply`
that edits a healthy World into the cascade the real stack shows.

Adding one is a small function decorated with `@fault(...)` in `fault_defs.py` — the
decorator is the registry entry; `gpunode.sim` loads `fault_defs`, so every fault is
registered before a scenario is read. Shared cascades (driver never became ready, sandbox
creation fails, ...) live in `cascade.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gpunode.sim.scenario import FAULT_SCOPES
from gpunode.sim.scenario import FaultScope as Scope
from gpunode.sim.world import World

Apply = Callable[[World, "str | None"], None]


@dataclass(frozen=True)
class FaultType:
    """One registered fault."""

    code: str
    component: str
    scope: Scope
    description: str
    apply: Apply


FAULTS: dict[str, FaultType] = {}


def fault(code: str, component: str, scope: Scope, description: str) -> Callable[[Apply], Apply]:
    """Register the decorated function as the `apply` of fault `code`."""

    def register(fn: Apply) -> Apply:
        FAULTS[code] = FaultType(code, component, scope, description, fn)
        FAULT_SCOPES[code] = scope
        return fn

    return register
