"""A selector never hides a sick node (issue 22, item 1), through the command line (run in this
process, tests/inprocess.py).

Scenario falcon-ai-broken: gpu-wk-02's driver cannot build, so GFD never labels it and
``-l nvidia.com/gpu.product=…`` (the label a user would pick) chooses only the healthy
gpu-wk-01. Every command that chose nodes says on stderr how many GPU nodes it left out and
names the broken one with its signs, live (the node list read whole from the test API
server), from a bundle collected with that selector (its manifest's ``left_out``) and
offline; the label the README uses now (NFD's PCI label) keeps the broken node.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpunode import sim
from gpunode.apiserver import RunningServer, serve_bundle
from inprocess import run_cli

PRODUCT = "nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3"
PCI = "feature.node.kubernetes.io/pci-10de.present=true"
HEAD = f"warning: 1 of 2 GPU nodes left out by --selector '{PRODUCT}'; 1 looks sick"


def gpunode(*args: str) -> subprocess.CompletedProcess[str]:
    """The command line in this process (tests/inprocess.py): what it prints and returns."""
    return run_cli(*args, env={**os.environ, "COLUMNS": "100"})


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sim.build_bundle(sim.load_scenario("falcon-ai-broken"), tmp_path_factory.mktemp("lo") / "b")


@pytest.fixture(scope="module")
def server(broken: Path) -> Iterator[RunningServer]:
    with serve_bundle(broken) as running:
        yield running


def says_wk02_looks_sick(stderr: str) -> None:
    lines = stderr.splitlines()
    sick = next(ln for ln in lines if ln.startswith("  gpu-wk-02: "))
    assert "no nvidia.com/gpu.product label" in sick, sick
    assert "pod gpu-operator/nvidia-driver-daemonset-" in sick and "CrashLoopBackOff" in sick, sick
    assert not any("gpu-wk-01" in ln for ln in lines), stderr


@pytest.mark.parametrize("command", ["diagnose", "stack", "validate"])
def test_offline_selector_names_the_sick_node_it_left_out(broken: Path, command: str) -> None:
    ran = gpunode(command, "--from", str(broken), "-l", PRODUCT)
    assert ran.returncode == 0, ran.stderr  # the verdict stays the one on the nodes chosen
    assert ran.stderr.startswith(HEAD), ran.stderr
    says_wk02_looks_sick(ran.stderr)
    assert "gpu-wk-02" not in ran.stdout


def test_json_records_the_selection(broken: Path) -> None:
    ran = gpunode("diagnose", "--from", str(broken), "-l", PRODUCT, "-o", "json")
    selection = json.loads(ran.stdout)["selection"]
    assert selection["selector"] == PRODUCT and selection["names"] == []
    assert [n["name"] for n in selection["left_out"]] == ["gpu-wk-02"]
    assert any("CrashLoopBackOff" in s for s in selection["left_out"][0]["signs"])
    everything = json.loads(gpunode("diagnose", "--from", str(broken), "-o", "json").stdout)
    assert everything["selection"] is None


def test_node_names_leave_out_too(broken: Path) -> None:
    ran = gpunode("diagnose", "--from", str(broken), "gpu-wk-01")
    assert ran.stderr.startswith("warning: 1 of 2 GPU nodes left out by the node names given"), ran.stderr
    says_wk02_looks_sick(ran.stderr)


def test_a_healthy_node_left_out_is_a_note(broken: Path) -> None:
    ran = gpunode("diagnose", "--from", str(broken), "gpu-wk-02")
    assert ran.returncode == 1
    assert ran.stderr == ("note: 1 of 2 GPU nodes left out by the node names given; none looks sick "
                          "from the lists (Ready, GFD labels, stack pods)\n")


def test_the_readme_label_survives_a_driver_failure(broken: Path) -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    examples = [ln for ln in readme.splitlines() if ln.startswith(("gpunode ", "kubectl gpunode "))]
    assert any(f"-l {PCI}" in ln for ln in examples)
    assert not [ln for ln in examples if "-l nvidia.com/gpu." in ln or "--selector nvidia.com/gpu." in ln]
    ran = gpunode("diagnose", "--from", str(broken), "-l", PCI)
    assert ran.returncode == 1 and "gpu-wk-02" in ran.stdout and ran.stderr == "", ran.stderr


def test_live_the_node_list_is_read_whole(server: RunningServer) -> None:
    ran = gpunode("diagnose", "--kubeconfig", str(server.kubeconfig_path), "-q", "-l", PRODUCT, "-v", "6")
    assert ran.returncode == 0, ran.stderr
    requests = [ln for ln in ran.stderr.splitlines() if " gpunode] " in ln]
    node_lists = [ln for ln in requests if "/api/v1/nodes?" in ln]
    assert len(node_lists) == 1 and "labelSelector" not in node_lists[0], node_lists
    report = [ln for ln in ran.stderr.splitlines() if " gpunode] " not in ln]
    assert report[0].startswith(HEAD), report
    says_wk02_looks_sick("\n".join(report))


def test_live_validate_says_it_too(server: RunningServer) -> None:
    ran = gpunode("validate", "--kubeconfig", str(server.kubeconfig_path), "-q", "-l", PRODUCT,
                  "--scrape-interval", "0")
    assert HEAD in ran.stderr, ran.stderr
    says_wk02_looks_sick(ran.stderr)


def test_a_bundle_collected_with_a_selector_says_it_offline(server: RunningServer, tmp_path: Path) -> None:
    out = tmp_path / "col"
    ran = gpunode("collect", "--kubeconfig", str(server.kubeconfig_path), "-q", "-l", PRODUCT,
                  "-o", str(out))
    assert ran.returncode == 0 and ran.stderr.startswith(
        f"warning: 1 GPU node left out by --selector '{PRODUCT}'; 1 looks sick"), ran.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["node_selector"] == PRODUCT
    assert [n["name"] for n in manifest["left_out"]] == ["gpu-wk-02"]
    nodes = json.loads((out / "cluster" / "nodes.json").read_text())["items"]
    assert [n["metadata"]["name"] for n in nodes] == ["gpu-wk-01"]  # the bundle holds what was chosen
    for command in ("diagnose", "validate"):
        offline = gpunode(command, "--from", str(out))
        assert offline.returncode == 0 and offline.stderr.startswith(HEAD), (command, offline.stderr)
        says_wk02_looks_sick(offline.stderr)
