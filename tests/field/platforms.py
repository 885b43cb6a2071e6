"""How each platform shapes a GPU node object: nodeInfo fields and the labels it sets.

Values are as those platforms' nodes show them in ``kubectl get node -o json``
(GKE/EKS/AKS node labels and OS images, OpenShift's RHCOS with CRI-O, the
``+rke2r1``/``+k3s1`` kubelet suffixes, a MicroK8s node's hostname label).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpunode.sim.world import NodeState, World


@dataclass(frozen=True)
class Shape:
    """What a platform sets on its nodes."""

    node_info: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)


SHAPES: dict[str, Shape] = {
    "ubuntu": Shape(),
    "generic": Shape(),
    "rhel": Shape(
        {
            "osImage": "Red Hat Enterprise Linux 9.4 (Plow)",
            "kernelVersion": "5.14.0-427.13.1.el9_4.x86_64",
        },
        {
            "feature.node.kubernetes.io/system-os_release.ID": "rhel",
            "feature.node.kubernetes.io/system-os_release.VERSION_ID": "9.4",
        },
    ),
    "openshift": Shape(
        {
            "osImage": "Red Hat Enterprise Linux CoreOS 415.92.202402201450-0 (Plow)",
            "containerRuntimeVersion": "cri-o://1.28.3-14.rhaos4.15.git33aabd8.el9",
            "kernelVersion": "5.14.0-284.54.1.el9_2.x86_64",
            "kubeletVersion": "v1.28.6+6216ea1",
        },
        {
            "node-role.kubernetes.io/worker": "",
            "node.openshift.io/os_id": "rhcos",
            "feature.node.kubernetes.io/system-os_release.ID": "rhcos",
            "feature.node.kubernetes.io/system-os_release.VERSION_ID": "4.15",
        },
    ),
    "gke": Shape(
        {
            "osImage": "Container-Optimized OS from Google",
            "containerRuntimeVersion": "containerd://1.7.15",
            "kernelVersion": "6.1.85+",
            "kubeletVersion": "v1.29.6-gke.1038001",
        },
        {
            "cloud.google.com/gke-accelerator": "nvidia-h100-80gb",
            "cloud.google.com/gke-nodepool": "gpu-pool",
            "cloud.google.com/gke-os-distribution": "cos",
            "cloud.google.com/gke-gpu": "true",
            "node.kubernetes.io/instance-type": "a3-highgpu-8g",
        },
    ),
    "eks": Shape(
        {
            "osImage": "Amazon Linux 2",
            "containerRuntimeVersion": "containerd://1.7.11",
            "kernelVersion": "5.10.210-201.852.amzn2.x86_64",
            "kubeletVersion": "v1.29.0-eks-5e0fdde",
        },
        {
            "eks.amazonaws.com/nodegroup": "gpu-ng",
            "eks.amazonaws.com/capacityType": "ON_DEMAND",
            "node.kubernetes.io/instance-type": "p5.48xlarge",
            "topology.kubernetes.io/region": "us-east-1",
        },
    ),
    "aks": Shape(
        {
            "osImage": "Ubuntu 22.04.4 LTS",
            "containerRuntimeVersion": "containerd://1.7.15-1",
            "kernelVersion": "5.15.0-1064-azure",
            "kubeletVersion": "v1.29.4",
        },
        {
            "kubernetes.azure.com/agentpool": "gpupool",
            "kubernetes.azure.com/cluster": "MC_rg_aks_eastus",
            "kubernetes.azure.com/accelerator": "nvidia",
            "node.kubernetes.io/instance-type": "Standard_ND96isr_H100_v5",
        },
    ),
    "rke2": Shape(
        {"kubeletVersion": "v1.29.4+rke2r1", "containerRuntimeVersion": "containerd://1.7.11-k3s2"}
    ),
    "k3s": Shape({"kubeletVersion": "v1.29.4+k3s1", "containerRuntimeVersion": "containerd://1.7.11-k3s2"}),
    "microk8s": Shape(
        {"kubeletVersion": "v1.29.4", "containerRuntimeVersion": "containerd://1.6.28"},
        {"microk8s.io/cluster": "true", "node.kubernetes.io/microk8s-worker": "microk8s-worker"},
    ),
    "crio": Shape({"containerRuntimeVersion": "cri-o://1.29.1"}),
    "docker": Shape({"containerRuntimeVersion": "docker://24.0.7", "kubeletVersion": "v1.23.17"}),
}


#: The platform's stand-in instance type by the node's GPU count: a size of the same cloud with
#: that many whole GPUs (data/instance_gpus.toml), so a node's size never contradicts the GPUs it
#: was built with; a count no size here has leaves the node without an instance type.
_SIZES: dict[str, dict[int, str]] = {
    "gke": {1: "a3-highgpu-1g", 2: "a3-highgpu-2g", 4: "a3-highgpu-4g", 8: "a3-highgpu-8g"},
    "eks": {1: "p5.4xlarge", 2: "g3.8xlarge", 4: "p3.8xlarge", 8: "p5.48xlarge"},
    "aks": {1: "Standard_NC40ads_H100_v5", 2: "Standard_NC80adis_H100_v5", 4: "Standard_NC96ads_A100_v4",
            8: "Standard_ND96isr_H100_v5"},
}
_INSTANCE_TYPE = "node.kubernetes.io/instance-type"


def _sized(platform: str, labels: dict[str, str], gpus: int) -> dict[str, str]:
    """The platform's labels with its instance type fitted to ``gpus`` (``_SIZES``)."""
    if _INSTANCE_TYPE not in labels:
        return labels
    fitted = {key: value for key, value in labels.items() if key != _INSTANCE_TYPE}
    size = _SIZES.get(platform, {}).get(gpus)
    return {**fitted, _INSTANCE_TYPE: size} if size else fitted


def apply_platform(world: World, node: NodeState, platform: str, *, runtime_named: bool = False) -> None:
    """Shape the affected node (and its GPU siblings) as the platform would. A case that
    names its runtime (``cluster.runtime``) keeps the version the simulator gave that
    runtime: the platform's usual containerd 1.x beside a containerd 2 config (version 3)
    is a node no one runs."""
    shape = SHAPES[platform]
    kept = ("containerRuntimeVersion",) if runtime_named else ()
    info = {key: value for key, value in shape.node_info.items() if key not in kept}
    for other in world.gpu_nodes():
        other.obj["status"]["nodeInfo"].update(info)
        other.labels.update(_sized(platform, shape.labels, len(other.gpus)))
    if node.name not in {n.name for n in world.gpu_nodes()}:
        node.obj["status"]["nodeInfo"].update(info)
