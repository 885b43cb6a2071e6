"""The seed troubleshooting table, end to end on simulated clusters:

nvidia-smi failing in the driver pod      -> layer 1
toolkit errors at container start         -> layer 2 (containerd config not patched)
allocatable nvidia.com/gpu missing/wrong  -> layer 3 device plugin
DCGM metrics missing                      -> layer 4, but only after layer 1 is verified
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.diagnose import diagnose
from gpunode.model import NodeReport
from gpunode.sim import build_bundle, load_scenario


def _node(bundle: Path, name: str = "gpu-wk-02") -> NodeReport:
    report = diagnose(load_bundle(bundle), read_node_observations)
    return next(n for n in report.nodes if n.name == name)


@pytest.mark.parametrize(
    ("scenario", "layer", "component"),
    [
        ("fault-driver-library-mismatch", 1, "driver"),
        ("fault-containerd-not-patched", 2, "container-toolkit"),
        ("fault-device-plugin-zero-gpus", 3, "device-plugin"),
        ("fault-dcgm-hostengine-unreachable", 4, "dcgm-exporter"),
    ],
)
def test_symptom_lands_on_its_layer(scenario: str, layer: int, component: str, tmp_path: Path) -> None:
    node = _node(build_bundle(load_scenario(scenario), tmp_path / "b"))
    assert [(r.layer, r.component) for r in node.root_causes] == [(layer, component)]


def test_dcgm_failure_is_flagged_until_layer_1_is_verified(tmp_path: Path) -> None:
    bundle = build_bundle(load_scenario("fault-dcgm-hostengine-unreachable"), tmp_path / "b")
    verified = _node(bundle).root_causes[0]
    assert verified.component == "dcgm-exporter" and verified.unverified_below == ()
    # Without any node-level evidence of the GPUs and the driver, layer 1 is unverified.
    shutil.rmtree(bundle / "nodes" / "gpu-wk-02")
    unverified = _node(bundle).root_causes[0]
    assert unverified.component == "dcgm-exporter"
    assert "gpu-hardware" in unverified.unverified_below
