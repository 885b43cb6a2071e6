"""The component catalog is valid data and every locator really recognises pods."""

from __future__ import annotations

import pytest

from gpunode.catalog import Recogniser, load_catalog, parse_catalog, topological_order
from gpunode.errors import BundleError

BRIEF_IDS = {
    "kernel",
    "gpu-hardware",
    "container-runtime",
    "kubelet",
    "driver",
    "fabric-manager",
    "ofed",
    "sriov-device-plugin",
    "container-toolkit",
    "rdma-device-plugin",
    "device-plugin",
    "gfd",
    "nfd",
    "mig-manager",
    "csi-node",
    "dcgm-exporter",
    "node-exporter",
    "logging-agent",
    "otel-agent",
    "gpu-operator",
    "network-operator",
    "validator",
    # interconnect (issue 26)
    "nvlink-fabric",
    "imex",
    "rdma-links",
    "gpudirect-rdma",
    # the other ways to hand out GPUs (issue 21, item 4)
    "dra-kubelet-plugin",
    "compute-domain-daemon",
    "hami-device-plugin",
    "volcano-device-plugin",
    "gke-device-plugin",
    "dra-controller",
    "hami-scheduler",
    # VM-passthrough nodes: GPU Operator sandbox operands (issue 21, item 4)
    "vfio-manager",
    "sandbox-device-plugin",
    # the SR-IOV Network Operator's config daemon (SR-IOV nodes' VFs)
    "sriov-config-daemon",
    # the GPU Operator's sandbox-workload managers: vGPU devices, Confidential Computing mode,
    # Kata runtime classes
    "vgpu-device-manager", "cc-manager", "kata-manager",
}


def test_catalog_has_exactly_the_brief_ids() -> None:
    assert set(load_catalog().ids) == BRIEF_IDS


def test_dependencies_point_downwards_or_sideways() -> None:
    catalog = load_catalog()
    for comp in catalog.components:
        for dep in comp.depends_on:
            assert catalog.get(dep).layer <= comp.layer, (comp.id, dep)


def test_topological_order_puts_dependencies_first() -> None:
    catalog = load_catalog()
    order = topological_order(catalog.components)
    for comp in catalog.components:
        for dep in comp.depends_on:
            assert order.index(dep) < order.index(comp.id)


def test_documented_edges() -> None:
    catalog = load_catalog()
    assert "driver" in catalog.get("container-toolkit").depends_on
    assert "container-toolkit" in catalog.get("device-plugin").depends_on
    assert {"container-toolkit", "nfd"} <= set(catalog.get("gfd").depends_on)
    assert "ofed" in catalog.get("rdma-device-plugin").depends_on
    assert {"kernel", "gpu-hardware"} <= set(catalog.get("driver").depends_on)
    operands = ["driver", "container-toolkit", "device-plugin", "gfd", "dcgm-exporter", "validator"]
    assert all(catalog.get(o).deployed_by == "gpu-operator" for o in operands)


def _pod_for(kind: str, value: str) -> tuple[list[str], dict[str, str], list[tuple[str, str]]]:
    if kind == "daemonset":
        return [value.replace("*", "x")], {}, []
    if kind == "label":
        key, _, val = value.partition("=")
        return [], {key: val}, []
    if kind == "container":
        return [], {}, [(value, "registry.example/unrelated:1")]
    return [], {}, [("c", value)]


IMAGE_SAMPLES = {
    "driver": "nvcr.io/nvidia/driver:570.133.20-ubuntu22.04",
    "ofed": "nvcr.io/nvidia/mellanox/doca-driver:25.01-0.6.0.0-0",
    "sriov-device-plugin": "ghcr.io/k8snetworkplumbingwg/sriov-network-device-plugin:v3.9.0",
    "sriov-config-daemon": "ghcr.io/k8snetworkplumbingwg/sriov-network-operator-config-daemon:v1.5.0",
    "container-toolkit": "nvcr.io/nvidia/k8s/container-toolkit:v1.17.5-ubuntu20.04",
    "rdma-device-plugin": "nvcr.io/nvidia/mellanox/k8s-rdma-shared-dev-plugin:v1.5.2",
    "device-plugin": "nvcr.io/nvidia/k8s-device-plugin:v0.17.1",
    "gfd": "nvcr.io/nvidia/gpu-feature-discovery:v0.8.2",
    "nfd": "registry.k8s.io/nfd/node-feature-discovery:v0.17.2",
    "mig-manager": "nvcr.io/nvidia/cloud-native/k8s-mig-manager:v0.12.1-ubuntu20.04",
    "csi-node": "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.12.0",
    "dcgm-exporter": "nvcr.io/nvidia/k8s/dcgm-exporter:4.1.1-4.0.4-ubuntu22.04",
    "node-exporter": "quay.io/prometheus/node-exporter:v1.8.2",
    "logging-agent": "cr.fluentbit.io/fluent/fluent-bit:3.2.4",
    "otel-agent": "otel/opentelemetry-collector-contrib:0.116.0",
    "gpu-operator": "nvcr.io/nvidia/gpu-operator:v25.3.0",
    "network-operator": "nvcr.io/nvidia/cloud-native/network-operator:v25.1.0",
    "validator": "nvcr.io/nvidia/cloud-native/gpu-operator-validator:v25.3.0",
    # values.yaml of nvidia-dra-driver-gpu: nvcr.io/nvidia/k8s-dra-driver-gpu, tag v<appVersion>
    "dra-kubelet-plugin": "nvcr.io/nvidia/k8s-dra-driver-gpu:v25.12.0",
    "hami-device-plugin": "docker.io/projecthami/hami:v2.6.1",
    "volcano-device-plugin": "volcanosh/volcano-device-plugin:latest",
    "gke-device-plugin": (
        "gcr.io/gke-release/nvidia-gpu-device-plugin"
        "@sha256:d6cb575b0d8a436066a0d3a783bbaf84697e0d5a68857edfe5fd5d1183133c7d"
    ),
    # gpu-operator values: vfioManager image vfio-manager (older releases ran cuda), sandboxDevicePlugin
    "vfio-manager": "nvcr.io/nvidia/vfio-manager:v0.4.0",
    "sandbox-device-plugin": "nvcr.io/nvidia/kubevirt-gpu-device-plugin:v1.3.1",
    # gpu-operator values: vgpuDeviceManager, ccManager, and the last kataManager image it shipped
    "vgpu-device-manager": "nvcr.io/nvidia/cloud-native/vgpu-device-manager:v0.5.0",
    "cc-manager": "nvcr.io/nvidia/cloud-native/k8s-cc-manager:v0.4.3",
    "kata-manager": "nvcr.io/nvidia/cloud-native/k8s-kata-manager:v0.2.3",
}


def test_the_kata_sandbox_device_plugin_is_the_sandbox_device_plugin() -> None:
    # gpu-operator values kataSandboxDevicePlugin (assets/state-kata-device-plugin)
    rec = Recogniser(load_catalog())
    image = "nvcr.io/nvidia/cloud-native/nvidia-sandbox-device-plugin:v0.0.5"
    assert rec.component_of([], {}, [("c", image)]) == "sandbox-device-plugin"


def test_every_locator_recognises_its_component() -> None:
    catalog = load_catalog()
    rec = Recogniser(catalog)
    for comp in catalog.components:
        locators = [
            *(("daemonset", d) for d in comp.daemonsets),
            *(("label", lbl) for lbl in comp.pod_labels),
            *(("container", c) for c in comp.containers),
        ]
        for kind, value in locators:
            owners, labels, containers = _pod_for(kind, value)
            assert rec.component_of(owners, labels, containers) == comp.id, (comp.id, kind, value)
        if comp.images:
            image = IMAGE_SAMPLES[comp.id]
            assert rec.component_of([], {}, [("c", image)]) == comp.id, (comp.id, image)


def test_logging_agents_are_recognised_by_image_under_any_release_name() -> None:
    rec = Recogniser(load_catalog())
    for image in (
        "grafana/promtail:3.0.0",
        "timberio/vector:0.43.1-distroless-libc",
        "grafana/alloy:v1.5.1",
        "fluent/fluentd-kubernetes-daemonset:v1.17",
    ):
        assert rec.component_of(["my-renamed-release"], {}, [("agent", image)]) == "logging-agent", image


def test_unrelated_pod_is_not_part_of_the_stack() -> None:
    rec = Recogniser(load_catalog())
    assert (
        rec.component_of(
            ["coredns"], {"k8s-app": "kube-dns"}, [("coredns", "registry.k8s.io/coredns/coredns:v1.11.3")]
        )
        is None
    )


def test_cycle_is_rejected_with_the_file_name() -> None:
    text = """
[[component]]
id = "a"
layer = 0
title = "A"
purpose = "a"
kind = "host"
required = true
depends_on = ["b"]
[[component]]
id = "b"
layer = 0
title = "B"
purpose = "b"
kind = "host"
required = true
depends_on = ["a"]
"""
    with pytest.raises(BundleError, match=r"my\.toml: .*cycle"):
        parse_catalog(text, "my.toml")


def test_unknown_field_is_rejected() -> None:
    text = (
        '[[component]]\nid="a"\nlayer=0\ntitle="A"\npurpose="a"\nkind="host"\nrequired=true\ncolour="red"\n'
    )
    with pytest.raises(BundleError, match="colour"):
        parse_catalog(text)


def test_the_shipped_catalogs_patterns_compile() -> None:
    """The command loads the shipped catalog without compiling each pattern on its own
    (``load_catalog``); the full check runs here."""
    from importlib import resources

    text = resources.files("gpunode").joinpath("data/components.toml").read_text("utf-8")
    assert parse_catalog(text).components == load_catalog().components


def test_a_pattern_that_does_not_compile_is_rejected_with_the_file_name() -> None:
    text = ('[[component]]\nid="a"\nlayer=0\ntitle="A"\npurpose="a"\nkind="host"\nrequired=true\n'
            'named_by=["(unclosed"]\n')
    with pytest.raises(BundleError, match=r"my\.toml: "):
        parse_catalog(text, "my.toml")


@pytest.mark.parametrize("image", [
    "ghcr.io/k8snetworkplumbingwg/sriov-network-operator-config-daemon:v1.5.0",
    "nvcr.io/nvidia/mellanox/sriov-network-operator-config-daemon:network-operator-25.4.0",
    "registry.redhat.io/openshift4/ose-sriov-network-config-daemon-rhel9@sha256:0123",
])
def test_the_sriov_config_daemon_is_known_by_its_images(image: str) -> None:
    """Upstream's, NVIDIA's and OpenShift's images of the config daemon; the operator's own and
    the device plugin's images are not it."""
    rec = Recogniser(load_catalog())
    assert rec.component_of([], {}, [("c", image)]) == "sriov-config-daemon"


@pytest.mark.parametrize("image", [
    "ghcr.io/k8snetworkplumbingwg/sriov-network-operator:v1.5.0",
    "ghcr.io/k8snetworkplumbingwg/sriov-network-device-plugin:v3.9.0",
])
def test_the_sriov_operator_and_plugin_images_are_not_the_config_daemon(image: str) -> None:
    assert Recogniser(load_catalog()).component_of([], {}, [("c", image)]) != "sriov-config-daemon"


def test_reported_absent_false_needs_an_optional_pod_component() -> None:
    """Only an optional pod-run node component may be left out of a report where absent: a
    required one that is missing is a failure, and a host or cluster one has no pod."""
    entry = """
[[component]]
id = "a"
layer = 0
title = "A"
purpose = "x"
kind = "{kind}"
required = {required}
reported_absent = false
"""
    parse_catalog(entry.format(kind="pod", required="false"))
    for kind, required in (("pod", "true"), ("host", "false")):
        with pytest.raises(BundleError, match="reported_absent"):
            parse_catalog(entry.format(kind=kind, required=required))
