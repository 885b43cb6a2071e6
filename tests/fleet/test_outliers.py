"""Peer outliers: silent deviations are flagged against the node's class, uniform fleets
and evenly split fleets are not."""

from __future__ import annotations

from pathlib import Path

import pytest
from fleetsim import build, diagnose, edit_file, edit_node, scenario, uniform

from gpunode.fleet import outliers
from gpunode.fleet.profile import Profile
from gpunode.model import Report


@pytest.fixture(scope="module")
def drifted(tmp_path_factory: pytest.TempPathFactory) -> Report:
    """Eight alike H100 nodes where four drifted without an error: one has 7 GPUs, one
    another kernel, one lost NFD's labels, one's GPU 0 trained its link at x8."""
    nodes = uniform(8)
    nodes[3] = "name: gpu-wk-04, gpus: 7"
    nodes[4] = "name: gpu-wk-05, kernel: 5.15.0-139-generic"
    bundle = build(scenario(nodes), tmp_path_factory.mktemp("drifted"))

    def _no_cpu_labels(node: dict[str, object]) -> None:
        labels = node["metadata"]["labels"]  # type: ignore[index]
        for key in [k for k in labels if k.startswith("feature.node.kubernetes.io/cpu-")]:
            del labels[key]

    edit_node(bundle, "gpu-wk-06", _no_cpu_labels)
    edit_file(bundle, "gpu-wk-07", "cmd/nvidia-smi-q.xml", "<current_link_width>16x</current_link_width>",
              "<current_link_width>8x</current_link_width>")
    return diagnose(bundle)


def _flags(report: Report) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for o in report.fleet.outliers:
        out.setdefault(o.node, set()).add(o.aspect)
    return out


def test_silent_deviations_are_all_flagged(drifted: Report) -> None:
    assert not any(n.root_causes for n in drifted.nodes)  # nothing failed: the drift is silent
    flags = _flags(drifted)
    assert {"gpus.nvml", "gpus.capacity", "gpus.allocatable", "gpus.labelled"} <= flags["gpu-wk-04"]
    assert flags["gpu-wk-05"] == {"version.kernel"}
    assert flags["gpu-wk-06"] == {"labels.nfd"}
    assert flags["gpu-wk-07"] == {"pcie.width"}
    assert set(flags) == {"gpu-wk-04", "gpu-wk-05", "gpu-wk-06", "gpu-wk-07"}


def test_an_outlier_names_its_peers_value_and_its_own(drifted: Report) -> None:
    nvml = next(o for o in drifted.fleet.outliers if o.node == "gpu-wk-04" and o.aspect == "gpus.nvml")
    assert (nvml.peers_value, nvml.value, nvml.class_size) == ("8", "7", 8)
    assert nvml.peers == 7 and "H100" in nvml.peer_class
    kernel = next(o for o in drifted.fleet.outliers if o.node == "gpu-wk-05")
    assert (kernel.peers_value, kernel.value) == ("5.15.0-131-generic", "5.15.0-139-generic")
    nfd = next(o for o in drifted.fleet.outliers if o.node == "gpu-wk-06")
    assert "feature.node.kubernetes.io/cpu-cpuid.ADX" in nfd.value


def test_uniform_fleet_has_no_flags(tmp_path: Path) -> None:
    report = diagnose(build(scenario(uniform(6)), tmp_path))
    assert report.fleet.outliers == ()
    assert report.fleet.correlations == () and report.fleet.wedges == ()


def test_an_even_split_is_two_shapes_not_outliers(tmp_path: Path) -> None:
    """Half the nodes on another kernel (a rolling upgrade half done): no clear majority."""
    nodes = uniform(3) + [f"name: gpu-wk-{i:02d}, kernel: 5.15.0-139-generic" for i in range(4, 7)]
    report = diagnose(build(scenario(nodes), tmp_path))
    assert report.fleet.outliers == ()


def _profile(name: str, product: str | None, pool: str | None, gpus: int) -> Profile:
    keys = {"product": product, "pool": pool, "instance_type": None, "mig": None, "sharing": None}
    return Profile(name, frozenset(), keys, counts={"gpus.nvml": gpus})


def test_node_with_an_unknown_key_joins_the_one_class_it_fits() -> None:
    """A node whose product label is gone is compared with the one class its other keys
    fit; with two such classes it is compared with neither."""
    pool_a = [_profile(f"a{i}", "H100", "a", 8) for i in range(4)]
    lost = _profile("lost", None, "a", 7)
    found = outliers.find([*pool_a, lost, *[_profile(f"b{i}", "A100", "b", 8) for i in range(4)]])
    assert [(o.node, o.aspect, o.peer_class) for o in found] == [("lost", "gpus.nvml", "H100, pool a")]
    two_fit = [*pool_a, *[_profile(f"c{i}", "A100", "a", 8) for i in range(4)], lost]
    assert outliers.find(two_fit) == []
