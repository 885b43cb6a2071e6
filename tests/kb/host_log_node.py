"""One GPU node of the falcon-ai scenario diagnosed with a host log file of the test's lines:
the shape of the tests that read a daemon's own words in the node's syslog."""

from __future__ import annotations

from pathlib import Path

from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.diagnose import diagnose
from gpunode.model import NodeReport
from gpunode.sim import load_scenario
from gpunode.sim.build import build_world
from gpunode.sim.finalize import finalize
from gpunode.sim.writer import write

NODE = "gpu-wk-02"


def report_with_host_log(tmp: Path, log: str, lines: list[str]) -> NodeReport:
    """``NODE``'s report from a falcon-ai bundle whose ``files/<log>`` holds ``lines``."""
    world = build_world(load_scenario("falcon-ai"))
    finalize(world)
    bundle = write(world, tmp / "bundle")
    path = bundle / "nodes" / NODE / "files" / log
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{line}\n" for line in lines))
    (report,) = diagnose(load_bundle(bundle), read_node_observations, [NODE]).nodes
    return report
