"""A device plugin's answer to the kubelet's Allocate belongs to the plugin serving the
resource the pod asked for; where no pod seen on the node serves it, the one catalogued
component that can advertise that resource (Volcano's plugin for volcano.sh/*), never a
guess among several (nvidia.com/gpu: NVIDIA's, HAMi's or GKE's plugin)."""

from __future__ import annotations

import msgspec
import pytest

from gpunode.bundle.kube import Pod
from gpunode.catalog import load_catalog
from gpunode.checks.admission import KUBELET, NodeServing, admission_names, sole_advertiser

#: volcano-sh/devices#17: a pod asking volcano.sh/gpu-memory, refused at admission.
VOLCANO = "Allocate failed due to rpc error: code = Unknown desc = failed to find gpu id, which is unexpected"


def _pod(limits: dict[str, str]) -> Pod:
    return msgspec.convert({"metadata": {"name": "gpu-pod", "namespace": "default"},
                            "spec": {"schedulerName": "volcano",
                                     "containers": [{"name": "cuda", "resources": {"limits": limits}}]}}, Pod)


@pytest.mark.parametrize(("resource", "owner"), [
    ("volcano.sh/gpu-memory", "volcano-device-plugin"), ("volcano.sh/vgpu-number", "volcano-device-plugin"),
    ("nvidia.com/gpu", None), ("k8s.amazonaws.com/vgpu", None)])
def test_only_a_resource_one_component_can_advertise_has_a_sole_advertiser(resource: str,
                                                                          owner: str | None) -> None:
    assert sole_advertiser(load_catalog(), resource) == owner


def test_a_plugins_answer_for_a_resource_no_pod_seen_serves_is_its_sole_advertisers() -> None:
    serving = NodeServing({"volcano.sh/gpu-memory": "32510", "nvidia.com/gpu": "2"}, ("device-plugin",))
    pod = _pod({"volcano.sh/gpu-memory": "1024"})
    assert admission_names(load_catalog(), VOLCANO, None, pod, serving) == "volcano-device-plugin"


def test_a_running_plugin_that_serves_the_resource_is_still_the_one_named() -> None:
    serving = NodeServing({"nvidia.com/gpu": "2"}, ("device-plugin", "hami-device-plugin"))
    line = ("Allocate failed due to rpc error: code = Unknown desc = no binding pod found on node "
            "k8s-master, which is unexpected")  # Project-HAMi/HAMi#653
    named = admission_names(load_catalog(), line, None, _pod({"nvidia.com/gpu": "1"}), serving)
    assert named == "hami-device-plugin"


def test_an_answer_for_a_resource_several_plugins_can_serve_is_not_guessed() -> None:
    """No pod seen serves nvidia.com/gpu and three catalogued plugins could: the kubelet's
    refusal stays the kubelet's rather than a guess."""
    serving = NodeServing({"nvidia.com/gpu": "1"}, ())
    line = "Allocate failed due to rpc error: code = Unknown desc = unknown device, which is unexpected"
    assert admission_names(load_catalog(), line, None, _pod({"nvidia.com/gpu": "1"}), serving) == KUBELET


#: kubernetes-sigs/kube-batch#931: TF-Job workers kube-batch placed on a node whose GPUs were
#: all held, refused by the kubelet's device manager.
COUNTED_OUT = ("Pod Update plugin resources failed due to requested number of devices unavailable for "
               "nvidia.com/gpu. Requested: 1, Available: 0, which is unexpected")


def _placed_by(scheduler: str) -> Pod:
    return msgspec.convert({"metadata": {"name": "worker-0", "namespace": "ml"},
                            "spec": {"schedulerName": scheduler, "containers": [
                                {"name": "tf", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}, Pod)


def test_a_count_refusal_of_a_pod_a_scheduler_outside_the_stack_placed_names_no_failure() -> None:
    serving = NodeServing({"nvidia.com/gpu": "8"}, ("device-plugin",))
    assert admission_names(load_catalog(), COUNTED_OUT, None, _placed_by("kube-batch"), serving) is None


@pytest.mark.parametrize("scheduler", ["default-scheduler", "hami-scheduler", "volcano", ""])
def test_the_same_refusal_of_a_pod_the_stacks_schedulers_placed_stays_the_kubelets(scheduler: str) -> None:
    serving = NodeServing({"nvidia.com/gpu": "8"}, ("device-plugin",))
    assert admission_names(load_catalog(), COUNTED_OUT, None, _placed_by(scheduler), serving) == KUBELET
