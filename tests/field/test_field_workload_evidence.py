"""The evidence kinds a case uses for what a report shows beyond the stack's own pods: the
node's taints, a GPU workload pod's own spec and state, and the events of the controllers
that create workload pods. Each is rendered as the API shows it (shapes from public
reports: volcano-sh/volcano#2907, Project-HAMi/HAMi#1173, NVIDIA/k8s-device-plugin#33)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml
from builder import build_case
from case import Case, CaseError, load_case


def _case(*evidence: dict[str, Any]) -> Case:
    raw = {"id": "x", "source": "https://example.org/x", "title": "t", "platform": "ubuntu",
           "expect": {"healthy": True}, "evidence": list(evidence)}
    return msgspec.convert(raw, Case)


def _items(out: Path, resource: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = json.loads((out / f"cluster/{resource}.json").read_text())["items"]
    return items


def _pod(out: Path, name: str, namespace: str = "default") -> dict[str, Any]:
    return next(p for p in _items(out, "pods")
                if p["metadata"]["name"] == name and p["metadata"]["namespace"] == namespace)


def _node(out: Path, name: str = "gpu-wk-01") -> dict[str, Any]:
    return next(n for n in _items(out, "nodes") if n["metadata"]["name"] == name)


def test_node_taints_are_merged_into_the_nodes_spec(tmp_path: Path) -> None:
    out = build_case(_case({"kind": "node-taints", "taints": [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
        {"key": "dedicated", "effect": "NoExecute"}]}), tmp_path / "b")
    taints = _node(out)["spec"]["taints"]
    assert {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"} in taints
    assert {"key": "dedicated", "effect": "NoExecute"} in taints


def test_a_taint_no_daemonset_tolerates_keeps_its_pods_off_the_node(tmp_path: Path) -> None:
    """The DaemonSet controller follows the taint: every stack DaemonSet that does not
    tolerate it has no pod on the tainted node (the taints are applied before pods)."""
    out = build_case(_case({"kind": "node-taints", "taints": [{"key": "team", "value": "ml",
                                                                  "effect": "NoSchedule"}]}), tmp_path / "b")
    on_node = [p for p in _items(out, "pods") if p["spec"].get("nodeName") == "gpu-wk-01"
               and any(o["kind"] == "DaemonSet" for o in p["metadata"].get("ownerReferences", []))]
    assert on_node  # those that tolerate every taint stay
    for pod in on_node:
        tolerations = pod["spec"].get("tolerations", [])
        tolerates_all = any(t.get("operator") == "Exists" and not t.get("key") for t in tolerations)
        assert tolerates_all, pod["metadata"]["name"]


def test_a_pending_workload_has_no_node_and_the_schedulers_condition(tmp_path: Path) -> None:
    message = "0/1 nodes are unavailable: 1 no enough gpu cards on node ."
    out = build_case(_case(
        {"kind": "workload", "name": "gpu-pod12", "container": "ubuntu-container", "image": "ubuntu:18.04",
         "schedulerName": "volcano", "resources": {"limits": {"volcano.sh/vgpu-number": "2",
                                                              "volcano.sh/vgpu-memory": "2000"}},
         "state": "Pending", "message": message},
        {"kind": "event", "object": {"kind": "Pod", "name": "gpu-pod12"}, "reason": "FailedScheduling",
         "message": message}), tmp_path / "b")
    pod = _pod(out, "gpu-pod12")
    assert "nodeName" not in pod["spec"] and pod["spec"]["schedulerName"] == "volcano"
    ctr = pod["spec"]["containers"][0]
    assert ctr["name"] == "ubuntu-container" and ctr["image"] == "ubuntu:18.04"
    assert ctr["resources"]["requests"] == ctr["resources"]["limits"] == {
        "volcano.sh/vgpu-number": "2", "volcano.sh/vgpu-memory": "2000"}
    assert pod["status"]["phase"] == "Pending" and "containerStatuses" not in pod["status"]
    (cond,) = pod["status"]["conditions"]
    assert (cond["type"], cond["status"], cond["reason"], cond["message"]) == (
        "PodScheduled", "False", "Unschedulable", message)
    (ev,) = [e for e in _items(out, "events") if e["involvedObject"]["name"] == "gpu-pod12"]
    assert ev["source"]["component"] == "volcano"  # the pod's own scheduler records it


def test_a_pod_no_running_scheduler_has_seen_has_no_condition(tmp_path: Path) -> None:
    out = build_case(_case({"kind": "workload", "name": "gpu-pod2", "schedulerName": "hami-scheduler",
                            "resources": {"limits": {"nvidia.com/gpu": "2"}}, "state": "Pending"}),
                     tmp_path / "b")
    status = _pod(out, "gpu-pod2")["status"]
    assert status["phase"] == "Pending" and "conditions" not in status


def test_a_crash_looping_workload_restarts_with_its_exit_code(tmp_path: Path) -> None:
    out = build_case(_case({"kind": "workload", "name": "train-0", "namespace": "ml",
                            "state": "CrashLoopBackOff", "restarts": 4, "exit_code": 2,
                            "message": "CUDA error: no CUDA-capable device"}),
                     tmp_path / "b")
    pod = _pod(out, "train-0", "ml")
    assert pod["spec"]["restartPolicy"] == "Always" and pod["spec"]["nodeName"] == "gpu-wk-01"
    (cs,) = pod["status"]["containerStatuses"]
    assert cs["state"]["waiting"]["reason"] == "CrashLoopBackOff" and cs["restartCount"] == 4
    last = cs["lastState"]["terminated"]
    assert (last["exitCode"], last["reason"]) == (2, "Error")
    assert last["message"] == "CUDA error: no CUDA-capable device"


def test_a_workload_that_ended_in_error_is_failed_with_its_message(tmp_path: Path) -> None:
    out = build_case(_case({"kind": "workload", "state": "Error", "exit_code": 128, "reason": "StartError",
                            "message": "failed to create containerd task"}), tmp_path / "b")
    pod = _pod(out, "gpu-pod")
    assert pod["status"]["phase"] == "Failed"
    term = pod["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (term["exitCode"], term["reason"], term["message"]) == (128, "StartError",
                                                                   "failed to create containerd task")


def test_runtime_class_claims_and_qos_are_the_pods_own(tmp_path: Path) -> None:
    out = build_case(_case({"kind": "workload", "runtimeClassName": "nvidia",
                            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "single-gpu"}],
                            "resources": {"limits": {"cpu": "4", "memory": "4Gi", "nvidia.com/gpu": "1"},
                                          "requests": {"cpu": "1", "memory": "1Gi"}}}), tmp_path / "b")
    pod = _pod(out, "gpu-pod")
    spec = pod["spec"]
    assert spec["runtimeClassName"] == "nvidia" and spec["restartPolicy"] == "Never"
    assert spec["resourceClaims"] == [{"name": "gpu", "resourceClaimTemplateName": "single-gpu"}]
    resources = spec["containers"][0]["resources"]
    assert resources["claims"] == [{"name": "gpu"}]
    assert resources["requests"] == {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "1"}
    assert pod["status"]["qosClass"] == "Burstable"
    assert pod["status"]["containerStatuses"][0]["state"]["running"]


@pytest.mark.parametrize(("kind", "api", "source"), [
    ("ReplicaSet", "apps/v1", "replicaset-controller"), ("Deployment", "apps/v1", "deployment-controller"),
    ("Job", "batch/v1", "job-controller"), ("StatefulSet", "apps/v1", "statefulset-controller")])
def test_a_controllers_event_names_it_as_the_controller_writes_it(tmp_path: Path, kind: str, api: str,
                                                                   source: str) -> None:
    message = ('Error creating: admission webhook "vgpu.hami.io" denied the request: '
               "resource nvidia.com/gpumem is not allowed")
    involved_object = {"kind": kind, "name": "infer-7d9c", "namespace": "ml"}
    out = build_case(_case({"kind": "event", "object": involved_object, "reason": "FailedCreate",
                            "message": message, "count": 14}), tmp_path / "b")
    (ev,) = [e for e in _items(out, "events") if e["involvedObject"]["kind"] == kind]
    involved = ev["involvedObject"]
    assert (involved["apiVersion"], involved["name"], involved["namespace"]) == (api, "infer-7d9c", "ml")
    assert involved["uid"] and ev["metadata"]["namespace"] == "ml"
    assert (ev["source"]["component"], ev["reason"], ev["count"]) == (source, "FailedCreate", 14)
    assert ev["message"] == message


def test_a_pending_workload_wrote_no_log() -> None:
    case = _case({"kind": "workload", "name": "p", "state": "Pending"},
                 {"kind": "log", "object": {"kind": "Pod", "name": "p"}, "text": "hello"})
    with pytest.raises(CaseError, match="Pending"):
        build_case(case, Path("/nonexistent"))


@pytest.mark.parametrize(("item", "error"), [
    ({"kind": "workload", "state": "Sleeping"}, "unknown workload state"),
    ({"kind": "event", "object": {"kind": "Job"}, "reason": "FailedCreate", "message": "m"}, "names the Job"),
    ({"kind": "log", "object": {"kind": "ReplicaSet", "name": "r"}, "text": "t"}, "a log is a Pod's"),
    ({"kind": "node-taints", "taints": [{"key": "k", "effect": "NoWhere"}]}, "effect"),
])
def test_the_schema_refuses_what_the_api_cannot_show(tmp_path: Path, item: dict[str, Any],
                                                     error: str) -> None:
    raw = {"id": "bad", "source": "https://example.org/x", "title": "t", "platform": "ubuntu",
           "expect": {"healthy": True}, "evidence": [item]}
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(raw))
    with pytest.raises(CaseError, match=error):
        load_case(tmp_path / "bad.yaml")


def test_a_workload_refused_at_admission_carries_its_events_words(tmp_path: Path) -> None:
    """The kubelet writes the same refusal into the pod's status and its event."""
    message = ("Allocate failed due to rpc error: code = Unknown desc = failed to find gpu id, "
               "which is unexpected")
    out = build_case(_case(
        {"kind": "workload", "name": "p", "resources": {"limits": {"volcano.sh/gpu-memory": "1024"}},
         "schedulerName": "volcano", "state": "UnexpectedAdmissionError"},
        {"kind": "event", "object": {"kind": "Pod", "name": "p"}, "reason": "UnexpectedAdmissionError",
         "message": message}), tmp_path / "b")
    status = _pod(out, "p")["status"]
    assert (status["phase"], status["reason"]) == ("Failed", "UnexpectedAdmissionError")
    assert status["message"] == message
    assert "containerStatuses" not in status


def test_a_daemonsets_reported_tolerations_keep_its_pods_off_a_tainted_node(tmp_path: Path) -> None:
    """dcgm-exporter's chart defaults tolerate only the control plane (NVIDIA/dcgm-exporter#731):
    on a node tainted nvidia.com/gpu=true:NoSchedule the DaemonSet controller places no pod."""
    out = build_case(_case(
        {"kind": "node-taints",
         "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]},
        {"kind": "daemonset-tolerations", "component": "dcgm-exporter", "tolerations": [
            {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}]}),
        tmp_path / "b")
    (ds,) = [d for d in _items(out, "daemonsets") if "dcgm-exporter" in d["metadata"]["name"]]
    assert ds["spec"]["template"]["spec"]["tolerations"] == [
        {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}]
    name = ds["metadata"]["name"]
    assert not [p for p in _items(out, "pods")
                if p["metadata"]["name"].startswith(name) and p["spec"].get("nodeName") == "gpu-wk-01"]
