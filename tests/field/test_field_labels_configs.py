"""Labels and configurations that keep a component away or make it run wrong.

The GPU Operator's per-node deploy labels set to "false" for operands the ClusterPolicy
enables, where nothing else hands the node's GPUs to pods, are why those operands never run
there (NVIDIA/gpu-operator#470); a host driver with gpu.deploy.driver=false is a choice. GFD
writes its CUDA version labels as one map (k8s-device-plugin internal/lm/nvml.go): a node with
part of it was not labelled in full by the GFD running now (NVIDIA/gpu-feature-discovery#75),
while a node with only the older form is an older GFD's. A program that says its configuration
is malformed and falls back to a default runs without it (NVIDIA/dcgm-exporter#51); a fallback
with no error ("No configmap data specified") is its configuration."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from builder import build_case
from case import synthetic_case
from scoreboard import top_pair

from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.diagnose import diagnose

_HOST = {"driver_mode": "host"}


def _top(evidence: list[dict[str, Any]], cluster: dict[str, Any] | None = None,
         platform: str = "generic") -> tuple[str, str] | None:
    return top_pair(synthetic_case("x-labels-configs", evidence, healthy=False, cluster=cluster,
                                   platform=platform))


def test_operands_disabled_by_deploy_labels_are_the_operator_s() -> None:
    evidence: list[dict[str, Any]] = [
        {"kind": "node-labels", "labels": {"nvidia.com/gpu.deploy.container-toolkit": "false",
                                           "nvidia.com/gpu.deploy.device-plugin": "false"}},
        {"kind": "pod-missing", "component": "container-toolkit"},
        {"kind": "pod-missing", "component": "device-plugin"},
    ]
    assert _top(evidence, platform="openshift") == ("gpu-operator", "selector_label_missing")


def test_every_node_whose_deploy_labels_keep_the_plugin_away_is_named(tmp_path: Path) -> None:
    """Two workers with the same disabled labels and no plugin pod: both are reported, each
    with its own finding (a cluster check that stopped at the first node named one)."""
    disabled = {"nvidia.com/gpu.deploy.device-plugin": "false"}
    case = synthetic_case("x-two-nodes", [{"kind": "node-labels", "labels": disabled},
                                          {"kind": "pod-missing", "component": "device-plugin"}],
                          platform="openshift", healthy=False)
    out = build_case(case, tmp_path / "b")
    _copy_labels_and_drop_plugin(out, "gpu-wk-01", "gpu-wk-02")
    report = diagnose(load_bundle(out), read_node_observations)
    found = [rc for rc in report.cluster.root_causes if rc.cause == "selector_label_missing"]
    assert sorted(ev.source for rc in found for ev in rc.evidence) == [
        "node/gpu-wk-01 metadata.labels", "node/gpu-wk-02 metadata.labels"]


def _copy_labels_and_drop_plugin(bundle: Path, source: str, target: str) -> None:
    """Give ``target`` the deploy labels of ``source`` and delete its device plugin pod, as
    the DaemonSet controller does once the node no longer matches."""
    nodes_file, pods_file = bundle / "cluster" / "nodes.json", bundle / "cluster" / "pods.json"
    nodes = json.loads(nodes_file.read_text())
    by_name = {n["metadata"]["name"]: n for n in nodes["items"]}
    wanted = {k: v for k, v in by_name[source]["metadata"]["labels"].items() if ".deploy." in k}
    by_name[target]["metadata"]["labels"].update(wanted)
    nodes_file.write_text(json.dumps(nodes))
    pods = json.loads(pods_file.read_text())
    pods["items"] = [p for p in pods["items"] if not (
        p["spec"].get("nodeName") == target
        and p["metadata"]["name"].startswith("nvidia-device-plugin-daemonset"))]
    pods_file.write_text(json.dumps(pods))


def test_a_host_driver_kept_off_by_its_deploy_label_stays_healthy() -> None:
    evidence: list[dict[str, Any]] = [
        {"kind": "node-labels", "labels": {"nvidia.com/gpu.deploy.driver": "false",
                                           "nvidia.com/gpu.deploy.dcgm-exporter": "false"}},
        {"kind": "pod-missing", "component": "dcgm-exporter"},
    ]
    assert _top(evidence, _HOST) is None


def test_a_part_of_gfd_s_cuda_labels_missing_is_gfd_s() -> None:
    evidence: list[dict[str, Any]] = [
        {"kind": "node-labels", "labels": {"nvidia.com/cuda.driver.major": None,
                                           "nvidia.com/cuda.runtime.major": None}},
    ]
    assert _top(evidence) == ("gfd", "gfd_labels_missing")


def test_an_older_gfd_without_the_version_form_stays_healthy() -> None:
    gone = ("major", "minor", "revision", "full")
    labels: dict[str, Any] = {f"nvidia.com/cuda.driver-version.{k}": None for k in gone}
    labels |= {f"nvidia.com/cuda.runtime-version.{k}": None for k in ("major", "minor", "full")}
    assert _top([{"kind": "node-labels", "labels": labels}]) is None


def _exporter(line: str) -> list[dict[str, Any]]:
    return [
        {"kind": "log", "component": "dcgm-exporter", "container": "nvidia-dcgm-exporter",
         "text": f'time="2024-03-01T10:00:00Z" level=info msg="{line}"\n'},
        {"kind": "pod-state", "component": "dcgm-exporter", "container": "nvidia-dcgm-exporter",
         "state": "Running"},
    ]


def test_a_malformed_config_it_falls_back_from_is_config_invalid() -> None:
    line = "Malformed configmap contents. No metrics found, falling back to metric file " \
           "/etc/dcgm-exporter/default-counters.csv"
    assert _top(_exporter(line), _HOST) == ("dcgm-exporter", "error_config_invalid")


def test_a_fallback_with_no_error_stays_healthy() -> None:
    line = "No configmap data specified, falling back to metric file /etc/dcgm-exporter/default-counters.csv"
    assert _top(_exporter(line), _HOST) is None
