"""A sharing plugin that answered the kubelet's Allocate for a pod placed on its node did
advertise its resources: the scheduler placed the pod there only because the node offered
what it asks, and the kubelet's UnexpectedAdmissionError relays the plugin's own answer.
So the plugin's state is not "advertises nothing" (a state, which would hide the answer),
and the answer's line names the cause. Lines are public ones: Volcano's GPU-share plugin
(volcano-sh/devices#17, "failed to find gpu id") and HAMi's device plugin
(Project-HAMi/HAMi#653, "no binding pod found on node"). The look-alike, a pod the scheduler
never placed, leaves the state to be judged from the node's allocatable as before."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

_VOLCANO = ("Allocate failed due to rpc error: code = Unknown desc = failed to find gpu id, "
            "which is unexpected")
_REFUSED = "UnexpectedAdmissionError"
_HAMI = "Allocate failed due to rpc error: code = Unknown desc = no binding pod found on node gpu-wk-01"


def _evidence(plugin: str, resource: str, state: str, message: str) -> list[dict[str, Any]]:
    workload: dict[str, Any] = {"kind": "workload", "name": "share-pod", "namespace": "default",
                                "resources": {"limits": {resource: "1"}}, "state": state}
    out: list[dict[str, Any]] = [{"kind": "pod-state", "component": plugin, "state": "Running"}, workload]
    if message:
        workload["message"] = message
        out.append({"kind": "event", "object": {"kind": "Pod", "name": "share-pod", "namespace": "default"},
                    "type": "Warning", "reason": state, "message": message})
    return out


def _top(evidence: list[dict[str, Any]]) -> tuple[str, str] | None:
    return top_pair(synthetic_case("x-admission-answer", evidence, healthy=False,
                                   cluster={"driver_mode": "host", "components": []}))


def test_volcano_answer_at_admission_is_the_cause_not_the_state() -> None:
    evidence = _evidence("volcano-device-plugin", "volcano.sh/gpu-memory", _REFUSED, _VOLCANO)
    assert _top(evidence) == ("volcano-device-plugin", "error_not_found")


def test_hami_answer_at_admission_is_not_advertises_nothing() -> None:
    evidence = _evidence("hami-device-plugin", "nvidia.com/gpu", _REFUSED, _HAMI)
    found = _top(evidence)
    assert found is not None and found[1] != "hami_no_resources"


def test_a_pod_never_placed_leaves_the_state_judged_by_allocatable() -> None:
    evidence = _evidence("volcano-device-plugin", "volcano.sh/gpu-memory", "Pending", "")
    assert _top(evidence) == ("volcano-device-plugin", "volcano_no_resources")
