"""Fault types: each is a cause code, the catalog component it breaks, and an `apply`
that edits a healthy World into the cascade the real stack shows.

Adding one is a small function decorated with `@fault(...)` — the decorator is the
registry entry. Shared cascades (driver never became ready, sandbox creation fails,
...) live in `cascade.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from gpunode.sim.world import World

Scope = Literal["node", "cluster"]
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
        return fn

    return register


from gpunode.sim import fault_defs as _fault_defs  # noqa: E402,F401  (registers the faults)
