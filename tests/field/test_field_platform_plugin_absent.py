"""A platform that runs its own GPU device plugin as a DaemonSet pod (GKE's
nvidia-gpu-device-plugin) and left a GPU node without any: no plugin pod there, nothing of
its resource allocatable, and GPU pods waiting "Insufficient nvidia.com/gpu". Reports of the
form: GoogleCloudPlatform/container-engine-accelerators#196 (a GPU pool added to an older
cluster got no plugin until its DaemonSet was applied by hand), kubernetes/kubernetes#55005
(a GKE 1.8 GPU pool with the driver installed exposed no GPU), MicrosoftDocs/azure-docs#11492
(AKS 1.10: no GPU under capacity until the plugin DaemonSet was applied). Look-alikes: a
node that advertises the GPU (polyaxon/polyaxon#128, GKE with nvidia.com/gpu: 1), a node
pool handed to another plugin, the same node on a platform that runs no plugin of its own."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

_MISSING = ("gke-device-plugin", "component_missing")


def _gke(*extra: dict[str, Any], platform: str = "gke") -> Case:
    """A GKE GPU node with no plugin pod and a GPU pod the scheduler left waiting."""
    return synthetic_case("x-platform-plugin", [
        {"kind": "workload", "name": "gpu-pod", "namespace": "default", "state": "Pending",
         "resources": {"limits": {"nvidia.com/gpu": "1"}},
         "message": "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."},
        *extra,
    ], platform=platform, healthy=False,
        cluster={"driver_mode": "host", "components": [], "runtime_class": False})


def test_no_platform_plugin_on_a_gpu_node_is_missing() -> None:
    assert top_pair(_gke()) == _MISSING


def test_a_node_that_advertises_the_gpu_is_not_missing_a_plugin() -> None:
    """polyaxon/polyaxon#128: the GKE node showed nvidia.com/gpu: 1; the pods waited for
    another reason."""
    assert top_pair(_gke({"kind": "node-capacity", "resources": {"nvidia.com/gpu": "1"}})) != _MISSING


def test_a_pool_handed_to_another_plugin_is_not_missing_gkes() -> None:
    """GKE's label that turns its own plugin off leaves the GPUs to another plugin."""
    labelled = _gke({"kind": "node-labels", "labels": {"gke-no-default-nvidia-gpu-device-plugin": "true"}})
    assert top_pair(labelled) != _MISSING


def test_a_platform_without_its_own_plugin_is_not_this_reading() -> None:
    """The same node on a self-managed cluster: NVIDIA's plugin is judged, not GKE's."""
    assert top_pair(_gke(platform="generic")) != _MISSING
