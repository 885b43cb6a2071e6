"""GPU nodes from GPU evidence only: control planes (with or without a node folder)
get no root cause, asking for one by name says it is not a GPU node, exit 0."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from gpunode.apiserver import serve_bundle
from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.cli import build_report
from gpunode.collect import collect_bundle
from gpunode.diagnose import diagnose
from gpunode.errors import BundleError
from gpunode.gpus import gpu_evidence, nfd_nvidia_label
from gpunode.sim import build_bundle, load_scenario
from inprocess import run_cli

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
    """The entry point's ``main`` in this process (tests/inprocess.py): exit code and output."""
    return run_cli(*args)


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


@pytest.mark.parametrize(
    ("labels", "found"),
    [
        ({"cloud.google.com/gke-accelerator": "nvidia-l4"}, "GKE GPU node"),
        ({"kubernetes.azure.com/accelerator": "nvidia"}, "AKS GPU node"),
        ({"karpenter.k8s.aws/instance-gpu-manufacturer": "nvidia"}, "EKS (Karpenter) GPU node"),
        ({"node.kubernetes.io/instance-type": "p4d.24xlarge"}, "EC2 GPU instance"),
        ({"beta.kubernetes.io/instance-type": "g5.xlarge"}, "EC2 GPU instance"),
        ({"node.kubernetes.io/instance-type": "Standard_NC24ads_A100_v4"}, "Azure GPU instance"),
        ({"node.kubernetes.io/instance-type": "a3-highgpu-8g"}, "Google Compute Engine GPU instance"),
        ({"node.kubernetes.io/instance-type": "BM.GPU.H100.8"}, "Oracle Cloud (OKE) GPU instance"),
    ],
)
def test_a_clouds_word_makes_a_gpu_node_before_gpu_software_ran(labels: dict[str, str], found: str) -> None:
    evidence = gpu_evidence(labels, {}, [], ())
    assert len(evidence) == 1 and found in evidence[0]


@pytest.mark.parametrize("kind", ["m5.large", "g4ad.xlarge", "Standard_NV16as_v4", "Standard_D8s_v5",
                                  "n2-standard-8", "VM.Standard.E4.Flex", "inf2.xlarge", "trn1.32xlarge"])
def test_cpu_and_other_vendors_instance_types_are_not_gpu_evidence(kind: str) -> None:
    assert gpu_evidence({"node.kubernetes.io/instance-type": kind}, {}, [], ()) == []
    assert gpu_evidence({"kubernetes.azure.com/accelerator": "amd"}, {}, [], ()) == []


def test_the_shipped_gpu_signals_are_valid_and_bad_ones_are_named() -> None:
    from gpunode.gpus import gpu_signals, parse_gpu_signals

    assert gpu_signals().label and gpu_signals().instance_type
    with pytest.raises(BundleError, match=r"gpu_signals\.toml: instance type"):
        parse_gpu_signals("[[instance_type]]\npattern = '(['\ncloud = 'x'\nsource = 'y'\n")
    with pytest.raises(BundleError, match="invalid GPU signals"):
        parse_gpu_signals("[[label]]\nkey = 'x'\n")


def test_a_gpu_instance_whose_stack_never_came_is_diagnosed_not_skipped(tmp_path: Path) -> None:
    """A new EC2 GPU node with no driver, no labels from GFD/NFD and nothing advertised:
    still a GPU node, judged (here: no NFD worker has labelled it); CPU nodes stay out."""
    import copy
    import json

    root = build_bundle(load_scenario("falcon-ai"), tmp_path / "b")
    path = root / "cluster/nodes.json"
    nodes = json.loads(path.read_text())
    new = copy.deepcopy(next(n for n in nodes["items"] if n["metadata"]["name"] == "gpu-wk-02"))
    new["metadata"]["name"] = "gpu-new-01"
    new["metadata"]["labels"] = {"kubernetes.io/hostname": "gpu-new-01",
                                 "node.kubernetes.io/instance-type": "p5.48xlarge"}
    for key in ("capacity", "allocatable"):
        new["status"][key] = {k: v for k, v in new["status"][key].items() if "nvidia" not in k}
    nodes["items"].append(new)
    path.write_text(json.dumps(nodes))
    report = diagnose(load_bundle(root), read_node_observations)
    assert [n.name for n in report.nodes] == ["gpu-new-01", *GPU_NODES]
    entry = next(n for n in report.nodes if n.name == "gpu-new-01")
    assert entry.root_causes


def test_docs_platforms_names_every_profile_and_cloud_signal() -> None:
    from gpunode.gpus import gpu_signals
    from gpunode.platforms import load_platforms

    text = (Path(__file__).parents[2] / "docs/platforms.md").read_text()
    for platform in load_platforms():
        assert f"`{platform.id}`" in text, platform.id
    for label in gpu_signals().label:
        assert label.key in text, label.key
    for kind in gpu_signals().instance_type:
        assert kind.cloud in text, kind.cloud
