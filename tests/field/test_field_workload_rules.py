"""Rules that read a GPU workload's own spec, shown with the 'workload' evidence: the
resource it asks for names the plugin whose Allocate answered, and a resource it asks none
of leaves a refusal to the kubelet. Public lines: kubernetes/kubernetes#128854 (a Deployment
asking nvidia.com/gpu: "0" refused at admission), volcano-sh/devices#17 (a pod asking
volcano.sh/gpu-memory refused with the plugin's rpc error)."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import diagnose_case, top_root_cause

ZERO = ("Pod was rejected: Allocate failed due to no healthy devices present; cannot allocate unhealthy "
        "devices nvidia.com/gpu, which is unexpected")
VOLCANO = "Allocate failed due to rpc error: code = Unknown desc = failed to find gpu id, which is unexpected"


def _case(*evidence: dict[str, Any]) -> Case:
    raw = {"id": "x", "source": "https://example.org/x", "title": "t", "platform": "generic",
           "cluster": {"driver_mode": "host"}, "expect": {"healthy": True}, "evidence": list(evidence)}
    return msgspec.convert(raw, Case)


def _top(case: Case) -> tuple[str, str] | None:
    top = top_root_cause(diagnose_case(case), case.node)
    return None if top is None else (top.component, top.cause)


def _refused(limits: dict[str, str], message: str, **spec: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    return ({"kind": "workload", "name": "jktest-5d9c8b7f6d-x2x7q", "resources": {"limits": limits},
             "state": "UnexpectedAdmissionError", **spec},
            {"kind": "event", "object": {"kind": "Pod", "name": "jktest-5d9c8b7f6d-x2x7q"},
             "reason": "UnexpectedAdmissionError", "message": message})


def test_a_refusal_of_a_resource_the_pod_asks_none_of_is_the_kubelets() -> None:
    case = _case({"kind": "node-capacity", "resources": {"nvidia.com/gpu": "0"}},
                 *_refused({"nvidia.com/gpu": "0"}, ZERO))
    top = _top(case)
    assert top is not None and top[0] == "kubelet"


def test_the_same_refusal_of_a_gpu_the_pod_asks_for_stays_the_device_plugins() -> None:
    """Look-alike: a pod asking one GPU of a plugin with no healthy device is the plugin's."""
    case = _case({"kind": "node-capacity", "resources": {"nvidia.com/gpu": "0"}},
                 *_refused({"nvidia.com/gpu": "1"}, ZERO))
    top = _top(case)
    assert top is not None and top[0] == "device-plugin"


def test_a_plugins_answer_for_volcano_resources_is_volcanos_plugin_even_unseen() -> None:
    case = _case({"kind": "node-capacity", "resources": {"volcano.sh/gpu-memory": "32510"}},
                 *_refused({"volcano.sh/gpu-memory": "1024"}, VOLCANO, schedulerName="volcano"))
    assert _top(case) == ("volcano-device-plugin", "error_not_found")
