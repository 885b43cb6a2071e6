"""Rules that read a GPU workload's own spec, shown with the 'workload' evidence: the
resource it asks for names the plugin whose Allocate answered, and a resource it asks none
of leaves a refusal to the kubelet. Public lines: kubernetes/kubernetes#128854 (a Deployment
asking nvidia.com/gpu: "0" refused at admission), volcano-sh/devices#17 (a pod asking
volcano.sh/gpu-memory refused with the plugin's rpc error)."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import diagnose_case, top_pair

ZERO = ("Pod was rejected: Allocate failed due to no healthy devices present; cannot allocate unhealthy "
        "devices nvidia.com/gpu, which is unexpected")
VOLCANO = "Allocate failed due to rpc error: code = Unknown desc = failed to find gpu id, which is unexpected"


def _case(*evidence: dict[str, Any]) -> Case:
    raw = {"id": "x", "source": "https://example.org/x", "title": "t", "platform": "generic",
           "cluster": {"driver_mode": "host"}, "expect": {"healthy": True}, "evidence": list(evidence)}
    return msgspec.convert(raw, Case)


def _refused(limits: dict[str, str], message: str, **spec: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    return ({"kind": "workload", "name": "jktest-5d9c8b7f6d-x2x7q", "resources": {"limits": limits},
             "state": "UnexpectedAdmissionError", **spec},
            {"kind": "event", "object": {"kind": "Pod", "name": "jktest-5d9c8b7f6d-x2x7q"},
             "reason": "UnexpectedAdmissionError", "message": message})


def test_a_refusal_of_a_resource_the_pod_asks_none_of_is_the_kubelets() -> None:
    case = _case({"kind": "node-capacity", "resources": {"nvidia.com/gpu": "0"}},
                 *_refused({"nvidia.com/gpu": "0"}, ZERO))
    top = top_pair(case)
    assert top is not None and top[0] == "kubelet"


def test_the_same_refusal_of_a_gpu_the_pod_asks_for_stays_the_device_plugins() -> None:
    """Look-alike: a pod asking one GPU of a plugin with no healthy device is the plugin's."""
    case = _case({"kind": "node-capacity", "resources": {"nvidia.com/gpu": "0"}},
                 *_refused({"nvidia.com/gpu": "1"}, ZERO))
    top = top_pair(case)
    assert top is not None and top[0] == "device-plugin"


def test_a_plugins_answer_for_volcano_resources_is_volcanos_plugin_even_unseen() -> None:
    case = _case({"kind": "node-capacity", "resources": {"volcano.sh/gpu-memory": "32510"}},
                 *_refused({"volcano.sh/gpu-memory": "1024"}, VOLCANO, schedulerName="volcano"))
    assert top_pair(case) == ("volcano-device-plugin", "error_not_found")


def _taint_case(nfd_tolerations: list[dict[str, Any]]) -> Case:
    """NVIDIA/k8s-device-plugin#1934: GPU nodes tainted nvidia.com/gpu=true:NoSchedule, the
    chart's NFD subchart worker tolerating it with operator Equal, value present."""
    raw = {"id": "x", "source": "https://example.org/x", "title": "t", "platform": "eks",
           "cluster": {"driver_mode": "host"}, "expect": {"healthy": True}, "evidence": [
               {"kind": "node-labels", "labels": {"feature.node.kubernetes.io/pci-10de.present": None,
                                                  "nvidia.com/gpu.present": None}},
               {"kind": "node-taints", "taints": [{"key": "nvidia.com/gpu", "value": "true",
                                                   "effect": "NoSchedule"}]},
               {"kind": "daemonset-tolerations", "component": "nfd", "tolerations": nfd_tolerations}]}
    return msgspec.convert(raw, Case)


def test_an_nfd_worker_kept_off_the_gpu_node_by_its_taint_is_that_cause() -> None:
    case = _taint_case([{"key": "nvidia.com/gpu", "operator": "Equal", "value": "present",
                         "effect": "NoSchedule"}])
    assert top_pair(case) == ("nfd", "nfd_worker_untolerated_taint")


def test_an_nfd_worker_that_tolerates_the_taint_is_not_blamed_for_it() -> None:
    """Look-alike: the same taint, tolerated with operator Exists: NFD runs there."""
    case = _taint_case([{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}])
    top = top_pair(case)
    assert top is None or top[1] != "nfd_worker_untolerated_taint"


#: The API server's refusal relayed by the ReplicaSet controller, for HAMi's webhook: the
#: call as the API server logged it (Project-HAMi/HAMi#379), refused with failurePolicy Fail.
HAMI_WEBHOOK = ('Error creating: Internal error occurred: failed calling webhook "vgpu.hami.io": '
                'failed to call webhook: Post '
                '"https://hami-scheduler.kube-system.svc:443/webhook?timeout=30s": '
                "net/http: request canceled while waiting for connection "
                "(Client.Timeout exceeded while awaiting headers)")
#: kserve/kserve#580: another project's webhook, whose Service is gone; no GPU stack part.
OTHER_WEBHOOK = ('Error creating: Internal error occurred: failed calling webhook '
                 '"inferenceservice.kfserving-webhook-server.pod-mutator": Post '
                 'https://kfserving-webhook-server-service.kubeflow.svc:443/mutate-pods?timeout=30s: service '
                 '"kfserving-webhook-server-service" not found')


def _webhook_case(message: str) -> Case:
    return _case({"kind": "pod-state", "component": "hami-scheduler", "state": "Running"},
                 {"kind": "event", "reason": "FailedCreate", "message": message,
                  "object": {"kind": "ReplicaSet", "name": "infer-7d9c8b", "namespace": "ml"}})


def test_a_controller_refused_by_a_webhook_the_api_server_cannot_call_names_its_owner() -> None:
    report = diagnose_case(_webhook_case(HAMI_WEBHOOK))
    causes = [(rc.component, rc.cause) for rc in report.cluster.root_causes]
    assert causes and causes[0] == ("hami-scheduler", "error_unreachable")


def test_another_projects_webhook_names_no_stack_component() -> None:
    report = diagnose_case(_webhook_case(OTHER_WEBHOOK))
    assert not [rc for rc in report.cluster.root_causes if rc.component == "hami-scheduler"]
    assert top_pair(_webhook_case(OTHER_WEBHOOK)) is None
