"""What the engine reads of a GPU workload, a node's taints and a workload controller's
events survives the collector's projection (docs/bundle-format.md) and parses into the
model: the pod's resources (other resource names than nvidia.com/gpu, a request of 0), its
scheduler, RuntimeClass, ResourceClaims and state; the node's taints; a ReplicaSet's
FailedCreate. Shapes as the API returns them for the pods of public reports
(volcano-sh/volcano#2907, Project-HAMi/HAMi#1173, kubernetes/kubernetes#128854)."""

from __future__ import annotations

from typing import Any

import msgspec

from gpunode.bundle import kube
from gpunode.bundle.projection import project


def _pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "gpu-pod12", "namespace": "default", "uid": "0b6c6d0e-1",
                     "resourceVersion": "9182", "creationTimestamp": "2026-12-06T01:00:00Z",
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                          "name": "jktest-5d9c8b7f6d", "uid": "u", "controller": True}]},
        "spec": {
            "schedulerName": "volcano", "runtimeClassName": "nvidia", "restartPolicy": "Always",
            "containers": [{"name": "ubuntu-container", "image": "ubuntu:18.04",
                            "command": ["bash", "-c", "sleep 86400"],
                            "resources": {"limits": {"volcano.sh/vgpu-number": "2", "nvidia.com/gpu": "0"},
                                          "requests": {"volcano.sh/vgpu-number": "2", "nvidia.com/gpu": "0"},
                                          "claims": [{"name": "gpu"}]}}],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "single-gpu"}],
        },
        "status": {
            "phase": "Pending", "qosClass": "BestEffort",
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                            "lastProbeTime": None, "lastTransitionTime": "2026-12-06T01:00:01Z",
                            "message": "0/1 nodes are unavailable: 1 no enough gpu cards on node ."}],
        },
    }


def test_a_workload_pods_spec_and_scheduling_state_are_kept() -> None:
    pod = msgspec.convert(project("pods", _pod()), kube.Pod)
    spec = pod.spec
    assert (spec.scheduler_name, spec.runtime_class_name) == ("volcano", "nvidia")
    assert [c.name for c in spec.resource_claims] == ["gpu"]
    assert spec.containers[0].resources.limits == {"volcano.sh/vgpu-number": "2", "nvidia.com/gpu": "0"}
    assert spec.containers[0].resources.requests["nvidia.com/gpu"] == "0"
    assert spec.target_node == ""  # not scheduled: on no node
    (cond,) = pod.status.conditions
    assert (pod.status.phase, cond.type, cond.status, cond.reason) == ("Pending", "PodScheduled", "False",
                                                                       "Unschedulable")
    assert "no enough gpu cards" in cond.message
    assert [(o.kind, o.name) for o in pod.metadata.owner_references] == [("ReplicaSet", "jktest-5d9c8b7f6d")]


def test_a_crash_looping_workloads_last_run_is_kept() -> None:
    raw = _pod()
    raw["spec"]["nodeName"] = "gpu-wk-01"
    raw["status"] = {"phase": "Running", "containerStatuses": [{
        "name": "ubuntu-container", "ready": False, "restartCount": 4, "image": "ubuntu:18.04", "imageID": "",
        "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s restarting failed"}},
        "lastState": {"terminated": {"exitCode": 2, "reason": "Error", "message": "no CUDA-capable device",
                                     "startedAt": "2026-12-06T01:00:00Z",
                                     "finishedAt": "2026-12-06T01:00:03Z"}}}]}
    pod = msgspec.convert(project("pods", raw), kube.Pod)
    (cs,) = pod.status.container_statuses
    assert cs.restart_count == 4
    assert cs.state.waiting is not None and cs.state.waiting.reason == "CrashLoopBackOff"
    last = cs.last_state.terminated
    assert last is not None
    assert (last.exit_code, last.reason, last.message) == (2, "Error", "no CUDA-capable device")


def test_a_nodes_taints_are_kept() -> None:
    raw = {"apiVersion": "v1", "kind": "Node",
           "metadata": {"name": "gpu-wk-01", "uid": "n", "resourceVersion": "1",
                        "creationTimestamp": "2026-12-06T00:00:00Z"},
           "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"},
                               {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute",
                                "timeAdded": "2026-12-06T00:10:00Z"}]}}
    node = msgspec.convert(project("nodes", raw), kube.Node)
    assert [(t.key, t.value, t.effect) for t in node.spec.taints] == [
        ("nvidia.com/gpu", "true", "NoSchedule"), ("node.kubernetes.io/not-ready", "", "NoExecute")]


def test_a_replicasets_failed_create_is_kept() -> None:
    message = ('Error creating: admission webhook "vgpu.hami.io" denied the request: '
               "resource nvidia.com/gpumem is not allowed")
    raw = {"apiVersion": "v1", "kind": "Event",
           "metadata": {"name": "infer-7d9c.17e", "namespace": "ml", "uid": "e", "resourceVersion": "3",
                        "creationTimestamp": "2026-12-06T01:00:00Z"},
           "involvedObject": {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "infer-7d9c",
                              "namespace": "ml", "uid": "r", "resourceVersion": "2"},
           "reason": "FailedCreate", "message": message, "type": "Warning", "count": 14,
           "firstTimestamp": "2026-12-06T00:11:00Z", "lastTimestamp": "2026-12-06T01:00:00Z",
           "source": {"component": "replicaset-controller"}}
    ev = msgspec.convert(project("events", raw), kube.Event)
    assert (ev.involved_object.kind, ev.involved_object.name, ev.involved_object.namespace) == (
        "ReplicaSet", "infer-7d9c", "ml")
    assert (ev.reason, ev.message, ev.source.component, ev.count) == ("FailedCreate", message,
                                                                      "replicaset-controller", 14)
