"""Pods of the catalog components no simulator scenario deploys, as their real deployments run them.

A field case that names such a component (a log, a pod state, an event, a missing pod)
gets that component's DaemonSet or Deployment and pods, with the names, namespaces,
labels, containers and images of its real manifests, so that its evidence has a pod to
land in. The node labels a DaemonSet selects (HAMi's ``gpu=on``, the operator's
``nvidia.com/gpu.deploy.sandbox-device-plugin``, the ComputeDomain label the DRA driver
puts on a domain's nodes) are set on the case's node, as the install steps or the
controllers set them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from gpunode.sim import ids
from gpunode.sim.build import DeployDef, _add_daemonset, _add_deployment
from gpunode.sim.k8s import toleration
from gpunode.sim.models import IMAGES
from gpunode.sim.operands import GPU_TOLERATION, NODE_CRITICAL, CtrDef, DsDef, _operand
from gpunode.sim.world import NodeState, World

# NVIDIA/k8s-dra-driver-gpu deployments/helm/nvidia-dra-driver-gpu (release namespace as its
# install guide creates it): templates/kubeletplugin.yaml, controller.yaml and the controller's
# compute-domain-daemon.tmpl.yaml, one image for all of them.
DRA_NS = "nvidia-dra-driver-gpu"
DRA_IMAGE = "nvcr.io/nvidia/k8s-dra-driver-gpu:v25.12.0"
#: The ComputeDomain of NVIDIA's own example (imex-channel-injection), whose uid labels its nodes.
COMPUTE_DOMAIN = "imex-channel-injection"
CD_LABEL = "resource.nvidia.com/computeDomain"
# Project-HAMi/HAMi charts/hami (release "hami" in kube-system, as its install guide runs it).
HAMI_IMAGE = "docker.io/projecthami/hami:v2.6.1"
HAMI_LABELS = {"app.kubernetes.io/name": "hami", "app.kubernetes.io/instance": "hami"}
# volcano-sh/devices volcano-device-plugin.yml
VOLCANO_IMAGE = "docker.io/volcanosh/volcano-device-plugin:latest"
# GoogleCloudPlatform/container-engine-accelerators cmd/nvidia_gpu/device-plugin.yaml, as GKE runs it
GKE_IMAGE = ("gcr.io/gke-release/nvidia-gpu-device-plugin"
             "@sha256:d6cb575b0d8a436066a0d3a783bbaf84697e0d5a68857edfe5fd5d1183133c7d")
# NVIDIA/gpu-operator assets/state-sandbox-device-plugin and state-vfio-manager 0500_daemonset.yaml
SANDBOX_IMAGE = "nvcr.io/nvidia/kubevirt-gpu-device-plugin:v1.3.1"
VFIO_IMAGE = "nvcr.io/nvidia/vfio-manager:v0.4.0"
# NVIDIA/gpu-operator deployments/gpu-operator/values.yaml (vgpuDeviceManager, ccManager; the
# last kataManager image before it was removed from the chart)
VGPU_DM_IMAGE = "nvcr.io/nvidia/cloud-native/vgpu-device-manager:v0.5.0"
CC_IMAGE = "nvcr.io/nvidia/cloud-native/k8s-cc-manager:v0.4.3"
KATA_IMAGE = "nvcr.io/nvidia/cloud-native/k8s-kata-manager:v0.2.3"
# k8snetworkplumbingwg/sriov-network-operator bindata/manifests/daemon/daemonset.yaml, in the
# namespace of its Helm chart's install guide (sriov-network-operator); OpenShift installs it in
# openshift-sriov-network-operator, NVIDIA's Network Operator in its own namespace.
SRIOV_NS = "sriov-network-operator"
SRIOV_CD = "sriov-network-config-daemon"
SRIOV_CD_IMAGE = "ghcr.io/k8snetworkplumbingwg/sriov-network-operator-config-daemon:v1.5.0"
SRIOV_CNI_IMAGE = "ghcr.io/k8snetworkplumbingwg/sriov-cni:v2.9.0"
SRIOV_IB_CNI_IMAGE = "ghcr.io/k8snetworkplumbingwg/ib-sriov-cni:v1.2.1"


@dataclass(frozen=True)
class Extra:
    """One component's real deployment: its DaemonSet (node components) or Deployment
    (cluster components), and the labels the case's node needs for the DaemonSet to select it."""

    daemonset: DsDef | None = None
    deployment: DeployDef | None = None
    node_labels: dict[str, str] = field(default_factory=dict)
    #: the namespaces its real installs put it in (the first is the DaemonSet's here): a pod a
    #: report names in one of them, named after its DaemonSet, is its pod (builder._placed)
    namespaces: tuple[str, ...] = ()


def _cd_uid() -> str:
    return ids.uid(f"computedomain/default/{COMPUTE_DOMAIN}")


def extras() -> dict[str, Extra]:
    """Component id -> how it is deployed for real."""
    gpu_present = {"nvidia.com/gpu.present": "true"}
    dra_labels = "nvidia-dra-driver-gpu-component"
    return {
        "dra-kubelet-plugin": Extra(DsDef(
            key="dra-kubelet-plugin", name="nvidia-dra-driver-gpu-kubelet-plugin", namespace=DRA_NS,
            labels={dra_labels: "kubelet-plugin"},
            containers=(CtrDef("compute-domains", DRA_IMAGE, privileged=True),
                        CtrDef("gpus", DRA_IMAGE, privileged=True)),
            node_selector=gpu_present, tolerations=(GPU_TOLERATION,), priority_class=NODE_CRITICAL,
            service_account="nvidia-dra-driver-gpu-service-account-kubeletplugin",
            match_labels={dra_labels: "kubelet-plugin"})),
        "compute-domain-daemon": Extra(DsDef(
            key="compute-domain-daemon", name=f"{COMPUTE_DOMAIN}-{ids.suffix(COMPUTE_DOMAIN)}",
            namespace=DRA_NS, labels={CD_LABEL: _cd_uid()},
            containers=(CtrDef("compute-domain-daemon", DRA_IMAGE, privileged=True),),
            node_selector={CD_LABEL: _cd_uid()}, tolerations=(GPU_TOLERATION,),
            service_account="compute-domain-daemon-service-account", match_labels={CD_LABEL: _cd_uid()}),
            node_labels={CD_LABEL: _cd_uid()}),
        "dra-controller": Extra(deployment=DeployDef(
            name="nvidia-dra-driver-gpu-controller", namespace=DRA_NS, labels={dra_labels: "controller"},
            containers=(CtrDef("compute-domain", DRA_IMAGE),),
            service_account="nvidia-dra-driver-gpu-service-account-controller")),
        "hami-device-plugin": Extra(DsDef(
            key="hami-device-plugin", name="hami-device-plugin", namespace="kube-system",
            labels={"app.kubernetes.io/component": "hami-device-plugin", **HAMI_LABELS,
                    "hami.io/webhook": "ignore"},
            containers=(CtrDef("device-plugin", HAMI_IMAGE, privileged=True),
                        CtrDef("vgpu-monitor", HAMI_IMAGE, privileged=True)),
            node_selector={"gpu": "on"}, tolerations=(GPU_TOLERATION,), priority_class=NODE_CRITICAL,
            service_account="hami-device-plugin",
            match_labels={"app.kubernetes.io/component": "hami-device-plugin", **HAMI_LABELS}),
            node_labels={"gpu": "on"}),
        "hami-scheduler": Extra(deployment=DeployDef(
            name="hami-scheduler", namespace="kube-system",
            labels={"app.kubernetes.io/component": "hami-scheduler", **HAMI_LABELS},
            containers=(CtrDef("kube-scheduler", "registry.k8s.io/kube-scheduler:v1.31.4"),
                        CtrDef("vgpu-scheduler-extender", HAMI_IMAGE)),
            service_account="hami-scheduler")),
        "volcano-device-plugin": Extra(DsDef(
            key="volcano-device-plugin", name="volcano-device-plugin", namespace="kube-system",
            labels={"name": "volcano-device-plugin"},
            containers=(CtrDef("volcano-device-plugin", VOLCANO_IMAGE),),
            tolerations=(toleration("volcano.sh/gpu-memory", "NoSchedule"), GPU_TOLERATION),
            priority_class=NODE_CRITICAL, service_account="volcano-device-plugin",
            match_labels={"name": "volcano-device-plugin"})),
        "gke-device-plugin": Extra(DsDef(
            key="gke-device-plugin", name="nvidia-gpu-device-plugin-small-cos", namespace="kube-system",
            labels={"k8s-app": "nvidia-gpu-device-plugin"},
            containers=(CtrDef("nvidia-gpu-device-plugin", GKE_IMAGE, privileged=True),),
            node_selector={"cloud.google.com/gke-gpu": "true"}, tolerations=(GPU_TOLERATION,),
            priority_class=NODE_CRITICAL, match_labels={"k8s-app": "nvidia-gpu-device-plugin"}),
            node_labels={"cloud.google.com/gke-gpu": "true"}),
        # the GPU Operator's VM operands, rendered as its other operands (owned by the ClusterPolicy,
        # selecting nvidia.com/gpu.deploy.<operand>=true, which it sets on VM-workload nodes)
        "sandbox-device-plugin": Extra(_operand(
            "sandbox-device-plugin", "nvidia-sandbox-device-plugin-daemonset",
            (CtrDef("nvidia-sandbox-device-plugin-ctr", SANDBOX_IMAGE, privileged=True),), (),
            deploy="sandbox-device-plugin", sa="nvidia-sandbox-device-plugin", start=40, gpu_runtime=False),
            node_labels={"nvidia.com/gpu.deploy.sandbox-device-plugin": "true"}),
        "vfio-manager": Extra(_operand(
            "vfio-manager", "nvidia-vfio-manager",
            (CtrDef("nvidia-vfio-manager", VFIO_IMAGE, command=("vfio-manage", "bind", "--all"),
                    privileged=True),), (),
            deploy="vfio-manager", sa="nvidia-vfio-manager", start=20, gpu_runtime=False,
            extra_labels={"name": "nvidia-vfio-manager"}),
            node_labels={"nvidia.com/gpu.deploy.vfio-manager": "true"}),
        # assets/state-vgpu-device-manager, state-cc-manager and state-kata-manager
        "vgpu-device-manager": Extra(_operand(
            "vgpu-device-manager", "nvidia-vgpu-device-manager",
            (CtrDef("nvidia-vgpu-device-manager", VGPU_DM_IMAGE),), (),
            deploy="vgpu-device-manager", sa="nvidia-vgpu-device-manager", start=30, gpu_runtime=False),
            node_labels={"nvidia.com/gpu.deploy.vgpu-device-manager": "true"}),
        "cc-manager": Extra(_operand(
            "cc-manager", "nvidia-cc-manager",
            (CtrDef("nvidia-cc-manager", CC_IMAGE, privileged=True),), (),
            deploy="cc-manager", sa="nvidia-cc-manager", start=10, gpu_runtime=False,
            extra_labels={"name": "nvidia-cc-manager"}),
            node_labels={"nvidia.com/gpu.deploy.cc-manager": "true"}),
        "kata-manager": Extra(_operand(
            "kata-manager", "nvidia-kata-manager",
            (CtrDef("nvidia-kata-manager", KATA_IMAGE, command=("/bin/sh", "-c"),
                    args=("/bin/entrypoint.sh",), privileged=True),), (),
            deploy="kata-manager", sa="nvidia-kata-manager", start=15, gpu_runtime=False,
            extra_labels={"name": "nvidia-kata-manager"}),
            node_labels={"nvidia.com/gpu.deploy.kata-manager": "true"}),
        "sriov-config-daemon": Extra(DsDef(
            key="sriov-config-daemon", name=SRIOV_CD, namespace=SRIOV_NS,
            labels={"app": SRIOV_CD, "component": "network", "type": "infra",
                    "openshift.io/component": "network"},
            containers=(CtrDef(SRIOV_CD, SRIOV_CD_IMAGE, command=(SRIOV_CD,), args=("start",),
                               privileged=True),),
            init=(CtrDef("sriov-cni", SRIOV_CNI_IMAGE, args=("--no-sleep",), privileged=True),
                  CtrDef("sriov-infiniband-cni", SRIOV_IB_CNI_IMAGE, args=("--no-sleep",), privileged=True)),
            node_selector={"kubernetes.io/os": "linux", "node-role.kubernetes.io/worker": ""},
            tolerations=({"operator": "Exists"},), service_account=SRIOV_CD, priority_class=NODE_CRITICAL,
            host_network=True, host_pid=True, match_labels={"app": SRIOV_CD}),
            node_labels={"node-role.kubernetes.io/worker": ""},
            namespaces=(SRIOV_NS, "openshift-sriov-network-operator", "network-operator",
                        "nvidia-network-operator")),
    }


def static_device_plugin() -> DsDef:
    """NVIDIA/k8s-device-plugin's static manifest (deployments/static/nvidia-device-plugin.yml,
    the Helm chart renders the same shape): kube-system, selected by name=nvidia-device-plugin-ds,
    tolerating only nvidia.com/gpu:NoSchedule, no operator nodeSelector, no RuntimeClass."""
    return DsDef(
        key="device-plugin", name="nvidia-device-plugin-daemonset", namespace="kube-system",
        labels={"name": "nvidia-device-plugin-ds"},
        containers=(CtrDef("nvidia-device-plugin-ctr", IMAGES["device-plugin"],
                           env=(("FAIL_ON_INIT_ERROR", "false"),)),),
        tolerations=(GPU_TOLERATION,), priority_class=NODE_CRITICAL,
        match_labels={"name": "nvidia-device-plugin-ds"})


def deploy(world: World, node: NodeState, component: str, namespace: str | None = None) -> None:
    """Deploy ``component`` as it runs for real, its DaemonSet selecting ``node`` (in
    ``namespace``, where the report names the one its pod runs in)."""
    extra = extras()[component]
    for key, value in extra.node_labels.items():
        node.labels.setdefault(key, value)
    if extra.daemonset is not None:
        _add_daemonset(world, replace(extra.daemonset, namespace=namespace or extra.daemonset.namespace))
    if extra.deployment is not None:
        _add_deployment(world, extra.deployment)
