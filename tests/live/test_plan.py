"""Which extras the collector asks for, decided from pod status alone."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from gpunode.collect.plan import (
    by_node,
    containerd_targets,
    exec_targets,
    gpu_nodes,
    log_targets,
    scrape_targets,
    short_nodes,
    stack_pods,
    state_failed_owners,
)
from gpunode.collect.slim import Node, NodePage, Pod, PodPage
from gpunode.collect.targets import IMEX_READ, SYSFS_INFINIBAND_READ


def mini_pods(bundle: Path) -> list[Pod]:
    return list(msgspec.json.decode((bundle / "cluster" / "pods.json").read_bytes(),
                                    type=PodPage).items)


def test_logs_for_failing_restarting_or_stuck_stack_containers_and_the_operator(mini_bundle: Path) -> None:
    targets = log_targets(stack_pods(mini_pods(mini_bundle)))
    assert sorted(t.bundle_path for t in targets) == [
        "logs/gpu-operator/gpu-operator-7c9d6b8f4d-x2k9q/gpu-operator.log",  # acts for the cluster
        "logs/gpu-operator/nvidia-dcgm-exporter-m6r2w/toolkit-validation.log",
        "logs/gpu-operator/nvidia-device-plugin-daemonset-z8c3x/nvidia-device-plugin.log",
        "logs/gpu-operator/nvidia-device-plugin-daemonset-z8c3x/nvidia-device-plugin.previous.log",
    ]


def test_gpu_nodes_exclude_the_control_plane(mini_bundle: Path) -> None:
    nodes = msgspec.json.decode((mini_bundle / "cluster" / "nodes.json").read_bytes(),
                                type=NodePage).items
    table = by_node(stack_pods(mini_pods(mini_bundle)))
    assert gpu_nodes(nodes, table) == ["gpu-wk-01", "gpu-wk-02"]


def test_node_commands_run_in_the_driver_pod(mini_bundle: Path) -> None:
    table = by_node(stack_pods(mini_pods(mini_bundle)))
    execs = exec_targets("gpu-wk-01", table["gpu-wk-01"])
    assert {(t.pod, t.container) for t in execs} == {
        ("nvidia-driver-daemonset-4xk2p", "nvidia-driver-ctr")}
    assert {t.argv: t.bundle_path for t in execs} == {
        ("nvidia-smi", "-q", "-x"): "nodes/gpu-wk-01/cmd/nvidia-smi-q.xml",
        ("nvidia-smi",): "nodes/gpu-wk-01/cmd/nvidia-smi.txt",
        ("dmesg",): "nodes/gpu-wk-01/cmd/dmesg.txt",
        ("lsmod",): "nodes/gpu-wk-01/cmd/lsmod.txt",
        ("nvidia-smi", "nvlink", "-s"): "nodes/gpu-wk-01/cmd/nvidia-smi-nvlink-s.txt",
        ("nvidia-smi", "nvlink", "-e"): "nodes/gpu-wk-01/cmd/nvidia-smi-nvlink-e.txt",
        ("nvidia-smi", "topo", "-m"): "nodes/gpu-wk-01/cmd/nvidia-smi-topo-m.txt",
        ("sh", "-c", SYSFS_INFINIBAND_READ): "nodes/gpu-wk-01/cmd/sysfs-infiniband.txt",
        ("sh", "-c", IMEX_READ): "nodes/gpu-wk-01/cmd/imex.txt",
        ("cat", "/proc/driver/nvidia/version"): "nodes/gpu-wk-01/files/proc/driver/nvidia/version",
        ("tar", "-C", "/run/nvidia/validations", "-cf", "-", "."):
            "nodes/gpu-wk-01/files/run/nvidia/validations",
    }


def test_host_driver_falls_back_to_the_device_plugin_without_dmesg(mini_bundle: Path) -> None:
    table = by_node(stack_pods(mini_pods(mini_bundle)))
    components = {k: v for k, v in table["gpu-wk-01"].items() if k != "driver"}
    execs = exec_targets("gpu-wk-01", components)
    assert {t.pod for t in execs} == {"nvidia-device-plugin-daemonset-h5t6v"}
    assert ("dmesg",) not in {t.argv for t in execs}  # the plugin is not privileged
    assert ("nvidia-smi", "-q", "-x") in {t.argv for t in execs}


def test_containerd_config_is_named_by_its_host_path(mini_bundle: Path) -> None:
    table = by_node(stack_pods(mini_pods(mini_bundle)))
    cats = containerd_targets("gpu-wk-02", table["gpu-wk-02"])
    assert [(t.argv, t.bundle_path) for t in cats] == [
        (("cat", "/runtime/config-dir/config.toml"),
         "nodes/gpu-wk-02/files/etc/containerd/config.toml"),
        (("cat", "/runtime/config-dir.d/99-nvidia.toml"),
         "nodes/gpu-wk-02/files/etc/containerd/conf.d/99-nvidia.toml"),
    ]


def test_scrapes_skip_exporters_that_are_not_running(mini_bundle: Path) -> None:
    table = by_node(stack_pods(mini_pods(mini_bundle)))
    assert [(t.pod, t.port) for t in scrape_targets("gpu-wk-01", table["gpu-wk-01"])] == [
        ("nvidia-dcgm-exporter-k3p9d", 9400), ("prometheus-node-exporter-x7d2f", 9100)]
    assert [t.pod for t in scrape_targets("gpu-wk-02", table["gpu-wk-02"])] == [
        "prometheus-node-exporter-p4s9l"]


def test_running_device_plugins_are_read_where_devices_are_missing(mini_bundle: Path) -> None:
    nodes = msgspec.json.decode((mini_bundle / "cluster" / "nodes.json").read_bytes(),
                                type=NodePage).items
    assert short_nodes(nodes) == set()
    short = msgspec.structs.replace(nodes[1].status, allocatable={"nvidia.com/gpu": "0"})
    assert short_nodes([msgspec.structs.replace(nodes[1], status=short)]) == {"gpu-wk-01"}
    stack = stack_pods(mini_pods(mini_bundle))
    extra = set(log_targets(stack, short={"gpu-wk-01"})) - set(log_targets(stack))
    assert {t.bundle_path for t in extra} == {
        "logs/gpu-operator/nvidia-device-plugin-daemonset-h5t6v/nvidia-device-plugin.log"}


# (state label, failed value, healthy value, owner, DaemonSet and pod label, image, container):
# the GPU Operator's manifests (assets/state-mig-manager, state-vgpu-device-manager,
# state-cc-manager) and the owners' code that sets the label.
_STATE_OWNERS = [
    ("nvidia.com/mig.config.state", "success", "mig-manager", "nvidia-mig-manager",
     {"app": "nvidia-mig-manager"}, "nvcr.io/nvidia/cloud-native/k8s-mig-manager:v0.12.1"),
    ("nvidia.com/vgpu.config.state", "success", "vgpu-device-manager", "nvidia-vgpu-device-manager",
     {"app": "nvidia-vgpu-device-manager"}, "nvcr.io/nvidia/cloud-native/vgpu-device-manager:v0.5.0"),
    ("nvidia.com/cc.mode.state", "on", "cc-manager", "nvidia-cc-manager",
     {"name": "nvidia-cc-manager"}, "nvcr.io/nvidia/cloud-native/k8s-cc-manager:v0.4.3"),
]


@pytest.mark.parametrize("case", _STATE_OWNERS, ids=[o[2] for o in _STATE_OWNERS])
def test_running_owner_is_read_where_its_state_label_says_failed(
        mini_bundle: Path, case: tuple[str, str, str, str, dict[str, str], str]) -> None:
    label, fine, owner, name, labels, image = case
    nodes = msgspec.json.decode((mini_bundle / "cluster" / "nodes.json").read_bytes(),
                                type=NodePage).items
    assert state_failed_owners(nodes) == {}

    def labelled(value: str) -> Node:
        meta = msgspec.structs.replace(nodes[1].metadata, labels={**nodes[1].metadata.labels, label: value})
        return msgspec.structs.replace(nodes[1], metadata=meta)

    assert state_failed_owners([labelled(fine)]) == {}
    failed = state_failed_owners([labelled("failed")])
    assert failed == {"gpu-wk-01": frozenset({owner})}
    pods = mini_pods(mini_bundle)
    pod = msgspec.json.decode(json.dumps({
        "metadata": {"name": f"{name}-q2w8e", "namespace": "gpu-operator", "labels": labels,
                     "ownerReferences": [{"kind": "DaemonSet", "name": name}]},
        "spec": {"nodeName": "gpu-wk-01", "containers": [{"name": name, "image": image}]},
        "status": {"phase": "Running", "containerStatuses": [
            {"name": name, "ready": True, "restartCount": 0,
             "state": {"running": {"startedAt": "2025-06-11T10:00:00Z"}}}]},
    }), type=Pod)
    stack = stack_pods([*pods, pod])
    assert [e.component for e in stack if e.pod is pod] == [owner]
    assert set(log_targets(stack, failed=state_failed_owners([labelled(fine)]))) == set(log_targets(stack))
    extra = set(log_targets(stack, failed=failed)) - set(log_targets(stack))
    assert {t.bundle_path for t in extra} == {f"logs/gpu-operator/{name}-q2w8e/{name}.log"}


def test_the_operator_log_comes_whichever_nodes_are_asked_for(mini_bundle: Path) -> None:
    stack = stack_pods(mini_pods(mini_bundle))
    assert [t.bundle_path for t in log_targets(stack, ["gpu-wk-01"])] == [
        "logs/gpu-operator/gpu-operator-7c9d6b8f4d-x2k9q/gpu-operator.log"]
