"""Scenario files: bundled ones load, bad ones fail with one line naming file and field."""

from __future__ import annotations

import json
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest
from sim_helpers import Bundle

from gpunode.errors import BundleError, UsageError
from gpunode.sim import build_bundle, list_scenarios, load_scenario, parse_scenario

GOOD = """
name: tiny
description: one GPU node
cluster:
  name: tiny
  api_server: https://10.0.0.1:6443
  control_plane: {count: 1}
  gpu_nodes:
    - {name: gpu-a, gpus: 2, nics: 0}
  components: [gpu-operator, nfd]
faults: []
"""


def _error(text: str) -> str:
    with pytest.raises(UsageError) as info:
        parse_scenario(text, "bad.yaml")
    message = str(info.value)
    assert "\n" not in message
    return message


def test_bundled_scenarios_load_and_describe_themselves() -> None:
    scenarios = dict(list_scenarios())
    assert {
        "falcon-ai",
        "falcon-ai-broken",
        "falcon-ai-host-driver",
        "falcon-ai-legacy-runtime",
        "scale-5000",
    } <= set(scenarios)
    for name, description in scenarios.items():
        assert description, name
        assert load_scenario(name).name == name


def test_scenario_loads_from_a_file_path(tmp_path: Path) -> None:
    path = tmp_path / "tiny.yaml"
    path.write_text(GOOD)
    scenario = load_scenario(path)
    assert scenario.cluster.gpu_nodes[0].gpus == 2 and scenario.cluster.control_plane.prefix == "mgmt-"


def test_unknown_bundled_name_lists_the_choices() -> None:
    with pytest.raises(UsageError, match=r"unknown scenario .nope.*falcon-ai"):
        load_scenario("nope")


def test_wrong_type_names_file_and_field() -> None:
    message = _error(GOOD.replace("gpus: 2", "gpus: two"))
    assert message.startswith("bad.yaml: cluster.gpu_nodes[0].gpus:")


def test_unknown_key_is_rejected() -> None:
    message = _error(GOOD.replace("nics: 0}", "nics: 0, colour: red}"))
    assert "colour" in message and "cluster.gpu_nodes[0]" in message


def test_bad_enum_value_is_rejected() -> None:
    assert "cluster.runtime" in _error(GOOD.replace("  components:", "  runtime: docker\n  components:"))


def test_invalid_yaml_gives_line() -> None:
    assert _error("name: [unclosed\n").startswith("bad.yaml: line")


def test_fault_checks() -> None:
    unknown = _error(GOOD.replace("faults: []", "faults:\n  - {type: cosmic_ray, node: gpu-a}"))
    assert unknown.startswith("bad.yaml: faults[0].type: unknown fault 'cosmic_ray'")
    missing = _error(GOOD.replace("faults: []", "faults:\n  - {type: node_not_ready, node: gpu-z}"))
    assert missing.startswith("bad.yaml: faults[0].node:")
    extra = _error(GOOD.replace("faults: []", "faults:\n  - {type: nfd_not_deployed, node: gpu-a}"))
    assert "cluster-wide" in extra


def test_fault_needing_an_absent_pod_is_a_usage_error(tmp_path: Path) -> None:
    text = GOOD.replace("gpu-operator, nfd]", "gpu-operator, nfd]\n  driver_mode: host").replace(
        "faults: []", "faults:\n  - {type: kernel_headers_missing, node: gpu-a}"
    )
    with pytest.raises(UsageError, match="needs a driver pod on gpu-a"):
        build_bundle(parse_scenario(text), tmp_path / "b")


def test_duplicate_node_names_rejected() -> None:
    text = GOOD.replace("    - {name: gpu-a, gpus: 2, nics: 0}", "    - {name: gpu-a}\n    - {name: gpu-a}")
    assert "used twice" in _error(text)


def test_minimal_scenario_builds_without_optional_components(tmp_path: Path) -> None:
    bundle = Bundle(build_bundle(parse_scenario(GOOD), tmp_path / "b"))
    names = {p["metadata"]["name"].rsplit("-", 1)[0] for p in bundle.items("pods")}
    assert "nvidia-driver-daemonset" in names and "nvidia-operator-validator" not in names
    assert not any(n.startswith("mofed-") for n in names)
    assert bundle.node("gpu-a")["status"]["allocatable"]["nvidia.com/gpu"] == "2"
    assert len(bundle.node_file("gpu-a", "cmd/nvidia-smi-q.xml").read_text().split("<gpu id=")) == 3


def test_tarball_output_is_reproducible(tmp_path: Path) -> None:
    scenario = parse_scenario(GOOD)
    first = build_bundle(scenario, tmp_path / "a" / "tiny.tar.gz")
    second = build_bundle(scenario, tmp_path / "b" / "tiny.tar.gz")
    assert first.read_bytes() == second.read_bytes()
    with tarfile.open(first) as tar:
        assert "tiny/manifest.json" in tar.getnames()


def test_refuses_to_overwrite_foreign_directory(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(BundleError, match="not a simulated bundle"):
        build_bundle(parse_scenario(GOOD), out)
    build_bundle(parse_scenario(GOOD), tmp_path / "sim")
    build_bundle(parse_scenario(GOOD), tmp_path / "sim")
    assert json.loads((tmp_path / "sim" / "manifest.json").read_text())["source"] == "sim"


def test_host_driver_mode(build: Callable[[str], Bundle]) -> None:
    bundle = build("falcon-ai-host-driver")
    assert not any(p["metadata"]["name"].startswith("nvidia-driver-daemonset") for p in bundle.items("pods"))
    assert bundle.items("clusterpolicies")[0]["spec"]["driver"]["enabled"] is False
    marker = bundle.node_file("gpu-wk-01", "files/run/nvidia/validations/driver-ready").read_text()
    assert "IS_HOST_DRIVER=true" in marker and "NVIDIA_DRIVER_ROOT=/\n" in marker
    labels = bundle.node("gpu-wk-01")["metadata"]["labels"]
    assert labels["nvidia.com/gpu.deploy.driver"] == "pre-installed"
    assert bundle.node_file("gpu-wk-01", "cmd/nvidia-smi-q.xml").exists()


def test_legacy_runtime_mode(build: Callable[[str], Bundle]) -> None:
    bundle = build("falcon-ai-legacy-runtime")
    config = bundle.node_file("gpu-wk-01", "files/etc/containerd/config.toml").read_text()
    assert 'default_runtime_name = "nvidia"' in config and "runtimes.nvidia]" in config
    assert not bundle.node_file("gpu-wk-01", "files/etc/containerd/conf.d/99-nvidia.toml").exists()
    operands = [p for p in bundle.items("pods") if p["metadata"]["namespace"] == "gpu-operator"]
    assert operands and not any("runtimeClassName" in p["spec"] for p in operands)


def test_bundles_decode_with_the_project_loader(build: Callable[[str], Bundle]) -> None:
    from gpunode.bundle import load_bundle

    facts = load_bundle(build("falcon-ai-broken").root)
    assert set(facts.nodes) == {"mgmt-01", "mgmt-02", "mgmt-03", "gpu-wk-01", "gpu-wk-02"}
    assert "gpu-wk-02" in facts.node_dirs and facts.cluster_policies
    assert len(facts.workload_pods) == 3
