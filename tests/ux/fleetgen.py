"""A synthetic fleet report: simulator nodes of several fault scenarios, copied under new names.

The simulator's scenarios have two GPU nodes each; a fleet of hundreds is
made by copying their diagnosed nodes (healthy, kernel headers missing, GPU
fallen off the bus, device plugin without GPUs) in fixed proportions.
"""

from __future__ import annotations

from collections import defaultdict
from functools import cache
from pathlib import Path

import msgspec

from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.diagnose import diagnose
from gpunode.model import Group, NodeReport, Report
from gpunode.sim import build_bundle, load_scenario

# (scenario, share of the fleet in percent) for the faulty node gpu-wk-02; the rest is healthy
FAULTS = (
    ("fault-gpu-fallen-off-bus", 2),
    ("fault-kernel-headers-missing", 8),
    ("fault-device-plugin-zero-gpus", 5),
)


@cache
def _diagnosed(scenario: str, root: Path) -> Report:
    bundle = build_bundle(load_scenario(scenario), root / scenario)
    return diagnose(load_bundle(bundle), read_node_observations)


def fleet_report(count: int, root: Path) -> Report:
    """``count`` GPU nodes named gpu-0001…; faulty ones spread through the name order."""
    healthy = next(n for n in _diagnosed("falcon-ai", root).nodes if n.name == "gpu-wk-01")
    faulty = [
        (next(n for n in _diagnosed(s, root).nodes if n.name == "gpu-wk-02"), share) for s, share in FAULTS
    ]
    plan: list[NodeReport] = []
    for node, share in faulty:
        plan += [node] * max(1, count * share // 100)
    plan += [healthy] * (count - len(plan))
    nodes = tuple(_renamed(template, f"gpu-{i + 1:04d}") for i, template in enumerate(_spread(plan, count)))
    base = _diagnosed("falcon-ai", root)
    return msgspec.structs.replace(base, nodes=nodes, groups=_groups(nodes))


def _spread(plan: list[NodeReport], count: int) -> list[NodeReport]:
    """Interleave the faulty nodes among the healthy ones (every k-th name)."""
    faulty = [n for n in plan if n.root_causes]
    healthy = [n for n in plan if not n.root_causes]
    out: list[NodeReport] = []
    step = max(1, count // max(1, len(faulty)))
    for i in range(count):
        out.append(
            faulty.pop(0) if faulty and i % step == 0 else (healthy.pop() if healthy else faulty.pop())
        )
    return out


def _renamed(node: NodeReport, name: str) -> NodeReport:
    old = node.name
    root_causes = tuple(
        msgspec.structs.replace(rc, next_steps=tuple(s.replace(old, name) for s in rc.next_steps))
        for rc in node.root_causes
    )
    return msgspec.structs.replace(node, name=name, root_causes=root_causes)


def _groups(nodes: tuple[NodeReport, ...]) -> tuple[Group, ...]:
    by: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for n in nodes:
        for rc in n.root_causes:
            by[(rc.cause, rc.component, rc.title)].append(n.name)
    return tuple(Group(c, comp, t, tuple(names)) for (c, comp, t), names in by.items())
