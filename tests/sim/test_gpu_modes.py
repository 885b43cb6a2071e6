"""Healthy MIG (single, mixed), time-slicing, MPS and vGPU scenarios: the bundle
shows the mode as real nodes do, and the diagnosis finds nothing wrong."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sim_helpers import Bundle

from inprocess import run_cli

NODE = "gpu-wk-01"
MODES = ["mig-single", "mig-mixed", "time-slicing", "mps", "vgpu"]


@pytest.mark.parametrize("mode", MODES)
def test_demo_of_each_mode_exits_0(mode: str) -> None:
    done = run_cli("demo", "--scenario", f"falcon-ai-{mode}")  # the command line, in this process
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No root cause found on 2 GPU nodes" in done.stdout


def test_mig_single_advertises_instances(build: Callable[[str], Bundle]) -> None:
    bundle = build("falcon-ai-mig-single")
    node = bundle.node(NODE)
    labels = node["metadata"]["labels"]
    assert node["status"]["allocatable"]["nvidia.com/gpu"] == "56"
    assert labels["nvidia.com/gpu.count"] == "56"
    assert labels["nvidia.com/gpu.product"].endswith("-MIG-1g.10gb")
    xml = bundle.node_file(NODE, "cmd/nvidia-smi-q.xml").read_text()
    assert "<attached_gpus>8</attached_gpus>" in xml and "<current_mig>Enabled</current_mig>" in xml


def test_mig_mixed_advertises_profiles(build: Callable[[str], Bundle]) -> None:
    node = build("falcon-ai-mig-mixed").node(NODE)
    allocatable = node["status"]["allocatable"]
    assert "nvidia.com/gpu" not in allocatable
    assert allocatable["nvidia.com/mig-1g.10gb"] == "16" and allocatable["nvidia.com/mig-3g.40gb"] == "8"
    assert node["metadata"]["labels"]["nvidia.com/mig.strategy"] == "mixed"


@pytest.mark.parametrize("mode", ["time-slicing", "mps"])
def test_sharing_multiplies_the_count(mode: str, build: Callable[[str], Bundle]) -> None:
    node = build(f"falcon-ai-{mode}").node(NODE)
    labels = node["metadata"]["labels"]
    assert node["status"]["capacity"]["nvidia.com/gpu"] == "32"
    assert (labels["nvidia.com/gpu.count"], labels["nvidia.com/gpu.replicas"]) == ("8", "4")
    assert labels["nvidia.com/gpu.sharing-strategy"] == mode
    assert labels["nvidia.com/gpu.product"].endswith("-SHARED")


def test_vgpu_guest_has_no_dcgm_temperature(build: Callable[[str], Bundle]) -> None:
    bundle = build("falcon-ai-vgpu")
    scrape = bundle.node_file(NODE, "metrics/dcgm-exporter.prom").read_text()
    assert "DCGM_FI_DEV_GPU_TEMP{" not in scrape and "DCGM_FI_DEV_GPU_UTIL{" in scrape
    xml = bundle.node_file(NODE, "cmd/nvidia-smi-q.xml").read_text()
    assert "<virtualization_mode>VGPU</virtualization_mode>" in xml
    assert bundle.node(NODE)["metadata"]["labels"]["nvidia.com/vgpu.present"] == "true"
