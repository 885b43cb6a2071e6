"""Scenario simulator: realistic bundles (format v1) from declarative YAML scenarios.

    scenario = load_scenario("falcon-ai-broken")
    build_bundle(scenario, Path("out/falcon-ai-broken"))

A scenario is a cluster shape plus named faults on named nodes; each fault type in
`FAULTS` produces the cascade of signals the real stack shows. See docs/scenarios.md.
"""

from __future__ import annotations

from pathlib import Path

from gpunode.sim import fault_defs as _fault_defs  # noqa: F401  (registers every fault type)
from gpunode.sim.faults import FAULTS, FaultType
from gpunode.sim.scenario import (
    Scenario,
    demo_scenarios,
    list_scenarios,
    load_scenario,
    not_for_demo,
    parse_scenario,
)


def build_bundle(scenario: Scenario, out_dir: Path) -> Path:
    """Simulate `scenario` and write its bundle to `out_dir` (directory or .tar.gz); returns the path."""
    from gpunode.bundle.load import gc_paused
    from gpunode.sim.build import build_world
    from gpunode.sim.finalize import finalize
    from gpunode.sim.writer import write

    # The object graph only grows while building; cyclic GC passes over it would be
    # pure overhead (and make 100,000-pod builds superlinear).
    with gc_paused():
        world = build_world(scenario)
        for fault in scenario.faults:
            FAULTS[fault.type].apply(world, fault.node)
        finalize(world)
        return write(world, Path(out_dir))


__all__ = [
    "FAULTS",
    "FaultType",
    "Scenario",
    "build_bundle",
    "demo_scenarios",
    "list_scenarios",
    "load_scenario",
    "not_for_demo",
    "parse_scenario",
]
