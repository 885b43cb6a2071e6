"""How a healthy GPU node looks under MIG, time-slicing, MPS or vGPU.

Labels, capacity and GPU state follow what real nodes show (NVIDIA's MIG and GPU
sharing documentation, gpu-stack-facts §3-§4): MIG ``single`` advertises instances
as ``nvidia.com/gpu`` and GFD counts them in ``gpu.count``; MIG ``mixed`` advertises
``nvidia.com/mig-<profile>``; time-slicing and MPS multiply the count by the replicas
and mark the product ``-SHARED``; a vGPU guest reports ``VGPU`` virtualisation and its
DCGM exporter serves no temperature.
"""

from __future__ import annotations

from collections import Counter

from gpunode.sim.nodes import GPU_RESOURCE, set_resource
from gpunode.sim.smi import MIG_PROFILES
from gpunode.sim.world import NodeState

SINGLE_PROFILE = "1g.10gb"
SINGLE_LAYOUT = (SINGLE_PROFILE,) * 7  # mig-parted's all-1g.10gb on an 80 GB GPU
MIXED_LAYOUT = ("1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb")  # all-balanced


def apply_gpu_mode(node: NodeState) -> None:
    """Reshape a healthy whole-GPU node into its spec's mode (no-op for ``whole``)."""
    spec = node.spec
    if spec is None or spec.gpu_mode == "whole":
        return
    {
        "mig-single": _mig_single,
        "mig-mixed": _mig_mixed,
        "time-slicing": _shared,
        "mps": _shared,
        "vgpu": _vgpu,
    }[spec.gpu_mode](node)


def _gfd(node: NodeState) -> bool:
    """GFD labelled the node (only then are its labels reshaped)."""
    return "nvidia.com/gpu.product" in node.labels


def _mig_single(node: NodeState) -> None:
    instances = len(node.gpus) * len(SINGLE_LAYOUT)
    _enable_mig(node, SINGLE_LAYOUT, "all-1g.10gb")
    if _gfd(node):
        _, sms, mem = MIG_PROFILES[SINGLE_PROFILE]
        node.labels.update(
            {
                "nvidia.com/mig.strategy": "single",
                "nvidia.com/gpu.product": f"{node.labels['nvidia.com/gpu.product']}-MIG-{SINGLE_PROFILE}",
                "nvidia.com/gpu.count": str(instances),
                "nvidia.com/gpu.memory": str(mem),
                "nvidia.com/gpu.multiprocessors": str(sms),
                "nvidia.com/gpu.slices.gi": "1",
                "nvidia.com/gpu.slices.ci": "1",
            }
        )
    if GPU_RESOURCE in node.obj["status"]["capacity"]:
        set_resource(node.obj, GPU_RESOURCE, str(instances), str(instances))


def _mig_mixed(node: NodeState) -> None:
    _enable_mig(node, MIXED_LAYOUT, "all-balanced")
    per_profile = Counter(MIXED_LAYOUT)
    advertised = GPU_RESOURCE in node.obj["status"]["capacity"]
    if _gfd(node):
        node.labels["nvidia.com/mig.strategy"] = "mixed"
    for profile, count in sorted(per_profile.items()):
        total = str(count * len(node.gpus))
        _, sms, mem = MIG_PROFILES[profile]
        if _gfd(node):
            prefix = f"nvidia.com/mig-{profile}"
            node.labels.update(
                {
                    f"{prefix}.count": total,
                    f"{prefix}.memory": str(mem),
                    f"{prefix}.multiprocessors": str(sms),
                }
            )
        if advertised:
            set_resource(node.obj, f"nvidia.com/mig-{profile}", total, total)
    if advertised:  # every GPU is in MIG mode: no whole GPU is advertised
        set_resource(node.obj, GPU_RESOURCE, None, None)


def _enable_mig(node: NodeState, layout: tuple[str, ...], config: str) -> None:
    for gpu in node.gpus:
        gpu.mig = True
    node.host.mig_profiles = layout
    if "nvidia.com/mig.config" in node.labels:
        node.labels["nvidia.com/mig.config"] = config


def _shared(node: NodeState) -> None:
    spec = node.spec
    assert spec is not None
    replicas = spec.replicas
    strategy = spec.gpu_mode
    if _gfd(node):
        node.labels.update(
            {
                "nvidia.com/gpu.replicas": str(replicas),
                "nvidia.com/gpu.sharing-strategy": strategy,
                "nvidia.com/gpu.product": f"{node.labels['nvidia.com/gpu.product']}-SHARED",
            }
        )
        if strategy == "mps":
            node.labels["nvidia.com/mps.capable"] = "true"
    if GPU_RESOURCE in node.obj["status"]["capacity"]:
        total = str(len(node.gpus) * replicas)
        set_resource(node.obj, GPU_RESOURCE, total, total)


def _vgpu(node: NodeState) -> None:
    for gpu in node.gpus:
        gpu.vgpu = True
    if _gfd(node):
        node.labels.update(
            {
                "nvidia.com/vgpu.present": "true",
                "nvidia.com/vgpu.host-driver-version": "550.127.06",
                "nvidia.com/vgpu.host-driver-branch": "r550_00",
            }
        )
