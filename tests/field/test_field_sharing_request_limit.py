"""GKE's device plugin refuses, at admission, a container asking for more shared GPUs than its
sharing mode serves one container (GoogleCloudPlatform/container-engine-accelerators,
pkg/gpu/nvidia/gpusharing ValidateRequest; GKE's "About GPU sharing strategies": on time-sharing
and MPS nodes a container may request one nvidia.com/gpu). The refusal is the pod's own request,
so the node's stack stays healthy. The same words for a pod whose containers ask no more than
the limit do not fit the pod, and the refusal is still reported."""

from __future__ import annotations

from typing import Any

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.checks.admission import over_sharing_limit

_RPC = "Allocate failed due to rpc error: code = Unknown desc = "
TIME_SHARING = (f"Pod {_RPC}[invalid request for sharing GPU (time-sharing), at most 1 nvidia.com/gpu can be "
                "requested on GPU nodes], which is unexpected")
_MULTI = "at most 1 nvidia.com/gpu can be requested on multi-GPU nodes"
MPS = f"{_RPC}invalid request for sharing GPU (MPS), {_MULTI}"
UNNAMED = f"{_RPC}invalid request for sharing GPU, {_MULTI}"


def _case(message: str, asked: str, *, event: bool = False) -> Case:
    workload: dict[str, Any] = {"kind": "workload", "name": "shared-gpu-job", "namespace": "default",
                                "container": "cuda", "resources": {"limits": {"nvidia.com/gpu": asked}},
                                "state": "UnexpectedAdmissionError", "message": message}
    evidence: list[dict[str, Any]] = [
        {"kind": "node-labels", "labels": {"cloud.google.com/gke-accelerator": "nvidia-tesla-t4",
                                           "cloud.google.com/gke-gpu-sharing-strategy": "TIME_SHARING",
                                           "cloud.google.com/gke-max-shared-clients-per-gpu": "2"}},
        {"kind": "node-capacity", "resources": {"nvidia.com/gpu": "2"}},
        {"kind": "pod-state", "component": "gke-device-plugin", "state": "Running"}, workload]
    if event:
        evidence.append({"kind": "event", "type": "Warning", "reason": "UnexpectedAdmissionError",
                         "object": {"kind": "Pod", "name": "shared-gpu-job", "namespace": "default"},
                         "message": message})
    cluster = {"driver_mode": "host", "components": [], "gpu_node": {"gpus": 1, "gpu": "Tesla T4"}}
    return synthetic_case("x-sharing-limit", evidence, platform="gke", cluster=cluster)


@pytest.mark.parametrize("message", [TIME_SHARING, MPS, UNNAMED])
def test_a_request_over_the_sharing_limit_is_the_pods_own(message: str) -> None:
    assert top_pair(_case(message, "2")) is None
    assert top_pair(_case(message, "3", event=True)) is None


def test_the_words_for_a_pod_within_the_limit_stay_a_refusal() -> None:
    """A pod asking one shared GPU did not ask too much: whatever made the plugin say so is not
    the pod's request."""
    assert top_pair(_case(TIME_SHARING, "1")) is not None


def test_other_refusals_are_not_the_limit() -> None:
    assert not over_sharing_limit(None, "request for 'nvidia.com/gpu: 2' too large: maximum request size for "
                                        "shared resources is 1, which is unexpected")
    assert not over_sharing_limit(None, "Allocate failed due to requested number of devices unavailable for "
                                        "nvidia.com/gpu. Requested: 2, Available: 1, which is unexpected")
    assert over_sharing_limit(None, TIME_SHARING)
