# ruff: noqa: E501  (real log lines are long)
"""NVSwitch SXid report lines without their severity word, read by the number's class in the
SXid catalog on the simulated Falcon AI cluster: a fatal number is the NVSwitch fatal error,
a corrected one leaves the node healthy."""

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


def _report(tmp: Path, line: str) -> NodeReport:
    world = build_world(load_scenario("falcon-ai"))
    world.node(NODE).host.kernel_events.append(line)
    finalize(world)
    bundle = write(world, tmp / "bundle")
    (report,) = diagnose(load_bundle(bundle), read_node_observations, [NODE]).nodes
    return report


def test_fatal_sxid_data_line(tmp_path: Path) -> None:
    report = _report(tmp_path, "[ 8123.001122] nvidia-nvswitch1: SXid (PCI:0000:84:00.0): 12028, Data {0x000001c0, 0x00bd5c8a, 0x00000500}")
    assert [(r.component, r.cause) for r in report.root_causes] == [("gpu-hardware", "nvswitch_fatal_error")]


def test_corrected_sxid_data_line_is_healthy(tmp_path: Path) -> None:
    report = _report(tmp_path, "[ 8123.001122] nvidia-nvswitch1: SXid (PCI:0000:84:00.0): 11012, Data {0x00000000, 0x00000001}")
    assert not report.root_causes
