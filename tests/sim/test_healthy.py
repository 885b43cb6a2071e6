"""The healthy `falcon-ai` bundle: shape, consistency and determinism."""

from __future__ import annotations

import hashlib
import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import msgspec
from sim_helpers import Bundle, condition, status_of

from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.diagnose import diagnose
from gpunode.sim import build_bundle, load_scenario

GPU_NODES = ("gpu-wk-01", "gpu-wk-02")
LISTS = (
    "nodes",
    "pods",
    "daemonsets",
    "deployments",
    "events",
    "clusterpolicies",
    "nicclusterpolicies",
    "runtimeclasses",
    "csidrivers",
    "csinodes",
    "storageclasses",
    "services",
    "persistentvolumeclaims",
    "servicemonitors",
    "configmaps",
)


def _tree_digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_same_scenario_gives_byte_identical_bundles(tmp_path: Path) -> None:
    scenario = load_scenario("falcon-ai")
    first = _tree_digest(build_bundle(scenario, tmp_path / "a"))
    second = _tree_digest(build_bundle(scenario, tmp_path / "b"))
    assert first == second
    assert len(first) > 50


def test_every_cluster_file_is_a_kubectl_list(build: Callable[[str], Bundle]) -> None:
    bundle = build("falcon-ai")
    for name in LISTS:
        data = json.loads((bundle.root / "cluster" / f"{name}.json").read_text())
        assert data["kind"] == "List" and data["apiVersion"] == "v1", name
        for item in data["items"]:
            assert item["kind"] and item["apiVersion"] and item["metadata"]["name"], name
    version = json.loads((bundle.root / "cluster" / "version.json").read_text())
    assert (version["major"], version["minor"], version["gitVersion"]) == ("1", "31", "v1.31.4")


def test_manifest_names_cluster_and_source(build: Callable[[str], Bundle]) -> None:
    manifest = json.loads((build("falcon-ai").root / "manifest.json").read_text())
    assert manifest["format"] == "gpunode-bundle/v1"
    assert manifest["source"] == "sim"
    assert manifest["cluster_name"] == "falcon-ai"
    assert manifest["api_server"] == "https://api.falcon.example.com:6443"
    assert manifest["partial"] is False


def test_daemonset_status_matches_its_pods(build: Callable[[str], Bundle]) -> None:
    bundle = build("falcon-ai")
    pods = bundle.items("pods")
    for ds in bundle.items("daemonsets"):
        md = ds["metadata"]
        owned = [
            p
            for p in pods
            if p["metadata"]["namespace"] == md["namespace"]
            and any(
                r["kind"] == "DaemonSet" and r["uid"] == md["uid"]
                for r in p["metadata"].get("ownerReferences", [])
            )
            and p["metadata"]["labels"].get("pod-template-generation")
        ]
        ready = [p for p in owned if condition(p, "Ready")["status"] == "True"]
        assert ds["status"]["currentNumberScheduled"] == len(owned), md["name"]
        assert ds["status"]["numberReady"] == len(ready), md["name"]
        assert ds["status"]["desiredNumberScheduled"] == len(owned), md["name"]


def test_control_planes_are_tainted_and_gpu_workers_fully_labelled(build: Callable[[str], Bundle]) -> None:
    bundle = build("falcon-ai")
    cp = bundle.node("mgmt-01")
    assert cp["metadata"]["labels"]["node-role.kubernetes.io/control-plane"] == ""
    assert cp["spec"]["taints"] == [{"effect": "NoSchedule", "key": "node-role.kubernetes.io/control-plane"}]
    node = bundle.node("gpu-wk-01")
    labels = node["metadata"]["labels"]
    assert labels["feature.node.kubernetes.io/pci-10de.present"] == "true"
    assert labels["feature.node.kubernetes.io/pci-15b3.present"] == "true"
    assert labels["nvidia.com/gpu.present"] == "true"
    assert labels["nvidia.com/gpu.deploy.driver"] == "true"
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3"
    assert labels["nvidia.com/gpu.count"] == "8"
    assert labels["network.nvidia.com/operator.mofed.wait"] == "false"
    assert node["status"]["allocatable"]["nvidia.com/gpu"] == "8"
    assert node["status"]["allocatable"]["rdma/rdma_shared_device_a"] == "63"
    ready = condition(node, "Ready")
    assert (ready["status"], ready["reason"], ready["message"]) == (
        "True",
        "KubeletReady",
        "kubelet is posting ready status",
    )
    assert node["status"]["nodeInfo"]["containerRuntimeVersion"] == "containerd://1.7.24"


def test_gpu_stack_pods_run_on_each_gpu_node(build: Callable[[str], Bundle]) -> None:
    bundle = build("falcon-ai")
    prefixes = (
        "nvidia-driver-daemonset-",
        "nvidia-container-toolkit-daemonset-",
        "nvidia-device-plugin-daemonset-",
        "gpu-feature-discovery-",
        "nvidia-dcgm-exporter-",
        "nvidia-mig-manager-",
        "nvidia-operator-validator-",
        "mofed-ubuntu22.04-",
        "rdma-shared-dp-ds-",
        "csi-nfs-node-",
        "cilium-",
        "kube-proxy-",
    )
    for node in GPU_NODES:
        for prefix in prefixes:
            pod = bundle.pod_on(node, prefix)
            assert pod["status"]["phase"] == "Running", prefix
            assert condition(pod, "Ready")["status"] == "True", prefix
        for prefix in ("nvidia-cuda-validator-", "nvidia-device-plugin-validator-"):
            assert bundle.pod_on(node, prefix)["status"]["phase"] == "Succeeded"
    driver = bundle.pod_on("gpu-wk-01", "nvidia-driver-daemonset-")
    assert [c["name"] for c in driver["spec"]["initContainers"]] == ["k8s-driver-manager"]
    assert [c["name"] for c in driver["spec"]["containers"]] == ["nvidia-driver-ctr", "nvidia-peermem-ctr"]
    plugin = bundle.pod_on("gpu-wk-01", "nvidia-device-plugin-daemonset-")
    assert plugin["spec"]["runtimeClassName"] == "nvidia"
    assert plugin["metadata"]["ownerReferences"][0]["name"] == "nvidia-device-plugin-daemonset"


def test_healthy_logs_carry_success_lines(build: Callable[[str], Bundle]) -> None:
    bundle = build("falcon-ai")
    node = "gpu-wk-01"
    assert (
        bundle.log(bundle.pod_on(node, "nvidia-driver-daemonset-"), "nvidia-driver-ctr")
        .rstrip()
        .endswith("Done, now waiting for signal")
    )
    assert "Registered device plugin for 'nvidia.com/gpu' with Kubelet" in bundle.log(
        bundle.pod_on(node, "nvidia-device-plugin-daemonset-"), "nvidia-device-plugin"
    )
    assert "all validations are successful" in bundle.log(
        bundle.pod_on(node, "nvidia-operator-validator-"), "nvidia-operator-validator"
    )
    assert 'exposing "63" devices' in bundle.log(bundle.pod_on(node, "rdma-shared-dp-ds-"), "rdma-shared-dp")


def test_nvidia_smi_xml_describes_eight_h100s(build: Callable[[str], Bundle]) -> None:
    text = build("falcon-ai").node_file("gpu-wk-01", "cmd/nvidia-smi-q.xml").read_text()
    root = ET.fromstring(text.split("\n", 2)[2])
    gpus = root.findall("gpu")
    assert root.findtext("attached_gpus") == "8" and len(gpus) == 8
    assert [g.get("id") for g in gpus][:3] == ["00000000:18:00.0", "00000000:2A:00.0", "00000000:3A:00.0"]
    assert {g.findtext("product_name") for g in gpus} == {"NVIDIA H100 80GB HBM3"}
    assert len({g.findtext("uuid") for g in gpus}) == 8
    assert {g.findtext("fabric/state") for g in gpus} == {"Completed"}
    assert {g.findtext("fb_memory_usage/total") for g in gpus} == {"81559 MiB"}


def test_nvidia_smi_xml_parses_with_project_parser(build: Callable[[str], Bundle]) -> None:
    from gpunode.parse.nvidia_smi import parse_nvidia_smi_xml

    report = parse_nvidia_smi_xml(
        build("falcon-ai").node_file("gpu-wk-02", "cmd/nvidia-smi-q.xml").read_text()
    )
    assert report.attached_gpus == 8 and report.driver_version == "570.133.20"
    assert all(g.fabric_state == "Completed" and g.ecc_volatile_dbe == 0 for g in report.gpus)


def test_node_files_show_a_patched_runtime_and_all_markers(build: Callable[[str], Bundle]) -> None:
    bundle = build("falcon-ai")
    drop_in = bundle.node_file("gpu-wk-01", "files/etc/containerd/conf.d/99-nvidia.toml").read_text()
    assert '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]' in drop_in
    assert "enable_cdi = true" in drop_in
    top = bundle.node_file("gpu-wk-01", "files/etc/containerd/config.toml").read_text()
    assert 'imports = ["/etc/containerd/conf.d/*.toml"]' in top and 'default_runtime_name = "runc"' in top
    markers = bundle.node_file("gpu-wk-01", "files/run/nvidia/validations")
    assert {p.name for p in markers.iterdir()} >= {
        ".driver-ctr-ready",
        "driver-ready",
        "toolkit-ready",
        "cuda-ready",
        "plugin-ready",
    }
    assert "IS_HOST_DRIVER=false" in (markers / "driver-ready").read_text()
    dmesg = bundle.node_file("gpu-wk-01", "cmd/dmesg.txt").read_text()
    assert "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  570.133.20" in dmesg
    assert "Xid" not in dmesg


def test_metrics_have_per_gpu_series_and_infiniband_ports(build: Callable[[str], Bundle]) -> None:
    bundle = build("falcon-ai")
    dcgm = bundle.node_file("gpu-wk-01", "metrics/dcgm-exporter.prom").read_text()
    temps = [line for line in dcgm.splitlines() if line.startswith("DCGM_FI_DEV_GPU_TEMP{")]
    assert len(temps) == 8
    assert all('Hostname="gpu-wk-01"' in t and 'DCGM_FI_DRIVER_VERSION="570.133.20"' in t for t in temps)
    node = bundle.node_file("gpu-wk-01", "metrics/node-exporter.prom").read_text()
    assert 'node_infiniband_rate_bytes_per_second{device="mlx5_1",port="1"} 5e+10' in node
    assert 'node_infiniband_state_id{device="mlx5_0",port="1"} 4' in node
    assert 'node_infiniband_physical_state_id{device="mlx5_0",port="1"} 5' in node


def test_workloads_request_gpus_and_map_to_dcgm_series(build: Callable[[str], Bundle]) -> None:
    bundle = build("falcon-ai")
    trainers = [p for p in bundle.items("pods") if p["metadata"]["namespace"] == "ml"]
    assert len(trainers) == 3 and all(p["status"]["phase"] == "Running" for p in trainers)
    assert all(p["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "4" for p in trainers)
    on_wk1 = [p["metadata"]["name"] for p in trainers if p["spec"]["nodeName"] == "gpu-wk-01"]
    dcgm = bundle.node_file("gpu-wk-01", "metrics/dcgm-exporter.prom").read_text()
    assert all(f'pod="{name}"' in dcgm for name in on_wk1)


def test_operator_objects_report_ready(build: Callable[[str], Bundle]) -> None:
    bundle = build("falcon-ai")
    policy = bundle.items("clusterpolicies")[0]
    assert policy["metadata"]["name"] == "cluster-policy" and policy["status"]["state"] == "ready"
    assert condition(policy, "Ready")["status"] == "True" and condition(policy, "Error")["status"] == "False"
    ncp = bundle.items("nicclusterpolicies")[0]
    assert ncp["status"]["state"] == "ready" and condition(ncp, "OFEDDriverReady")["status"] == "True"
    assert {r["metadata"]["name"] for r in bundle.items("runtimeclasses")} == {
        "nvidia",
        "nvidia-cdi",
        "nvidia-legacy",
    }
    classes = bundle.items("storageclasses")
    assert classes[0]["metadata"]["annotations"]["storageclass.kubernetes.io/is-default-class"] == "true"
    assert all(p["status"]["phase"] == "Bound" for p in bundle.items("persistentvolumeclaims"))
    svc = next(s for s in bundle.items("services") if s["metadata"]["name"] == "nvidia-dcgm-exporter")
    assert svc["spec"]["ports"][0] == {
        "name": "gpu-metrics",
        "port": 9400,
        "protocol": "TCP",
        "targetPort": 9400,
    }
    csinode = next(c for c in bundle.items("csinodes") if c["metadata"]["name"] == "gpu-wk-01")
    assert csinode["spec"]["drivers"][0]["name"] == "nfs.csi.k8s.io"


def test_container_status_has_kubelet_shape(build: Callable[[str], Bundle]) -> None:
    pod = build("falcon-ai").pod_on("gpu-wk-01", "nvidia-operator-validator-")
    init = status_of(pod, "cuda-validation")
    assert init["state"]["terminated"]["reason"] == "Completed" and init["ready"] is True
    main = status_of(pod, "nvidia-operator-validator")
    assert main["started"] is True and "running" in main["state"] and main["restartCount"] == 0
    assert main["imageID"].startswith("nvcr.io/nvidia/cloud-native/gpu-operator-validator@sha256:")


def test_sriov_device_plugin_is_opt_in_and_healthy_when_enabled(tmp_path: Path) -> None:
    """A NicClusterPolicy with a sriovDevicePlugin section runs the plugin on every node with a
    Mellanox NIC; the cluster stays healthy and the plugin's log shows its registration."""
    base = load_scenario("falcon-ai")
    assert "sriov-device-plugin" not in base.cluster.components
    cluster = msgspec.structs.replace(
        base.cluster, components=(*base.cluster.components, "sriov-device-plugin")
    )
    bundle = Bundle(build_bundle(msgspec.structs.replace(base, cluster=cluster), tmp_path / "b"))
    for node in GPU_NODES:
        pod = bundle.pod_on(node, "network-operator-sriov-device-plugin-")
        assert pod["metadata"]["labels"]["app"] == "sriovdp"
        assert "registered successfully at Kubelet" in bundle.log(pod, "kube-sriovdp")
        assert bundle.node(node)["status"]["allocatable"]["nvidia.com/hostdev"] == "2"
    policy = bundle.items("nicclusterpolicies")[0]
    assert {"name": "state-SRIOV-device-plugin", "state": "ready"} in policy["status"]["appliedStates"]
    configs = {c["metadata"]["name"]: c for c in bundle.items("configmaps")}
    config = configs["network-operator-sriovdp-config"]
    assert config["data"]["config.json"] == policy["spec"]["sriovDevicePlugin"]["config"]
    report = diagnose(load_bundle(bundle.root), read_node_observations)
    assert not report.cluster.root_causes and not any(n.root_causes for n in report.nodes)
    assert all(
        c.status == "ok" for n in report.nodes for c in n.components if c.component == "sriov-device-plugin"
    )
