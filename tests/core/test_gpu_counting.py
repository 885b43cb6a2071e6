"""Count like with like (gpus.py): MIG instances, shared replicas and vGPUs are never
taken for physical GPUs, and DCGM GPUs are counted over every per-GPU family."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.diagnose import diagnose
from gpunode.gpus import (
    NOT_SHARED,
    GpuResources,
    PluginSharing,
    dcgm_series_gpus,
    gpu_resources,
    mig_instances_labelled,
    physical_gpus_labelled,
    plugin_sharing,
    selected_plugin_config,
)
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


# -- the device plugin's own config (k8s-device-plugin README config file shape) -----------

_TIME_SLICED = """version: v1
flags:
  migStrategy: "none"
sharing:
  timeSlicing:
    resources:
    - name: nvidia.com/gpu
      replicas: 4
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (_TIME_SLICED, PluginSharing("time-slicing", 4)),
        (  # renameByDefault belongs under sharing.timeSlicing; under flags it does nothing
            "version: v1\nflags:\n  renameByDefault: true\nsharing:\n  timeSlicing:\n    resources:\n"
            "      - name: nvidia.com/gpu\n        replicas: 16384\n",
            PluginSharing("time-slicing", 16384, renamed=False),
        ),
        (
            "version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: true\n    resources:\n"
            "    - name: nvidia.com/gpu\n      replicas: 2\n",
            PluginSharing("time-slicing", 2, renamed=True),
        ),
        (
            "version: v1\nsharing:\n  mps:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 10\n",
            PluginSharing("mps", 10),
        ),
        ("version: v1\nflags:\n  migStrategy: single\n", NOT_SHARED),
        ("#!/bin/sh\nnvidia-smi\n", None),
        ("version: v1\nmig-configs:\n  all-disabled: []\n", None),
        ("sharing: [unclosed", None),
    ],
    ids=["time-slicing", "rename-under-flags", "renamed", "mps", "not-shared", "script", "mig-parted", "bad"],
)
def test_plugin_sharing(text: str, expected: PluginSharing | None) -> None:
    assert plugin_sharing(text) == expected


def test_plugin_config_key_follows_label_then_default_then_the_only_one() -> None:
    keys = ["a100", "t4"]
    assert selected_plugin_config(keys, "t4", "a100") == "t4"
    assert selected_plugin_config(keys, None, "a100") == "a100"
    assert selected_plugin_config(keys, "h100", "a100") is None  # the plugin fails, no fallback
    assert selected_plugin_config(keys, None, None) is None
    assert selected_plugin_config(["any"], None, None) == "any"


def _unlabelled_shared(root: Path, capacity: str) -> None:
    """GFD says nothing of sharing (replicas 1) while the plugin advertises ``capacity``."""
    labels = {"nvidia.com/gpu.replicas": "1", "nvidia.com/gpu.sharing-strategy": "none"}
    _edit_node(root, labels, {"nvidia.com/gpu": capacity})


def _component(node: NodeReport, component: str) -> tuple[Status, str]:
    found = next(c for c in node.components if c.component == component)
    return found.status, found.summary


def _add_plugin_config(root: Path, name: str, data: dict[str, str], policy_default: str | None) -> None:
    """The ConfigMap in the operator namespace, named by the ClusterPolicy."""
    path = root / "cluster" / "configmaps.json"
    doc = json.loads(path.read_text())
    meta = {"name": name, "namespace": "gpu-operator"}
    doc["items"].append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data})
    path.write_text(json.dumps(doc))
    path = root / "cluster" / "clusterpolicies.json"
    doc = json.loads(path.read_text())
    config = {"name": name, **({"default": policy_default} if policy_default else {})}
    doc["items"][0]["spec"]["devicePlugin"]["config"] = config
    path.write_text(json.dumps(doc))


def test_unexplained_multiple_of_the_gpus_is_unknown_not_missing(healthy: Path, tmp_path: Path) -> None:
    """Capacity 32 on 8 GPUs, no sharing label, no plugin config: replicas or lost GPUs?"""
    root = tmp_path / "b"
    shutil.copytree(healthy, root)
    _unlabelled_shared(root, "32")
    node = _node(root)
    assert node.root_causes == ()
    status, summary = _component(node, "gpu-hardware")
    assert status == Status.UNKNOWN and "32 is 4 x 8" in summary


def test_plugin_config_from_the_cluster_policy_divides_the_capacity(healthy: Path, tmp_path: Path) -> None:
    root = tmp_path / "b"
    shutil.copytree(healthy, root)
    _unlabelled_shared(root, "32")
    _add_plugin_config(root, "time-slicing-config", {"any": _TIME_SLICED, "other": "version: v1\n"}, "any")
    node = _node(root)
    assert node.root_causes == () and node.gpus == 8
    assert _component(node, "gpu-hardware") == (Status.OK, "8x NVIDIA H100 80GB HBM3")


def test_plugin_config_does_not_hide_a_lost_gpu(healthy: Path, tmp_path: Path) -> None:
    """Replicas 4 explain 32 as 8 GPUs: nvidia-smi seeing 7 is a missing GPU."""
    root = tmp_path / "b"
    shutil.copytree(healthy, root)
    _unlabelled_shared(root, "32")
    _edit_node(root, {"nvidia.com/gpu.count": "7"}, {})
    _add_plugin_config(root, "time-slicing-config", {"any": _TIME_SLICED}, None)
    xml = root / "nodes" / NODE / "cmd" / "nvidia-smi-q.xml"
    text = xml.read_text()
    start = text.rindex("<gpu id=")
    end = text.index("</gpu>", start) + len("</gpu>")
    xml.write_text((text[:start] + text[end:]).replace("<attached_gpus>8<", "<attached_gpus>7<"))
    missing = next(r for r in _node(root).root_causes if r.cause == "gpu_missing")
    assert "attached_gpus=7, node should have 8" in missing.evidence[0].excerpt


def test_plugin_config_not_in_effect_is_not_a_shortfall(healthy: Path, tmp_path: Path) -> None:
    """A config asking for replicas the plugin does not (yet) serve: 8 whole GPUs advertised
    are not 24 replicas missing."""
    root = tmp_path / "b"
    shutil.copytree(healthy, root)
    _unlabelled_shared(root, "8")
    _add_plugin_config(root, "time-slicing-config", {"any": _TIME_SLICED}, None)
    node = _node(root)
    assert node.root_causes == ()
    assert _component(node, "gpu-hardware")[0] == Status.OK


def test_plugin_config_mounted_by_the_plugin_pod(healthy: Path, tmp_path: Path) -> None:
    """The plugin chart's own ConfigMap, mounted into its pod, with no ClusterPolicy naming it."""
    root = tmp_path / "b"
    shutil.copytree(healthy, root)
    _unlabelled_shared(root, "32")
    path = root / "cluster" / "configmaps.json"
    doc = json.loads(path.read_text())
    meta = {"name": "nvidia-device-plugin-configs", "namespace": "gpu-operator"}
    item = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"config": _TIME_SLICED}}
    doc["items"].append(item)
    path.write_text(json.dumps(doc))
    path = root / "cluster" / "pods.json"
    doc = json.loads(path.read_text())
    for pod in doc["items"]:
        plugin = pod["metadata"]["name"].startswith("nvidia-device-plugin-daemonset")
        if plugin and pod["spec"].get("nodeName") == NODE:
            volume = {"name": "available-configs", "configMap": {"name": "nvidia-device-plugin-configs"}}
            pod["spec"].setdefault("volumes", []).append(volume)
    path.write_text(json.dumps(doc))
    node = _node(root)
    assert node.root_causes == () and _component(node, "gpu-hardware")[0] == Status.OK


def test_dcgm_gpus_are_counted_over_any_per_gpu_series() -> None:
    """dcgm-exporter 236 (vGPU guests serve GPU_UTIL, no GPU_TEMP); MIG instances of one GPU
    share its ``gpu`` index; a series without gpu or UUID labels counts nothing."""
    vgpu = [{"gpu": "0", "UUID": "GPU-a", "modelName": "GRID A100-40C"},
            {"gpu": "1", "UUID": "GPU-b", "modelName": "GRID A100-40C"}]
    mig = [{"gpu": "0", "UUID": "GPU-c", "GPU_I_PROFILE": "1g.6gb", "GPU_I_ID": str(i)} for i in (3, 4, 5)]
    assert dcgm_series_gpus(vgpu) == {"0", "1"}
    assert dcgm_series_gpus(mig) == {"0"}
    assert dcgm_series_gpus([{"UUID": "GPU-d"}, {"Hostname": "n"}]) == {"GPU-d"}
