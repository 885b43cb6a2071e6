"""GPU nodes from GPU evidence only: control planes (with or without a node folder)
get no root cause, asking for one by name says it is not a GPU node, exit 0."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpunode.apiserver import serve_bundle
from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.cli import build_report
from gpunode.collect import collect_bundle
from gpunode.diagnose import diagnose
from gpunode.gpus import gpu_evidence, nfd_nvidia_label
from gpunode.sim import build_bundle, load_scenario

GPU_NODES = ["gpu-wk-01", "gpu-wk-02"]


def _scenario_file(tmp: Path, control_planes: int) -> Path:
    text = (Path(__file__).parents[2] / "src/gpunode/sim/scenarios/falcon-ai.yaml").read_text()
    text = text.replace("control_plane: {count: 3,", f"control_plane: {{count: {control_planes},")
    text = text.replace("name: falcon-ai\n", f"name: falcon-ai-cp{control_planes}\n", 1)
    path = tmp / f"falcon-cp{control_planes}.yaml"
    path.write_text(text)
    return path


def _bundle(tmp: Path, control_planes: int) -> Path:
    """A healthy cluster whose first control plane has a node folder with a node-exporter scrape."""
    root = build_bundle(load_scenario(str(_scenario_file(tmp, control_planes))), tmp / "bundle")
    scrape = root / "nodes" / "gpu-wk-01" / "metrics" / "node-exporter.prom"
    folder = root / "nodes" / "mgmt-01" / "metrics"
    folder.mkdir(parents=True)
    shutil.copy(scrape, folder / "node-exporter.prom")
    return root


@pytest.mark.parametrize("control_planes", [1, 3])
def test_healthy_cluster_with_control_planes_has_no_root_cause(control_planes: int, tmp_path: Path) -> None:
    report = diagnose(load_bundle(_bundle(tmp_path, control_planes)), read_node_observations)
    assert [n.name for n in report.nodes] == GPU_NODES
    assert not report.has_failures
    assert report.not_gpu_nodes == ()


def test_healthy_cluster_live_has_no_root_cause(tmp_path: Path) -> None:
    source = _bundle(tmp_path, 2)
    with serve_bundle(source) as server:
        result = collect_bundle(tmp_path / "live", kubeconfig=server.kubeconfig_path, quiet=True)
    report = build_report(result.path, None)
    assert [n.name for n in report.nodes] == GPU_NODES
    assert not report.has_failures


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    code = "from gpunode.cli import main; main()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=False)


@pytest.mark.parametrize("command", ["diagnose", "stack"])
def test_asking_for_a_control_plane_says_it_is_not_a_gpu_node(command: str, tmp_path: Path) -> None:
    root = _bundle(tmp_path, 3)
    done = _cli(command, "--from", str(root), "mgmt-01")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "mgmt-01: not a GPU node" in done.stdout
    assert "no NFD pci-10de label" in done.stdout and "holds no GPU facts" in done.stdout
    as_json = _cli(command, "--from", str(root), "mgmt-01", "-o", "json")
    assert '"not_gpu_nodes"' in as_json.stdout and as_json.returncode == 0


def test_falcon_ai_control_plane_is_not_a_gpu_node(tmp_path: Path) -> None:
    root = build_bundle(load_scenario("falcon-ai"), tmp_path / "falcon")
    done = _cli("diagnose", "--from", str(root), "mgmt-01")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "mgmt-01: not a GPU node" in done.stdout and "no node folder" in done.stdout
    assert "no GPU node found" not in done.stderr  # the answer names the node; no contradicting warning


@pytest.mark.parametrize(
    "key",
    [
        "feature.node.kubernetes.io/pci-10de.present",
        "feature.node.kubernetes.io/pci-0300_10de.present",
        "feature.node.kubernetes.io/pci-0302_10de.present",
        "feature.node.kubernetes.io/pci-0302_10de.sriov.capable",
        "feature.node.kubernetes.io/pci-0302_10de_20b5.present",
    ],
)
def test_every_nfd_label_form_is_gpu_evidence(key: str) -> None:
    assert nfd_nvidia_label(key)
    assert gpu_evidence({key: "true"}, {}, (), ())


@pytest.mark.parametrize(
    ("labels", "resources", "pods", "files"),
    [
        ({}, {"nvidia.com/mig-1g.10gb": "7"}, (), ()),
        ({}, {"nvidia.com/gpu.shared": "16"}, (), ()),
        ({"nvidia.com/gpu.deploy.driver": "true"}, {}, (), ()),
        ({}, {}, ("dcgm-exporter",), ()),
        ({}, {}, (), ("cmd/nvidia-smi-q.xml",)),
    ],
)
def test_gpu_evidence_kinds(
    labels: dict[str, str], resources: dict[str, str], pods: tuple[str, ...], files: tuple[str, ...]
) -> None:
    assert gpu_evidence(labels, resources, pods, files)


def test_node_exporter_and_nfd_without_nvidia_are_not_evidence() -> None:
    labels = {
        "feature.node.kubernetes.io/pci-0300_8086.present": "true",
        "node-role.kubernetes.io/control-plane": "",
    }
    assert gpu_evidence(labels, {"cpu": "8"}, ("node-exporter", "nfd", "logging-agent"), ()) == []


def test_control_plane_taint_not_tolerated_is_not_a_missing_operand(tmp_path: Path) -> None:
    """A GPU node that is also a control plane: an operand that does not tolerate the
    control-plane taint is not scheduled there by design, so it is not-deployed."""
    import json

    root = build_bundle(load_scenario("falcon-ai"), tmp_path / "falcon")
    nodes_path = root / "cluster" / "nodes.json"
    nodes = json.loads(nodes_path.read_text())
    for item in nodes["items"]:
        if item["metadata"]["name"] == "gpu-wk-01":
            taint = {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}
            item["spec"]["taints"] = [*item["spec"].get("taints", []), taint]
    nodes_path.write_text(json.dumps(nodes))
    pods_path = root / "cluster" / "pods.json"
    pods = json.loads(pods_path.read_text())
    pods["items"] = [
        p
        for p in pods["items"]
        if not (
            p["spec"].get("nodeName") == "gpu-wk-01"
            and p["metadata"]["name"].startswith("nvidia-dcgm-exporter")
        )
    ]
    pods_path.write_text(json.dumps(pods))
    shutil.rmtree(root / "nodes" / "gpu-wk-01" / "metrics")
    report = diagnose(load_bundle(root), read_node_observations)
    node = next(n for n in report.nodes if n.name == "gpu-wk-01")
    assert node.root_causes == ()
    dcgm = next(c for c in node.components if c.component == "dcgm-exporter")
    assert dcgm.status.value == "not-deployed", dcgm.summary
