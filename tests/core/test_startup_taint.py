"""A CSI driver's startup taint (<domain>/agent-not-ready, removed by its node plugin once
ready: kubernetes-sigs/aws-ebs-csi-driver#1949, kubernetes-sigs/aws-efs-csi-driver#1320,
chanzuckerberg/cztack#893) still on a node whose CSI node plugin runs ready is the plugin's
failure, not the GPU operands' missing toleration. While the plugin is not ready the taint is
doing its job, and a taint of another name stays the operands' own."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from gpunode.bundle.kube import Node, Pod
from gpunode.startup_taints import left_startup_taint, startup_taint_owner


def _node(*taints: dict[str, str]) -> Node:
    return msgspec.convert({"metadata": {"name": "gpu-wk-01"}, "spec": {"taints": list(taints)}}, Node)


def _pod(ready: bool, running: bool = True) -> Pod:
    state: dict[str, Any] = {"running": {"startedAt": "2025-05-12T14:20:39Z"}} if running else {
        "waiting": {"reason": "ContainerCreating"}}
    data = {"metadata": {"name": "efs-csi-node-x", "namespace": "kube-system"},
            "status": {"phase": "Running" if running else "Pending",
                       "containerStatuses": [{"name": "efs-plugin", "ready": ready, "state": state}]}}
    return msgspec.convert(data, Pod)


EFS = {"key": "efs.csi.aws.com/agent-not-ready", "effect": "NoSchedule"}


@pytest.mark.parametrize(("key", "owner"), [
    ("efs.csi.aws.com/agent-not-ready", "csi-node"),
    ("ebs.csi.aws.com/agent-not-ready", "csi-node"),
    # another agent's startup taint, a CSI domain's other taint, the GPU taint: not the CSI node's
    ("node.cilium.io/agent-not-ready", None),
    ("ebs.csi.aws.com/maintenance", None),
    ("nvidia.com/gpu", None),
])
def test_owner_by_key(key: str, owner: str | None) -> None:
    assert startup_taint_owner(key) == owner


def test_ready_plugin_with_its_taint_still_there() -> None:
    taint = left_startup_taint(_node(EFS), "csi-node", [_pod(ready=True)])
    assert taint is not None and taint.key == EFS["key"]


@pytest.mark.parametrize("pods", [
    [_pod(ready=False)],                  # still starting: the taint is doing its job
    [_pod(ready=False, running=False)],
    [],                                   # no plugin pod here: nothing says who failed
])
def test_taint_while_the_plugin_is_not_ready_is_no_failure(pods: list[Pod]) -> None:
    assert left_startup_taint(_node(EFS), "csi-node", pods) is None


def test_look_alikes_stay_silent() -> None:
    ready = [_pod(ready=True)]
    # a ready plugin and only the GPU taint; a PreferNoSchedule startup taint keeps nothing off
    gpu = {"key": "nvidia.com/gpu", "effect": "NoSchedule"}
    assert left_startup_taint(_node(gpu), "csi-node", ready) is None
    assert left_startup_taint(_node({**EFS, "effect": "PreferNoSchedule"}), "csi-node", ready) is None
    assert left_startup_taint(_node(), "csi-node", ready) is None
