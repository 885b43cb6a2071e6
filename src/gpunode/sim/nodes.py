"""Node objects: labels, taints, capacity, conditions and nodeInfo as the kubelet and
the labelling controllers (NFD, GPU Operator, GFD, Network Operator) leave them."""

from __future__ import annotations

from datetime import datetime

from gpunode.sim import ids
from gpunode.sim.k8s import Obj, meta
from gpunode.sim.models import (
    CUDA_VERSION,
    DRIVER_VERSION,
    GPU_MODELS,
    OS_INFO,
    RUNTIME_VERSIONS,
)
from gpunode.sim.scenario import GpuNode, Scenario
from gpunode.sim.world import NodeState

RDMA_RESOURCE = "rdma/rdma_shared_device_a"
SRIOV_RESOURCE = "nvidia.com/hostdev"
GPU_RESOURCE = "nvidia.com/gpu"
OPERANDS = (
    "container-toolkit",
    "dcgm",
    "dcgm-exporter",
    "device-plugin",
    "driver",
    "gpu-feature-discovery",
    "mig-manager",
    "node-status-exporter",
    "operator-validator",
)
_CPU_FLAGS = (
    "ADX",
    "AESNI",
    "AMXBF16",
    "AMXINT8",
    "AMXTILE",
    "AVX",
    "AVX2",
    "AVX512BF16",
    "AVX512BW",
    "AVX512CD",
    "AVX512DQ",
    "AVX512F",
    "AVX512VL",
    "AVX512VNNI",
    "FMA3",
    "SHA",
    "VMX",
)


def node_ip(index: int) -> str:
    """Stable InternalIP: control planes first, then GPU workers."""
    return f"172.16.{1 + index // 200}.{10 + index % 200}"


def pod_cidr(index: int) -> str:
    """The node's /24 from the cluster pod range."""
    return f"10.{1 + index // 256}.{index % 256}.0/24"


def base_labels(name: str) -> dict[str, str]:
    """Labels every kubelet sets on its node."""
    return {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
    }


def nfd_labels(kernel: str, os_name: str, pci: tuple[str, ...], rdma: bool) -> dict[str, str]:
    """A realistic subset of what NFD's worker publishes."""
    info = OS_INFO[os_name]
    major, minor = kernel.split(".")[:2]
    p = "feature.node.kubernetes.io/"
    out = {f"{p}cpu-cpuid.{flag}": "true" for flag in _CPU_FLAGS}
    out |= {
        f"{p}cpu-hardware_multithreading": "true",
        f"{p}cpu-model.family": "6",
        f"{p}cpu-model.id": "143",
        f"{p}cpu-model.vendor_id": "Intel",
        f"{p}kernel-config.NO_HZ": "true",
        f"{p}kernel-config.NO_HZ_IDLE": "true",
        f"{p}kernel-version.full": kernel,
        f"{p}kernel-version.major": major,
        f"{p}kernel-version.minor": minor,
        f"{p}kernel-version.revision": "0",
        f"{p}memory-numa": "true",
        f"{p}storage-nonrotationaldisk": "true",
        f"{p}system-os_release.ID": info.os_id,
        f"{p}system-os_release.VERSION_ID": info.version_id,
        f"{p}system-os_release.VERSION_ID.major": info.version_id.split(".")[0],
        f"{p}system-os_release.VERSION_ID.minor": info.version_id.split(".")[1],
    }
    out |= {f"{p}pci-{vendor}.present": "true" for vendor in pci}
    if rdma:
        out |= {
            f"{p}network-sriov.capable": "true",
            f"{p}pci-15b3.sriov.capable": "true",
            f"{p}rdma.available": "true",
            f"{p}rdma.capable": "true",
        }
    return out


def gfd_labels(spec: GpuNode, gpu_count: int, timestamp: datetime) -> dict[str, str]:
    """Labels GPU Feature Discovery writes for a healthy node."""
    model = GPU_MODELS[spec.gpu]
    major, minor, rev = DRIVER_VERSION.split(".")
    cmaj, cmin = CUDA_VERSION.split(".")
    n = "nvidia.com/"
    return {
        f"{n}cuda.driver-version.full": DRIVER_VERSION,
        f"{n}cuda.driver-version.major": major,
        f"{n}cuda.driver-version.minor": minor,
        f"{n}cuda.driver-version.revision": rev,
        f"{n}cuda.driver.major": major,
        f"{n}cuda.driver.minor": minor,
        f"{n}cuda.driver.rev": rev,
        f"{n}cuda.runtime-version.full": CUDA_VERSION,
        f"{n}cuda.runtime-version.major": cmaj,
        f"{n}cuda.runtime-version.minor": cmin,
        f"{n}cuda.runtime.major": cmaj,
        f"{n}cuda.runtime.minor": cmin,
        f"{n}gfd.timestamp": str(int(timestamp.timestamp())),
        f"{n}gpu.compute.major": str(model.compute[0]),
        f"{n}gpu.compute.minor": str(model.compute[1]),
        f"{n}gpu.count": str(gpu_count),
        f"{n}gpu.family": model.family,
        f"{n}gpu.machine": model.machine,
        f"{n}gpu.memory": str(model.memory_mib),
        f"{n}gpu.mode": "compute",
        f"{n}gpu.product": model.label,
        f"{n}gpu.replicas": "1",
        f"{n}gpu.sharing-strategy": "none",
        f"{n}mig.capable": "true",
        f"{n}mig.strategy": "single",
        f"{n}mps.capable": "false",
        f"{n}vgpu.present": "false",
    }


def is_gfd_label(key: str) -> bool:
    """Labels that only GFD writes (used to strip them when GFD never ran)."""
    gfd_keys = (
        "nvidia.com/cuda.",
        "nvidia.com/gfd.",
        "nvidia.com/gpu.clique",
        "nvidia.com/gpu.compute.",
        "nvidia.com/gpu.count",
        "nvidia.com/gpu.family",
        "nvidia.com/gpu.machine",
        "nvidia.com/gpu.memory",
        "nvidia.com/gpu.mode",
        "nvidia.com/gpu.product",
        "nvidia.com/gpu.replicas",
        "nvidia.com/gpu.sharing-strategy",
        "nvidia.com/mig.capable",
        "nvidia.com/mig.strategy",
        "nvidia.com/mps.capable",
        "nvidia.com/vgpu.present",
    )
    return key.startswith(gfd_keys)


def operator_labels(host_driver: bool, mig_manager: bool) -> dict[str, str]:
    """Labels the GPU Operator sets on nodes where NFD found an NVIDIA PCI device."""
    out = {"nvidia.com/gpu.present": "true"}
    for operand in OPERANDS:
        if operand == "mig-manager" and not mig_manager:
            continue
        out[f"nvidia.com/gpu.deploy.{operand}"] = "true"
    if host_driver:
        out["nvidia.com/gpu.deploy.driver"] = "pre-installed"
    else:
        out["nvidia.com/gpu-driver-upgrade-state"] = "upgrade-done"
    if mig_manager:
        out |= {"nvidia.com/mig.config": "all-disabled", "nvidia.com/mig.config.state": "success"}
    return out


def gpu_node_labels(scenario: Scenario, state: NodeState, gfd_time: datetime) -> dict[str, str]:
    """The full label set of a healthy GPU worker."""
    spec = state.spec
    assert spec is not None
    labels = base_labels(state.name)
    if scenario.has("nfd"):
        pci = ("102b", "10de") + (("15b3",) if spec.nics else ())
        labels |= nfd_labels(spec.kernel, spec.os, pci, spec.nics > 0)
    if scenario.has("gpu-operator") and scenario.has("nfd"):
        host = scenario.cluster.driver_mode == "host"
        labels |= operator_labels(host, scenario.has("mig-manager"))
        if scenario.has("gfd"):
            labels |= gfd_labels(spec, spec.gpus, gfd_time)
    if scenario.has("network-operator") and spec.nics:
        labels["network.nvidia.com/operator.mofed.wait"] = "false"
    return dict(sorted(labels.items()))


def control_plane_labels(scenario: Scenario, name: str) -> dict[str, str]:
    """Labels of a kubeadm control-plane node."""
    labels = base_labels(name) | {
        "node-role.kubernetes.io/control-plane": "",
        "node.kubernetes.io/exclude-from-external-load-balancers": "",
    }
    if scenario.has("nfd"):
        labels |= nfd_labels("5.15.0-131-generic", "ubuntu22.04", ("1af4", "1234"), False)
    return dict(sorted(labels.items()))


def _cni_condition(scenario: Scenario, at: datetime) -> Obj:
    """NetworkUnavailable=False as the CNI agent sets it."""
    cilium = scenario.cluster.cni == "cilium"
    reason, who = ("CiliumIsUp", "Cilium") if cilium else ("CalicoIsUp", "Calico")
    return {
        "lastHeartbeatTime": ids.rfc3339(at),
        "lastTransitionTime": ids.rfc3339(at),
        "message": f"{who} is running on this node",
        "reason": reason,
        "status": "False",
        "type": "NetworkUnavailable",
    }


KUBELET_OK = (
    ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
)


def healthy_conditions(scenario: Scenario, since: datetime, heartbeat: datetime) -> list[Obj]:
    """Node conditions of a node whose kubelet reports in."""
    out = [_cni_condition(scenario, since)]
    for kind, reason, message in KUBELET_OK:
        out.append(
            {
                "lastHeartbeatTime": ids.rfc3339(heartbeat),
                "lastTransitionTime": ids.rfc3339(since),
                "message": message,
                "reason": reason,
                "status": "False",
                "type": kind,
            }
        )
    out.append(
        {
            "lastHeartbeatTime": ids.rfc3339(heartbeat),
            "lastTransitionTime": ids.rfc3339(since),
            "message": "kubelet is posting ready status",
            "reason": "KubeletReady",
            "status": "True",
            "type": "Ready",
        }
    )
    return out


def node_object(
    scenario: Scenario,
    state: NodeState,
    *,
    labels: dict[str, str],
    created: datetime,
    heartbeat: datetime,
    capacity: dict[str, str],
    kernel: str,
    os_image: str,
) -> Obj:
    """A complete v1 Node."""
    runtime = RUNTIME_VERSIONS[scenario.cluster.runtime]
    sock = (
        "unix:///var/run/crio/crio.sock"
        if scenario.cluster.runtime == "crio"
        else "unix:///var/run/containerd/containerd.sock"
    )
    annotations = {
        "kubeadm.alpha.kubernetes.io/cri-socket": sock,
        "node.alpha.kubernetes.io/ttl": "0",
        "volumes.kubernetes.io/controller-managed-attach-detach": "true",
    }
    md = meta(state.name, created, labels=labels, annotations=annotations)
    cidr = pod_cidr(state.index)
    spec: Obj = {"podCIDR": cidr, "podCIDRs": [cidr]}
    status: Obj = {
        "addresses": [
            {"address": state.ip, "type": "InternalIP"},
            {"address": state.name, "type": "Hostname"},
        ],
        "allocatable": allocatable(capacity),
        "capacity": dict(capacity),
        "conditions": healthy_conditions(scenario, created, heartbeat),
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {
            "architecture": "amd64",
            "bootID": ids.uid("boot:" + state.name),
            "containerRuntimeVersion": runtime,
            "kernelVersion": kernel,
            "kubeProxyVersion": "",
            "kubeletVersion": scenario.cluster.kubernetes_version,
            "machineID": ids.hex_id("machine:" + state.name, 32),
            "operatingSystem": "linux",
            "osImage": os_image,
            "systemUUID": ids.uid("system:" + state.name),
        },
    }
    return {"apiVersion": "v1", "kind": "Node", "metadata": md, "spec": spec, "status": status}


def allocatable(capacity: dict[str, str]) -> dict[str, str]:
    """Capacity minus the kubelet's eviction reserve (memory, ephemeral storage)."""
    out = dict(capacity)
    out["memory"] = f"{int(capacity['memory'].removesuffix('Ki')) - 102400}Ki"
    disk_ki = int(capacity["ephemeral-storage"].removesuffix("Ki"))
    out["ephemeral-storage"] = str(disk_ki * 1024 * 9 // 10)
    return out


def gpu_capacity(spec: GpuNode, scenario: Scenario) -> dict[str, str]:
    """Capacity of a GPU worker once the device plugins registered."""
    cap = {
        "cpu": "224",
        "ephemeral-storage": "3749735876Ki",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": "2113389500Ki",
        "pods": "110",
    }
    if scenario.has("gpu-operator") and scenario.has("nfd"):
        cap[GPU_RESOURCE] = str(spec.gpus)
    if scenario.has("network-operator") and spec.nics:
        cap[RDMA_RESOURCE] = "63"
        if scenario.has("sriov-device-plugin"):
            cap[SRIOV_RESOURCE] = str(spec.nics)  # one VF per port, as the plugin's log finds
    return dict(sorted(cap.items()))


CONTROL_PLANE_CAPACITY = {
    "cpu": "16",
    "ephemeral-storage": "203056560Ki",
    "hugepages-1Gi": "0",
    "hugepages-2Mi": "0",
    "memory": "65838260Ki",
    "pods": "110",
}


def set_resource(node: Obj, resource: str, capacity: str | None, allocatable: str | None) -> None:
    """Set (or with None, remove) an extended resource in capacity/allocatable."""
    status = node["status"]
    for key, value in (("capacity", capacity), ("allocatable", allocatable)):
        if value is None:
            status[key].pop(resource, None)
        else:
            status[key][resource] = value
