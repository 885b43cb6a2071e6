"""Count like with like (gpus.py): MIG instances, shared replicas and vGPUs are never
taken for physical GPUs, and DCGM GPUs are counted over every per-GPU family."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.diagnose import diagnose
from gpunode.gpus import GpuResources, gpu_resources, mig_instances_labelled, physical_gpus_labelled
from gpunode.model import NodeReport, Status
from gpunode.sim import build_bundle, load_scenario

NODE = "gpu-wk-01"
H100 = "NVIDIA-H100-80GB-HBM3"


@pytest.mark.parametrize(
    ("labels", "capacity", "mode", "physical", "advertised"),
    [
        (
            {"nvidia.com/gpu.count": "8", "nvidia.com/gpu.product": H100},
            {"nvidia.com/gpu": "8"},
            "whole",
            8,
            8,
        ),
        (  # NVIDIA's MIG doc: all-1g.10gb on H100 in single strategy
            {
                "nvidia.com/mig.strategy": "single",
                "nvidia.com/gpu.product": f"{H100}-MIG-1g.10gb",
                "nvidia.com/gpu.count": "7",
            },
            {"nvidia.com/gpu": "7"},
            "mig-single",
            None,
            7,
        ),
        (
            {"nvidia.com/mig.strategy": "mixed", "nvidia.com/mig-1g.10gb.count": "14"},
            {"nvidia.com/gpu": "0", "nvidia.com/mig-1g.10gb": "14", "nvidia.com/mig-3g.40gb": "4"},
            "mig-mixed",
            None,
            18,
        ),
        (  # gpu-sharing doc: 4 T4, replicas 4, capacity 16; mig.strategy=single on a non-MIG GPU
            {
                "nvidia.com/gpu.count": "4",
                "nvidia.com/gpu.product": "Tesla-T4-SHARED",
                "nvidia.com/gpu.replicas": "4",
                "nvidia.com/mig.strategy": "single",
            },
            {"nvidia.com/gpu": "16"},
            "shared",
            4,
            16,
        ),
        (
            {
                "nvidia.com/gpu.count": "4",
                "nvidia.com/gpu.replicas": "4",
                "nvidia.com/gpu.sharing-strategy": "mps",
            },
            {"nvidia.com/gpu": "16"},
            "shared",
            4,
            16,
        ),
        (  # renameByDefault: nvidia.com/gpu reports 0, .shared carries physical x replicas
            {"nvidia.com/gpu.shared.count": "8", "nvidia.com/gpu.shared.replicas": "4"},
            {"nvidia.com/gpu": "0", "nvidia.com/gpu.shared": "32"},
            "shared",
            8,
            32,
        ),
    ],
    ids=["whole", "mig-single", "mig-mixed", "time-slicing", "mps", "renamed-shared"],
)
def test_gpu_resources(
    labels: dict[str, str], capacity: dict[str, str], mode: str, physical: int | None, advertised: int
) -> None:
    found: GpuResources = gpu_resources(labels, capacity)
    assert (found.mode, found.physical, found.advertised) == (mode, physical, advertised)


def test_gfd_count_is_physical_only_where_it_counts_gpus() -> None:
    single = {"nvidia.com/gpu.product": f"{H100}-MIG-1g.10gb", "nvidia.com/gpu.count": "56"}
    assert physical_gpus_labelled(single) is None and mig_instances_labelled(single) == 56
    assert physical_gpus_labelled({"nvidia.com/gpu.count": "4", "nvidia.com/gpu.replicas": "4"}) == 4


@pytest.fixture(scope="module")
def healthy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_bundle(load_scenario("falcon-ai"), tmp_path_factory.mktemp("count") / "falcon")


def _edit_node(root: Path, labels: dict[str, str], resources: dict[str, str]) -> None:
    path = root / "cluster" / "nodes.json"
    doc = json.loads(path.read_text())
    for item in doc["items"]:
        if item["metadata"]["name"] == NODE:
            item["metadata"]["labels"].update(labels)
            for table in ("capacity", "allocatable"):
                item["status"][table].update(resources)
    path.write_text(json.dumps(doc))


def _node(root: Path) -> NodeReport:
    return next(n for n in diagnose(load_bundle(root), read_node_observations).nodes if n.name == NODE)


def test_mig_single_node_is_not_missing_gpus(healthy: Path, tmp_path: Path) -> None:
    """8 H100s as 56 1g.10gb instances: capacity and gpu.count say 56, nvidia-smi 8."""
    root = tmp_path / "b"
    shutil.copytree(healthy, root)
    labels = {
        "nvidia.com/gpu.product": f"{H100}-MIG-1g.10gb",
        "nvidia.com/gpu.count": "56",
        "nvidia.com/mig.strategy": "single",
        "nvidia.com/gpu.memory": "9856",
    }
    _edit_node(root, labels, {"nvidia.com/gpu": "56"})
    node = _node(root)
    assert node.root_causes == ()
    assert node.gpus == 8


def test_time_sliced_node_is_not_missing_gpus(healthy: Path, tmp_path: Path) -> None:
    root = tmp_path / "b"
    shutil.copytree(healthy, root)
    labels = {
        "nvidia.com/gpu.replicas": "4",
        "nvidia.com/gpu.sharing-strategy": "time-slicing",
        "nvidia.com/gpu.product": f"{H100}-SHARED",
    }
    _edit_node(root, labels, {"nvidia.com/gpu": "32"})
    node = _node(root)
    assert node.root_causes == () and node.gpus == 8
    short = tmp_path / "short"
    shutil.copytree(root, short)
    _edit_node(short, {}, {"nvidia.com/gpu": "28"})  # one GPU's four replicas withdrawn
    assert [(r.component, r.cause) for r in _node(short).root_causes] == [("device-plugin", "gpus_unhealthy")]


def test_dcgm_gpus_counted_without_temperature(healthy: Path, tmp_path: Path) -> None:
    """vGPU guests export no DCGM_FI_DEV_GPU_TEMP but other per-GPU families."""
    root = tmp_path / "b"
    shutil.copytree(healthy, root)
    scrape = root / "nodes" / NODE / "metrics" / "dcgm-exporter.prom"
    scrape.write_text("".join(line for line in scrape.read_text().splitlines(True) if "GPU_TEMP" not in line))
    node = _node(root)
    assert node.root_causes == ()
    dcgm = next(c for c in node.components if c.component == "dcgm-exporter")
    assert dcgm.status == Status.OK and "8 GPUs" in dcgm.summary
