"""Hardware and software versions the simulator dresses nodes with."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GpuModel:
    """Facts about one GPU model that show up in labels, nvidia-smi and metrics."""

    product: str
    label: str
    memory_mib: int
    reserved_mib: int
    pci_device_id: str
    subsystem_id: str
    board_part: str
    gpu_part: str
    vbios: str
    power_limit_w: int
    max_sm_mhz: int
    mem_mhz: int
    compute: tuple[int, int]
    family: str
    machine: str
    hgx: bool


GPU_MODELS: dict[str, GpuModel] = {
    "H100-SXM-80GB": GpuModel(
        "NVIDIA H100 80GB HBM3",
        "NVIDIA-H100-80GB-HBM3",
        81559,
        551,
        "233010DE",
        "16C110DE",
        "692-2G520-0200-000",
        "2330-885-A1",
        "96.00.99.00.01",
        700,
        1980,
        2619,
        (9, 0),
        "hopper",
        "PowerEdge-XE9680",
        True,
    ),
    "H200-SXM-141GB": GpuModel(
        "NVIDIA H200",
        "NVIDIA-H200",
        143771,
        616,
        "233510DE",
        "18BF10DE",
        "692-2G520-0280-000",
        "2335-895-A1",
        "96.00.A5.00.1A",
        700,
        1980,
        3201,
        (9, 0),
        "hopper",
        "PowerEdge-XE9680",
        True,
    ),
    "A100-SXM4-80GB": GpuModel(
        "NVIDIA A100-SXM4-80GB",
        "NVIDIA-A100-SXM4-80GB",
        81920,
        544,
        "20B210DE",
        "147F10DE",
        "692-2G506-0210-002",
        "2330-884-A1",
        "92.00.36.00.02",
        400,
        1410,
        1593,
        (8, 0),
        "ampere",
        "DGX-A100",
        True,
    ),
}


@dataclass(frozen=True)
class OsInfo:
    """OS identity as NFD labels and the kubelet's nodeInfo show it."""

    os_id: str
    version_id: str
    pretty: str
    driver_tag: str


OS_INFO: dict[str, OsInfo] = {
    "ubuntu22.04": OsInfo("ubuntu", "22.04", "Ubuntu 22.04.5 LTS", "ubuntu22.04"),
    "ubuntu24.04": OsInfo("ubuntu", "24.04", "Ubuntu 24.04.2 LTS", "ubuntu24.04"),
    "rhel9.4": OsInfo("rhel", "9.4", "Red Hat Enterprise Linux 9.4 (Plow)", "rhel9.4"),
}

DRIVER_VERSION = "570.133.20"
CUDA_VERSION = "12.8"
DOCA_DRIVER_VERSION = "25.01-0.6.0.0-0"
RUNTIME_VERSIONS = {
    "containerd": "containerd://1.7.24",
    "containerd2": "containerd://2.0.2",
    "crio": "cri-o://1.31.3",
}

# NicClusterPolicy.spec.sriovDevicePlugin.config: VFs of NVIDIA NICs as nvidia.com/hostdev.
SRIOV_DP_CONFIG = (
    '{"resourceList": [{"resourcePrefix": "nvidia.com", "resourceName": "hostdev", '
    '"selectors": {"vendors": ["15b3"], "isRdma": true}}]}'
)

IMAGES = {
    "gpu-operator": "nvcr.io/nvidia/gpu-operator:v25.3.0",
    "validator": "nvcr.io/nvidia/cloud-native/gpu-operator-validator:v25.3.0",
    "driver-manager": "nvcr.io/nvidia/cloud-native/k8s-driver-manager:v0.8.0",
    "toolkit": "nvcr.io/nvidia/k8s/container-toolkit:v1.17.5-ubuntu20.04",
    "device-plugin": "nvcr.io/nvidia/k8s-device-plugin:v0.17.1",
    "dcgm-exporter": "nvcr.io/nvidia/k8s/dcgm-exporter:4.1.1-4.0.4-ubuntu22.04",
    "mig-manager": "nvcr.io/nvidia/cloud-native/k8s-mig-manager:v0.12.1-ubuntu20.04",
    "nfd": "registry.k8s.io/nfd/node-feature-discovery:v0.17.2",
    "network-operator": "nvcr.io/nvidia/cloud-native/network-operator:v25.1.0",
    "network-operator-init": "nvcr.io/nvidia/cloud-native/network-operator-init-container:v0.0.3",
    "rdma-shared-dp": "nvcr.io/nvidia/mellanox/k8s-rdma-shared-dev-plugin:network-operator-v25.1.0",
    "sriov-dp": "ghcr.io/k8snetworkplumbingwg/sriov-network-device-plugin:v3.9.0",
    "node-exporter": "quay.io/prometheus/node-exporter:v1.8.2",
    "fluent-bit": "cr.fluentbit.io/fluent/fluent-bit:3.2.2",
    "otel": "otel/opentelemetry-collector-k8s:0.115.1",
    "csi-liveness": "registry.k8s.io/sig-storage/livenessprobe:v2.14.0",
    "csi-registrar": "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.12.0",
    "csi-nfs": "registry.k8s.io/sig-storage/nfsplugin:v4.9.0",
    "cilium": "quay.io/cilium/cilium:v1.16.5",
    "cilium-operator": "quay.io/cilium/operator-generic:v1.16.5",
    "calico": "docker.io/calico/node:v3.29.1",
    "calico-cni": "docker.io/calico/cni:v3.29.1",
    "coredns": "registry.k8s.io/coredns/coredns:v1.11.3",
    "pause": "registry.k8s.io/pause:3.10",
    "etcd": "registry.k8s.io/etcd:3.5.16-0",
    "trainer": "nvcr.io/nvidia/pytorch:25.03-py3",
}


def k8s_image(component: str, version: str) -> str:
    """Control-plane component image for a Kubernetes version."""
    return f"registry.k8s.io/{component}:{version}"


def driver_image(os_tag: str) -> str:
    """The driver image the operator picks for a node's OS."""
    return f"nvcr.io/nvidia/driver:{DRIVER_VERSION}-{os_tag}"


def doca_image(os_tag: str) -> str:
    """The DOCA/MOFED driver image the Network Operator picks for a node's OS."""
    return f"nvcr.io/nvidia/mellanox/doca-driver:{DOCA_DRIVER_VERSION}-{os_tag}-amd64"
