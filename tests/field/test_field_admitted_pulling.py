"""A GPU pod whose image pull fails (ErrImagePull, ImagePullBackOff) was admitted on its node:
the kubelet passes a pod's extended resources to the device manager while admitting it
(https://docs.openshift.com/container-platform/3.11/dev_guide/device_manager.html) and pulls
images only afterwards, so the node the builder writes advertises nvidia.com/gpu and a
registry's refusal is no evidence against the GPU stack. A GPU pod that is still Pending
leaves the node as it was."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from builder import build_case
from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.sim.nodes import GPU_RESOURCE

STATIC = {"driver_mode": "host", "components": [], "device_plugin": "static", "runtime_class": False,
          "gpu_node": {"gpus": 1, "gpu": "A100"}}
# KAITO's LoRA adapters page, Troubleshooting / Adapter image pull errors
UNAUTHORIZED = 'Failed to pull image "myacr.azurecr.io/adapter:0.0.1": unauthorized'


def _allocatable(case: Case) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = build_case(case, Path(tmp) / case.id)
        nodes = json.loads((out / "cluster" / "nodes.json").read_text())["items"]
    return next(dict(n["status"]["allocatable"]) for n in nodes if n["metadata"]["name"] == case.node)


def _pod(state: str, message: str = "") -> Case:
    return synthetic_case("x-admitted-pulling", [
        {"kind": "workload", "name": "workspace-0", "namespace": "default", "container": "workspace",
         "image": "mcr.microsoft.com/aks/kaito/base:0.0.1", "state": state, "message": message,
         "resources": {"limits": {"nvidia.com/gpu": "1"}}},
    ], platform="aks", cluster=STATIC)


def test_a_gpu_pod_pulling_its_image_shows_the_node_advertising() -> None:
    for state in ("ErrImagePull", "ImagePullBackOff"):
        case = _pod(state, UNAUTHORIZED)
        assert _allocatable(case).get(GPU_RESOURCE) == "1"
        assert top_pair(case) is None


def test_a_gpu_pod_still_pending_leaves_the_node_as_it_was() -> None:
    case = _pod("Pending")
    assert GPU_RESOURCE not in _allocatable(case)
    assert top_pair(case) == ("device-plugin", "device_plugin_zero_gpus")
