"""The GPUStackHealthy condition: its value, its reason spelling, and patching only on change."""

from __future__ import annotations

import re

import pytest
from agent_helpers import XID_79, FakeNodeApi, node_object, recorded_probe, with_kernel_lines

from gpunode.agent.condition import (
    CONDITION_TYPE,
    ConditionKeeper,
    ConditionValue,
    camel_case,
    condition_for,
    current_condition,
    stale_condition,
)
from gpunode.agent.judge import judge_probe
from gpunode.kb import load_kb
from gpunode.model import ComponentReport, NodeReport, RootCause, Status

REASON = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"  # metav1.Condition's reason pattern


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        ("gpu_fallen_off_bus", "GpuFallenOffBus"),
        ("driver_library_mismatch", "DriverLibraryMismatch"),
        ("containerd_not_patched", "ContainerdNotPatched"),
        ("crash_loop", "CrashLoop"),
        ("xid-79", "Xid79"),
        ("79_lost", "Cause79Lost"),
        ("", "Cause"),
    ],
)
def test_camel_case(code: str, reason: str) -> None:
    assert camel_case(code) == reason


def test_every_kb_cause_gives_a_valid_kubernetes_reason() -> None:
    codes = {c.code for c in load_kb().causes}
    reasons = {camel_case(code) for code in codes}
    assert all(re.match(REASON, r) for r in reasons)
    assert len(reasons) == len(codes)  # no two causes collapse into one reason


def _root(cause: str, layer: int, status: Status = Status.FAILED) -> RootCause:
    return RootCause("driver", layer, cause, f"title of {cause}", status, (), ())


def _node(*roots: RootCause, ok_layers: tuple[int, ...] = (1,)) -> NodeReport:
    comps = tuple(
        ComponentReport(f"c{layer}", layer, "", Status.OK if layer in ok_layers else Status.UNKNOWN, "")
        for layer in range(5)
    )
    return NodeReport("gpu-wk-01", Status.FAILED if roots else Status.OK, roots, comps)


def test_false_names_the_failed_lowest_root_cause_and_lists_the_others() -> None:
    value = condition_for(_node(_root("gfd_labels_stale", 3, Status.DEGRADED), _root("nouveau_loaded", 1)))
    assert value == ConditionValue(
        "False", "NouveauLoaded", "title of nouveau_loaded (also: gfd_labels_stale)"
    )


def test_true_needs_an_ok_probed_layer_else_unknown() -> None:
    assert condition_for(_node()).status == "True"
    assert condition_for(_node(ok_layers=(3, 4))).reason == "NotObserved"
    assert condition_for(None).status == "Unknown"
    stale = ConditionValue("Unknown", "ProbeStale", "no successful gpunode probe for 95s")
    assert stale_condition(95.4) == stale


def test_condition_from_a_real_verdict() -> None:
    report = judge_probe(with_kernel_lines(recorded_probe(), XID_79))
    value = condition_for(report.nodes[0])
    assert (value.status, value.reason) == ("False", "GpuFallenOffBus")
    assert value.message == load_kb().get("gpu_fallen_off_bus").title


def _keeper(api: FakeNodeApi) -> ConditionKeeper:
    times = iter(f"2026-11-30T12:00:{s:02d}Z" for s in range(60))
    return ConditionKeeper(api, "gpu-wk-01", now=lambda: next(times))


def test_patches_only_when_the_value_changes() -> None:
    api = FakeNodeApi()
    keeper = _keeper(api)
    keeper.adopt(api.get_node("gpu-wk-01"))
    healthy = ConditionValue("True", "NoRootCause", "fine")
    assert keeper.update(healthy) is True
    assert keeper.update(healthy) is False
    assert keeper.update(ConditionValue("False", "GpuFallenOffBus", "lost")) is True
    assert [p["status"] for p in api.patches] == ["True", "False"]
    assert api.patches[1]["type"] == CONDITION_TYPE
    assert api.patches[1]["lastTransitionTime"] == api.patches[1]["lastHeartbeatTime"]


def test_reason_change_keeps_the_transition_time() -> None:
    api = FakeNodeApi()
    keeper = _keeper(api)
    keeper.update(ConditionValue("False", "NouveauLoaded", "a"))
    keeper.update(ConditionValue("False", "GpuFallenOffBus", "b"))
    first, second = api.patches
    assert second["lastTransitionTime"] == first["lastTransitionTime"]
    assert second["lastHeartbeatTime"] != first["lastHeartbeatTime"]


def test_adopts_the_condition_already_on_the_node() -> None:
    existing = {
        "type": CONDITION_TYPE,
        "status": "True",
        "reason": "NoRootCause",
        "message": "fine",
        "lastTransitionTime": "2026-11-01T00:00:00Z",
    }
    api = FakeNodeApi(node_object(conditions=[existing]))
    keeper = _keeper(api)
    keeper.adopt(api.get_node("gpu-wk-01"))
    assert keeper.update(ConditionValue("True", "NoRootCause", "fine")) is False
    assert api.patches == []
    keeper.update(ConditionValue("True", "NoRootCause", "fine, now with more words"))
    assert api.patches[0]["lastTransitionTime"] == "2026-11-01T00:00:00Z"


def test_failed_patch_is_retried_next_time() -> None:
    api = FakeNodeApi()
    api.fail_patch = True
    keeper = _keeper(api)
    value = ConditionValue("False", "NouveauLoaded", "a")
    with pytest.raises(ConnectionError):
        keeper.update(value)
    assert keeper.last is None
    api.fail_patch = False
    assert keeper.update(value) is True
    assert current_condition(api.node)[0] == value


def test_setting_the_condition_needs_an_api() -> None:
    from gpunode.agent.loop import Agent, AgentConfig
    from gpunode.errors import UsageError

    with pytest.raises(UsageError, match="--node-condition needs access to the Kubernetes API"):
        Agent(AgentConfig("gpu-wk-01"), recorded_probe, judge=judge_probe, set_condition=True)
