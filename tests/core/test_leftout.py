"""gpunode.leftout: the signs that make a GPU node left out by a selection look sick, read
from the cluster lists; healthy nodes show none (healthy stays healthy)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpunode import sim
from gpunode.bundle.kube import Condition, Node, NodeStatus, ObjectMeta
from gpunode.bundle.load import load_bundle
from gpunode.leftout import left_out, node_signs, selection_of, warning_lines
from gpunode.model import LeftOutNode, Selection

HEALTHY = [name for name, _ in sim.list_scenarios()
           if name.startswith("falcon-ai") and name != "falcon-ai-broken"]


def node(name: str = "n", labels: dict[str, str] | None = None, ready: str = "True",
         capacity: dict[str, str] | None = None, allocatable: dict[str, str] | None = None) -> Node:
    ready_condition = Condition(type="Ready", status=ready, reason="KubeletNotReady")
    return Node(metadata=ObjectMeta(name=name, labels=labels or {}),
                status=NodeStatus(capacity=capacity or {}, allocatable=allocatable or capacity or {},
                                  conditions=(ready_condition,)))


@pytest.mark.parametrize("scenario", HEALTHY)
def test_healthy_nodes_left_out_show_no_sign(scenario: str, tmp_path: Path) -> None:
    facts = load_bundle(sim.build_bundle(sim.load_scenario(scenario), tmp_path / "b"))
    gpu = facts.gpu_nodes()
    selection = selection_of(facts, gpu[:1], gpu[:1], None)
    assert selection is not None and [n.name for n in selection.left_out] == gpu[1:]
    assert all(not n.signs for n in selection.left_out), selection.left_out


def test_signs_from_the_node() -> None:
    gpu = {"nvidia.com/gpu": "8"}
    assert node_signs(node(ready="False", capacity=gpu), {}, gfd_in_use=False) == (
        "NotReady (KubeletNotReady)",)
    assert node_signs(node(capacity=gpu, allocatable={"nvidia.com/gpu": "6"}), {}, gfd_in_use=False) == (
        "advertises 6 of 8 nvidia.com/gpu",)
    assert node_signs(node(capacity=gpu), {}, gfd_in_use=True) == (
        "no nvidia.com/gpu.product label (other GPU nodes have GFD's labels)",)
    mig = {"nvidia.com/gpu": "0", "nvidia.com/mig-1g.10gb": "7"}
    labelled = node(capacity=mig, labels={"nvidia.com/gpu.product": "H100"})
    assert node_signs(labelled, {}, gfd_in_use=True) == ()


def test_only_gpu_nodes_not_chosen_sick_first() -> None:
    nodes = [node("cpu-1"), node("gpu-a", capacity={"nvidia.com/gpu": "8"}),
             node("gpu-b", capacity={"nvidia.com/gpu": "8"}, ready="False"),
             node("gpu-c", labels={"feature.node.kubernetes.io/pci-10de.present": "true"})]
    found = left_out(nodes, {}, {"gpu-c"})
    assert [n.name for n in found] == ["gpu-b", "gpu-a"] and found[0].signs and not found[1].signs


def test_the_stderr_lines_bound_the_names() -> None:
    sick = tuple(LeftOutNode(f"gpu-{i:02d}", ("NotReady",)) for i in range(7))
    lines = warning_lines(Selection(selector="pool=a", left_out=(*sick, LeftOutNode("gpu-99"))), 2)
    assert lines[0] == ("warning: 8 of 10 GPU nodes left out by --selector 'pool=a'; 7 look sick "
                        "(widen the selection to diagnose them):")
    assert lines[1:] == [*(f"  gpu-{i:02d}: NotReady" for i in range(5)), "  … and 2 more"]
    assert warning_lines(None, 3) == [] and warning_lines(Selection(names=("a",)), 1) == []
