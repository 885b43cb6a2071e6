"""Small simulated fleets for the fleet-analysis tests: a scenario built into a bundle,
edited the way a real cluster drifts (labels, node files, events, pods), then diagnosed."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from gpunode.commands.diagnosis import build_report
from gpunode.model import Report
from gpunode.sim import build_bundle
from gpunode.sim.scenario import parse_scenario

COLLECTED_AT = "2025-05-20T09:15:00Z"  # the simulator's collection time


def scenario(nodes: Iterable[str], faults: Iterable[str] = (), name: str = "fleet") -> str:
    """A scenario text: one GPU node per entry (a YAML flow mapping's inside), faults as
    ``type@node``."""
    node_lines = "\n".join(f"    - {{{spec}}}" for spec in nodes)
    fault_lines = "\n".join(
        f"  - {{type: {f.split('@')[0]}, node: {f.split('@')[1]}}}" for f in faults) or "  []"
    return f"""name: {name}
cluster:
  name: falcon-ai
  api_server: https://api.falcon.example.com:6443
  control_plane: {{count: 1, prefix: mgmt-, taint: true}}
  gpu_nodes:
{node_lines}
  components: [gpu-operator, nfd, dcgm-exporter, gfd, validator, mig-manager]
faults:
{fault_lines if faults else '  []'}
"""


def uniform(count: int, **extra: str) -> list[str]:
    specs = ", ".join(f"{k}: {v}" for k, v in extra.items())
    return [f"name: gpu-wk-{i:02d}" + (f", {specs}" if specs else "") for i in range(1, count + 1)]


def build(text: str, where: Path) -> Path:
    return build_bundle(parse_scenario(text, "test"), where / "bundle")


def diagnose(bundle: Path) -> Report:
    return build_report(bundle, None)


def edit_list(bundle: Path, resource: str, change: Callable[[list[dict[str, Any]]], None]) -> None:
    path = bundle / "cluster" / f"{resource}.json"
    data = json.loads(path.read_text())
    change(data["items"])
    path.write_text(json.dumps(data))


def edit_node(bundle: Path, name: str, change: Callable[[dict[str, Any]], None]) -> None:
    def _each(items: list[dict[str, Any]]) -> None:
        for item in items:
            if item["metadata"]["name"] == name:
                change(item)

    edit_list(bundle, "nodes", _each)


def edit_file(bundle: Path, node: str, rel: str, old: str, new: str) -> None:
    path = bundle / "nodes" / node / rel
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new))
