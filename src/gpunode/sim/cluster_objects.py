"""Cluster-scoped and supporting objects: ClusterPolicy, NicClusterPolicy, RuntimeClasses,
CSI objects, StorageClass, PVCs, Services, ServiceMonitors, ConfigMaps, /version."""

from __future__ import annotations

from datetime import datetime, timedelta

from gpunode.sim import ids
from gpunode.sim.k8s import Obj, meta
from gpunode.sim.models import DOCA_DRIVER_VERSION, DRIVER_VERSION, SRIOV_DP_CONFIG
from gpunode.sim.operands import GPU_NS, NET_NS
from gpunode.sim.world import World

CSI_DRIVER = "nfs.csi.k8s.io"


def build(world: World) -> dict[str, list[Obj]]:
    """Every non-workload resource file of the bundle, keyed by resource name."""
    s = world.scenario
    out: dict[str, list[Obj]] = {
        "runtimeclasses": runtime_classes(world) if s.has("gpu-operator") else [],
        "services": services(world),
        "configmaps": config_maps(world),
    }
    if s.has("gpu-operator"):
        out["clusterpolicies"] = [cluster_policy(world)]
        out["servicemonitors"] = service_monitors(world) if s.has("dcgm-exporter") else []
    if s.has("network-operator"):
        out["nicclusterpolicies"] = [nic_cluster_policy(world)]
    if s.has("csi-node"):
        out |= {
            "csidrivers": [csi_driver(world)],
            "storageclasses": [storage_class(world)],
            "persistentvolumeclaims": pvcs(world),
        }
    out["csinodes"] = csi_nodes(world)
    return out


def version(world: World) -> Obj:
    """The API server's /version answer."""
    v = world.scenario.cluster.kubernetes_version
    major, minor = v.lstrip("v").split(".")[:2]
    return {
        "major": major,
        "minor": minor,
        "gitVersion": v,
        "gitCommit": ids.hex_id("k8s:" + v, 40),
        "gitTreeState": "clean",
        "buildDate": "2024-12-10T11:36:38Z",
        "goVersion": "go1.22.10",
        "compiler": "gc",
        "platform": "linux/amd64",
    }


def _created(world: World, seconds: int) -> datetime:
    return world.installed_at + timedelta(seconds=seconds)


def cluster_policy(world: World) -> Obj:
    """`cluster-policy` with the chart's spec and a Ready status."""
    s = world.scenario
    when = _created(world, -130)
    spec = {
        "cdi": {"default": False, "enabled": s.cluster.cdi},
        "daemonsets": {
            "priorityClassName": "system-node-critical",
            "tolerations": [{"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}],
            "updateStrategy": "RollingUpdate",
            "rollingUpdate": {"maxUnavailable": "1"},
        },
        "dcgm": {"enabled": False},
        "dcgmExporter": {
            "enabled": s.has("dcgm-exporter"),
            "repository": "nvcr.io/nvidia/k8s",
            "image": "dcgm-exporter",
            "version": "4.1.1-4.0.4-ubuntu22.04",
            "serviceMonitor": {"enabled": True},
        },
        "devicePlugin": {
            "enabled": True,
            "repository": "nvcr.io/nvidia",
            "image": "k8s-device-plugin",
            "version": "v0.17.1",
        },
        "driver": {
            "enabled": s.cluster.driver_mode == "operator",
            "repository": "nvcr.io/nvidia",
            "image": "driver",
            "version": DRIVER_VERSION,
            "kernelModuleType": "auto",
            "rdma": {"enabled": s.has("network-operator"), "useHostMofed": False},
            "upgradePolicy": {"autoUpgrade": True, "maxParallelUpgrades": 1, "maxUnavailable": "25%"},
            "manager": {
                "repository": "nvcr.io/nvidia/cloud-native",
                "image": "k8s-driver-manager",
                "version": "v0.8.0",
            },
        },
        "gfd": {
            "enabled": s.has("gfd"),
            "repository": "nvcr.io/nvidia",
            "image": "k8s-device-plugin",
            "version": "v0.17.1",
        },
        "mig": {"strategy": "single"},
        "migManager": {
            "enabled": s.has("mig-manager"),
            "config": {"default": "all-disabled", "name": "default-mig-parted-config"},
        },
        "nodeStatusExporter": {"enabled": False},
        "operator": {
            "defaultRuntime": "crio" if s.cluster.runtime == "crio" else "containerd",
            "runtimeClass": "nvidia",
        },
        "toolkit": {
            "enabled": True,
            "repository": "nvcr.io/nvidia/k8s",
            "image": "container-toolkit",
            "version": "v1.17.5-ubuntu20.04",
            "installDir": "/usr/local/nvidia",
        },
        "validator": {
            "plugin": {"env": [{"name": "WITH_WORKLOAD", "value": "false"}]},
            "repository": "nvcr.io/nvidia/cloud-native",
            "image": "gpu-operator-validator",
            "version": "v25.3.0",
        },
    }
    md = meta(
        "cluster-policy",
        when,
        labels={"app.kubernetes.io/component": "gpu-operator", "app.kubernetes.io/managed-by": "Helm"},
        generation=1,
    )
    md["annotations"] = {
        "meta.helm.sh/release-name": "gpu-operator",
        "meta.helm.sh/release-namespace": GPU_NS,
    }
    return {
        "apiVersion": "nvidia.com/v1",
        "kind": "ClusterPolicy",
        "metadata": md,
        "spec": spec,
        "status": policy_status(world, ready=True),
    }


def policy_status(world: World, ready: bool, reason: str = "", message: str = "") -> Obj:
    """ClusterPolicy status: Ready/Error conditions and state."""
    when = ids.rfc3339(world.installed_at + timedelta(minutes=6, seconds=12))
    if ready:
        conditions = [
            {
                "lastTransitionTime": when,
                "message": "",
                "reason": "Error",
                "status": "False",
                "type": "Error",
            },
            {
                "lastTransitionTime": when,
                "message": "ClusterPolicy is ready as all resources have been successfully reconciled",
                "reason": "Reconciled",
                "status": "True",
                "type": "Ready",
            },
        ]
        return {"conditions": conditions, "namespace": GPU_NS, "state": "ready"}
    now = ids.rfc3339(world.collected_at - timedelta(minutes=3))
    conditions = [
        {"lastTransitionTime": now, "message": message, "reason": reason, "status": "True", "type": "Error"},
        {"lastTransitionTime": now, "message": "", "reason": "Error", "status": "False", "type": "Ready"},
    ]
    return {"conditions": conditions, "namespace": GPU_NS, "state": "notReady"}


def nic_cluster_policy(world: World) -> Obj:
    """`nic-cluster-policy` with OFED driver and RDMA shared device plugin sections."""
    spec = {
        "ofedDriver": {
            "image": "doca-driver",
            "repository": "nvcr.io/nvidia/mellanox",
            "version": DOCA_DRIVER_VERSION,
            "startupProbe": {"initialDelaySeconds": 10, "periodSeconds": 20},
            "livenessProbe": {"initialDelaySeconds": 30, "periodSeconds": 30},
            "readinessProbe": {"initialDelaySeconds": 10, "periodSeconds": 30},
            "upgradePolicy": {
                "autoUpgrade": True,
                "maxParallelUpgrades": 1,
                "drain": {"enable": True, "force": True, "timeoutSeconds": 300},
            },
        },
        "rdmaSharedDevicePlugin": {
            "image": "k8s-rdma-shared-dev-plugin",
            "repository": "nvcr.io/nvidia/mellanox",
            "version": "network-operator-v25.1.0",
            "config": '{"configList": [{"resourceName": "rdma_shared_device_a", "rdmaHcaMax": 63, '
            '"selectors": {"vendors": ["15b3"]}}]}',
        },
    }
    if world.scenario.has("sriov-device-plugin"):
        spec["sriovDevicePlugin"] = {
            "image": "sriov-network-device-plugin",
            "repository": "ghcr.io/k8snetworkplumbingwg",
            "version": "v3.9.0",
            "config": SRIOV_DP_CONFIG,
        }
    md = meta("nic-cluster-policy", _created(world, -1700), generation=1)
    return {
        "apiVersion": "mellanox.com/v1alpha1",
        "kind": "NicClusterPolicy",
        "metadata": md,
        "spec": spec,
        "status": nic_status(world, ofed_ready=True),
    }


def nic_status(world: World, ofed_ready: bool, message: str = "") -> Obj:
    """NicClusterPolicy status with appliedStates and per-component conditions."""
    when = ids.rfc3339(
        world.installed_at - timedelta(minutes=12)
        if ofed_ready
        else world.collected_at - timedelta(minutes=9)
    )
    ofed_state = "ready" if ofed_ready else "notReady"
    applied = [
        {"name": "state-OFED", "state": ofed_state, "message": message}
        if message
        else {"name": "state-OFED", "state": ofed_state},
        {"name": "state-RDMA-device-plugin", "state": "ready"},
    ]
    sriov = world.scenario.has("sriov-device-plugin")
    if sriov:
        applied.append({"name": "state-SRIOV-device-plugin", "state": "ready"})
    for name in (
        *(() if sriov else ("state-SRIOV-device-plugin",)),
        "state-ib-kubernetes",
        "state-multus-cni",
        "state-container-networking-plugins",
        "state-ipoib-cni",
        "state-nv-ipam-cni",
        "state-nic-feature-discovery",
        "state-doca-telemetry-service",
        "state-nic-configuration-operator",
        "state-spectrum-x-operator",
    ):
        applied.append({"name": name, "state": "ignore"})

    def cond(kind: str, ok: bool, reason_ok: str, reason_bad: str) -> Obj:
        return {
            "lastTransitionTime": when,
            "message": "" if ok else message,
            "reason": reason_ok if ok else reason_bad,
            "status": "True" if ok else "False",
            "type": kind,
        }

    conditions = [
        cond("Ready", ofed_ready, "AllComponentsReady", "ComponentsNotReady"),
        cond("OFEDDriverReady", ofed_ready, "ComponentReady", "ComponentNotReady"),
        cond("RDMASharedDevicePluginReady", True, "ComponentReady", "ComponentNotReady"),
    ]
    if sriov:
        conditions.append(cond("SRIOVDevicePluginReady", True, "ComponentReady", "ComponentNotReady"))
    out: Obj = {
        "appliedStates": applied,
        "conditions": conditions,
        "state": "ready" if ofed_ready else "notReady",
    }
    if not ofed_ready:
        out["reason"] = message
    return out


def runtime_classes(world: World) -> list[Obj]:
    """`nvidia`, `nvidia-cdi`, `nvidia-legacy` RuntimeClasses owned by the ClusterPolicy."""
    owner = {
        "apiVersion": "nvidia.com/v1",
        "blockOwnerDeletion": True,
        "controller": True,
        "kind": "ClusterPolicy",
        "name": "cluster-policy",
        "uid": ids.uid("/cluster-policy"),
    }
    out = []
    for name in ("nvidia", "nvidia-cdi", "nvidia-legacy"):
        md = meta(name, _created(world, -60), owner=owner)
        out.append({"apiVersion": "node.k8s.io/v1", "handler": name, "kind": "RuntimeClass", "metadata": md})
    return out


def csi_driver(world: World) -> Obj:
    md = meta(CSI_DRIVER, _created(world, -86400 * 12), labels={"app.kubernetes.io/managed-by": "Helm"})
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": md,
        "spec": {
            "attachRequired": False,
            "fsGroupPolicy": "File",
            "podInfoOnMount": False,
            "requiresRepublish": False,
            "seLinuxMount": False,
            "storageCapacity": False,
            "volumeLifecycleModes": ["Persistent"],
        },
    }


def csi_nodes(world: World) -> list[Obj]:
    """A CSINode per node; drivers listed where the node plugin registered."""
    out = []
    for node in world.nodes.values():
        registered = world.ds_pod_key("csi-node", node.name) is not None
        drivers = [{"name": CSI_DRIVER, "nodeID": node.name, "topologyKeys": None}] if registered else None
        owner = {"apiVersion": "v1", "kind": "Node", "name": node.name, "uid": node.obj["metadata"]["uid"]}
        md = meta(
            node.name,
            ids.parse_time(node.obj["metadata"]["creationTimestamp"]) + timedelta(seconds=9),
            owner=owner,
        )
        md["annotations"] = {
            "storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/aws-ebs,"
            "kubernetes.io/azure-disk,kubernetes.io/azure-file,kubernetes.io/cinder,"
            "kubernetes.io/gce-pd,kubernetes.io/portworx-volume,kubernetes.io/vsphere-volume"
        }
        out.append(
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "CSINode",
                "metadata": md,
                "spec": {"drivers": drivers},
            }
        )
    return out


def storage_class(world: World) -> Obj:
    md = meta(
        "nfs-csi",
        _created(world, -86400 * 12),
        annotations={"storageclass.kubernetes.io/is-default-class": "true"},
    )
    return {
        "allowVolumeExpansion": True,
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": md,
        "mountOptions": ["nfsvers=4.1"],
        "parameters": {"server": "nfs.falcon.internal", "share": "/export/k8s"},
        "provisioner": CSI_DRIVER,
        "reclaimPolicy": "Delete",
        "volumeBindingMode": "Immediate",
    }


def pvcs(world: World) -> list[Obj]:
    """Bound PVCs for the training data and checkpoints."""
    out = []
    for name, size in (("datasets", "20Ti"), ("checkpoints", "10Ti")):
        md = meta(
            name,
            _created(world, -86400 * 6),
            "ml",
            annotations={
                "pv.kubernetes.io/bind-completed": "yes",
                "pv.kubernetes.io/bound-by-controller": "yes",
                "volume.beta.kubernetes.io/storage-provisioner": CSI_DRIVER,
                "volume.kubernetes.io/storage-provisioner": CSI_DRIVER,
            },
        )
        md["finalizers"] = ["kubernetes.io/pvc-protection"]
        volume = f"pvc-{ids.uid('pv:' + name)}"
        out.append(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": md,
                "spec": {
                    "accessModes": ["ReadWriteMany"],
                    "resources": {"requests": {"storage": size}},
                    "storageClassName": "nfs-csi",
                    "volumeMode": "Filesystem",
                    "volumeName": volume,
                },
                "status": {"accessModes": ["ReadWriteMany"], "capacity": {"storage": size}, "phase": "Bound"},
            }
        )
    return out


def _service(
    world: World,
    name: str,
    ns: str,
    *,
    selector: dict[str, str],
    ports: list[Obj],
    ip: str,
    labels: dict[str, str] | None = None,
) -> Obj:
    md = meta(name, _created(world, -100), ns, labels=labels)
    spec: Obj = {
        "clusterIP": ip,
        "clusterIPs": [ip],
        "internalTrafficPolicy": "Cluster",
        "ipFamilies": ["IPv4"],
        "ipFamilyPolicy": "SingleStack",
        "ports": ports,
        "sessionAffinity": "None",
        "type": "ClusterIP",
    }
    if selector:
        spec["selector"] = selector
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": md,
        "spec": spec,
        "status": {"loadBalancer": {}},
    }


def services(world: World) -> list[Obj]:
    out = [
        _service(
            world,
            "kubernetes",
            "default",
            selector={},
            ports=[{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}],
            ip="10.96.0.1",
            labels={"component": "apiserver", "provider": "kubernetes"},
        ),
        _service(
            world,
            "kube-dns",
            "kube-system",
            selector={"k8s-app": "kube-dns"},
            ports=[
                {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53},
                {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53},
            ],
            ip="10.96.0.10",
            labels={"k8s-app": "kube-dns"},
        ),
    ]
    if world.scenario.has("gpu-operator") and world.scenario.has("dcgm-exporter"):
        out.append(
            _service(
                world,
                "nvidia-dcgm-exporter",
                GPU_NS,
                selector={"app": "nvidia-dcgm-exporter"},
                ports=[{"name": "gpu-metrics", "port": 9400, "protocol": "TCP", "targetPort": 9400}],
                ip="10.103.41.207",
                labels={"app": "nvidia-dcgm-exporter"},
            )
        )
    if world.scenario.has("gpu-operator"):
        out.append(
            _service(
                world,
                "gpu-operator",
                GPU_NS,
                selector={"app": "gpu-operator"},
                ports=[{"name": "gpu-operator-metrics", "port": 8080, "protocol": "TCP", "targetPort": 8080}],
                ip="10.110.7.33",
                labels={"app": "gpu-operator"},
            )
        )
    return out


def service_monitors(world: World) -> list[Obj]:
    md = meta("nvidia-dcgm-exporter", _created(world, 40), GPU_NS, labels={"app": "nvidia-dcgm-exporter"})
    return [
        {
            "apiVersion": "monitoring.coreos.com/v1",
            "kind": "ServiceMonitor",
            "metadata": md,
            "spec": {
                "endpoints": [
                    {
                        "honorLabels": False,
                        "interval": "15s",
                        "path": "/metrics",
                        "port": "gpu-metrics",
                        "relabelings": [],
                    }
                ],
                "jobLabel": "app",
                "namespaceSelector": {"matchNames": [GPU_NS]},
                "selector": {"matchLabels": {"app": "nvidia-dcgm-exporter"}},
            },
        }
    ]


def config_maps(world: World) -> list[Obj]:
    """GPU-stack ConfigMaps only (as the collector gathers them)."""
    out: list[Obj] = []
    if world.scenario.has("gpu-operator"):
        probe = (
            "#!/bin/sh\nif [ ! -f /sys/module/nvidia/refcnt ]; then\n"
            '  echo "NVIDIA kernel module not loaded"\n'
            '  exit 1\nfi\nif ! nvidia-smi; then\n  echo "nvidia-smi failed"\n  exit 1\nfi\n'
        )
        out.append(
            {
                "apiVersion": "v1",
                "data": {"nvidia-driver-startup-probe.sh": probe},
                "kind": "ConfigMap",
                "metadata": meta("nvidia-driver-startup-probe", _created(world, -60), GPU_NS),
            }
        )
        mig = (
            "version: v1\nmig-configs:\n  all-disabled:\n    - devices: all\n      mig-enabled: false\n"
            "  all-1g.10gb:\n    - devices: all\n      mig-enabled: true\n"
            '      mig-devices:\n        "1g.10gb": 7\n'
            '  all-balanced:\n    - device-filter: ["0x233010DE", "0x233110DE"]\n      devices: all\n'
            '      mig-enabled: true\n      mig-devices:\n        "1g.10gb": 2\n        "2g.20gb": 1\n'
            '        "3g.40gb": 1\n'
        )
        out.append(
            {
                "apiVersion": "v1",
                "data": {"config.yaml": mig},
                "kind": "ConfigMap",
                "metadata": meta("default-mig-parted-config", _created(world, -60), GPU_NS),
            }
        )
    if world.scenario.has("network-operator"):
        cfg = (
            '{"configList":[{"resourceName":"rdma_shared_device_a","rdmaHcaMax":63,'
            '"selectors":{"vendors":["15b3"]}}]}'
        )
        out.append(
            {
                "apiVersion": "v1",
                "data": {"config.json": cfg},
                "kind": "ConfigMap",
                "metadata": meta("rdma-devices", _created(world, -1700), NET_NS),
            }
        )
    if world.scenario.has("network-operator") and world.scenario.has("sriov-device-plugin"):
        out.append(
            {
                "apiVersion": "v1",
                "data": {"config.json": SRIOV_DP_CONFIG},
                "kind": "ConfigMap",
                "metadata": meta("network-operator-sriovdp-config", _created(world, -1700), NET_NS),
            }
        )
    return out
