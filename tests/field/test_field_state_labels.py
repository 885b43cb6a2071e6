"""A stack component's state label is its own verdict on the node: a value that says its
last run failed names the label's owner (the MIG manager's mig.config.state, the operators'
driver upgrade state), with its logs' decisive line where there is one and as the owner's
failed state where there is none; steps in progress, success and real nodes' labels say
nothing. The vGPU device manager's vgpu.config.state and the CC manager's cc.mode.state are
read the same way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from case import Case, synthetic_case
from scoreboard import diagnose_case

from gpunode.checks.state_labels import STATE_LABELS, failed_states
from gpunode.model import Status

_REAL_LABELS = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "labels"
#: The MIG manager's log while it waits for the next change of its config label
#: (NVIDIA/mig-parted, the GPU Operator's mig-manager: the line it logs after each apply).
_WAITING = ("time=\"2026-03-11T11:57:32Z\" level=info "
            "msg=\"Waiting for change to 'nvidia.com/mig.config' label\"\n")
_MIG_STATE = "nvidia.com/mig.config.state"
_UPGRADE_STATE = "nvidia.com/gpu-driver-upgrade-state"


def _case(*evidence: dict[str, Any]) -> Case:
    return synthetic_case("x-state-label", list(evidence), cluster={"driver_mode": "operator"})


def _judged(case: Case, component: str) -> Any:
    node = next(n for n in diagnose_case(case).nodes if n.name == "gpu-wk-01")
    return next(c for c in node.components if c.component == component)


def _mig(state: str, text: str = _WAITING) -> Any:
    log = {"kind": "log", "component": "mig-manager", "container": "nvidia-mig-manager", "text": text}
    running = {"kind": "pod-state", "component": "mig-manager", "state": "Running"}
    return _judged(_case(log, running, {"kind": "node-labels", "labels": {_MIG_STATE: state}}), "mig-manager")


def test_a_failed_state_without_an_error_line_is_the_owner_s_state_never_healthy() -> None:
    mig = _mig("failed")
    assert (mig.status, mig.cause) == (Status.DEGRADED, "state_reported_failed")


def test_a_failed_state_with_an_error_line_is_the_line_s_class() -> None:
    # the apply's own error (NVIDIA/mig-parted: a GPU it cannot reset while a client holds it)
    text = ('time="2026-03-11T11:57:30Z" level=error msg="Error applying MIG configuration: '
            'failed to reset GPU 0: permission denied"\n' + _WAITING)
    mig = _mig("failed", text)
    assert (mig.status, mig.cause) == (Status.FAILED, "error_permission_denied")


@pytest.mark.parametrize("state", ["pending", "rebooting", "success"])
def test_a_step_in_progress_or_a_success_says_nothing(state: str) -> None:
    assert _mig(state).status == Status.OK


def test_the_driver_upgrade_state_names_the_driver() -> None:
    # NVIDIA/k8s-operator-libs: UpgradeStateFailed is set on any failure of the driver upgrade
    failed = {"kind": "node-labels", "labels": {_UPGRADE_STATE: "upgrade-failed"}}
    driver = _judged(_case(failed), "driver")
    assert (driver.status, driver.cause) == (Status.DEGRADED, "state_reported_failed")
    for step in ("upgrade-required", "drain-required", "validation-required", "upgrade-done"):
        step_label = {"kind": "node-labels", "labels": {_UPGRADE_STATE: step}}
        assert _judged(_case(step_label), "driver").status == Status.OK, step


def test_real_nodes_labels_hold_no_failed_state() -> None:
    read = 0
    for path in sorted(_REAL_LABELS.glob("*.json")):
        labels = json.loads(path.read_text())
        assert list(failed_states(labels)) == [], path.name
        read += any(label in labels for label in STATE_LABELS)
    assert read  # the MIG nodes of the fixtures carry mig.config.state=success


def _upgrade(state: str, *events: dict[str, Any]) -> Any:
    label = {"kind": "node-labels", "labels": {_UPGRADE_STATE: state}}
    return _judged(_case(label, *events), "driver")


def _upgrade_event(message: str, type_: str = "Warning") -> dict[str, Any]:
    """The upgrade controller's event on the Node (k8s-operator-libs: reason GetEventReason,
    'GPUDriverUpgrade' for the driver name 'gpu')."""
    return {"kind": "event", "object": {"kind": "Node"}, "source": "gpu-operator", "type": type_,
            "reason": "GPUDriverUpgrade", "message": message}


def test_the_upgrade_controller_s_warning_on_the_node_says_why() -> None:
    # k8s-operator-libs drain manager: 'Failed to drain the node, %s' and then upgrade-failed;
    # kubectl's drain helper gives up on a pod its disruption budget keeps after its timeout
    drain = _upgrade_event("Failed to drain the node, error when evicting pods/\"train-0\" -n \"ml\": "
                           "global timeout reached: 5m0s")
    driver = _upgrade("upgrade-failed", drain)
    assert (driver.status, driver.cause) == (Status.FAILED, "error_unreachable")
    label = {"kind": "node-labels", "labels": {_UPGRADE_STATE: "upgrade-failed"}}
    node = next(n for n in diagnose_case(_case(label, drain)).nodes if n.name == "gpu-wk-01")
    quoted = [e.source for rc in node.root_causes for e in rc.evidence]
    assert "event node/gpu-wk-01 GPUDriverUpgrade" in quoted
    # its Normal events are progress, and a warning under a later success is history
    moved = _upgrade_event("Successfully updated node state label to upgrade-failed", "Normal")
    assert _upgrade("upgrade-failed", moved).cause == "state_reported_failed"
    assert _upgrade("upgrade-done", drain).status == Status.OK


# The vGPU device manager's and the CC manager's state labels and their logs' own words:
# NVIDIA/vgpu-device-manager cmd/nvidia-k8s-vgpu-dm (logrus; 'Failed to apply vGPU config: %v'
# around 'unable to apply config', then vgpu.config.state=failed) and NVIDIA/k8s-cc-manager
# main.py (Python logging '%(asctime)s - %(name)s - %(levelname)s - %(message)s'; a mode it
# cannot verify after the reset, then cc.mode.state=failed).
_OWNERS = {
    "vgpu-device-manager": (
        "nvidia.com/vgpu.config.state", "success", "nvidia-vgpu-device-manager",
        'time="2026-03-11T11:57:30Z" level=info msg="Updating to vGPU config: A100-40C"\n'
        'time="2026-03-11T11:57:31Z" level=error msg="Failed to apply vGPU config: unable to apply '
        "config 'A100-40C': error parsing config file: unable to parse with missing 'version' field\"\n"
        'time="2026-03-11T11:57:31Z" level=info msg="Setting node label: '
        'nvidia.com/vgpu.config.state=failed"\n',
        Status.FAILED, "error_config_invalid"),
    "cc-manager": (
        "nvidia.com/cc.mode.state", "on", "nvidia-cc-manager",
        "2026-03-11 11:57:30,120 - k8s-cc-manager - INFO - Resetting device 0000:41:00.0\n"
        "2026-03-11 11:57:41,877 - k8s-cc-manager - ERROR - Unexpected error setting CC mode: CC mode "
        "verification failed on 0000:41:00.0: expected 'on', got 'off'\n"
        "2026-03-11 11:57:41,903 - k8s-cc-manager - INFO - Set nvidia.com/cc.mode.state=failed, "
        "nvidia.com/cc.ready.state=false\n",
        Status.DEGRADED, "error_unclassified"),
}


def _owner(component: str, state: str, with_log: bool = True) -> Any:
    label, _, container, text, _, _ = _OWNERS[component]
    evidence: list[dict[str, Any]] = [{"kind": "node-labels", "labels": {label: state}},
                                      {"kind": "pod-state", "component": component, "state": "Running"}]
    if with_log:
        evidence.append({"kind": "log", "component": component, "container": container, "text": text})
    return _judged(_case(*evidence), component)


@pytest.mark.parametrize("component", sorted(_OWNERS))
def test_the_sandbox_managers_failed_state_is_their_log_s_decisive_line(component: str) -> None:
    judged = _owner(component, "failed")
    # (a line of no known class leaves the owner degraded, as everywhere)
    assert (judged.status, judged.cause) == _OWNERS[component][4:]
    bare = _owner(component, "failed", with_log=False)
    assert (bare.status, bare.cause) == (Status.DEGRADED, "state_reported_failed")


#: Their logs on a run that succeeded (the same programs' info lines; the CC manager's readiness
#: file it does not fail on, a warning).
_SUCCEEDED = {
    "vgpu-device-manager": (
        'time="2026-03-11T11:57:30Z" level=info msg="Updating to vGPU config: A100-40C"\n'
        'time="2026-03-11T11:57:36Z" level=info msg="Successfully updated to vGPU config: A100-40C"\n'
        'time="2026-03-11T11:57:36Z" level=info msg="Setting node label: '
        'nvidia.com/vgpu.config.state=success"\n'
        'time="2026-03-11T11:57:36Z" level=info msg="Waiting for change to \'nvidia.com/vgpu.config\' '
        'label"\n'),
    "cc-manager": (
        "2026-03-11 11:57:30,120 - k8s-cc-manager - INFO - Resetting device 0000:41:00.0\n"
        "2026-03-11 11:57:41,877 - k8s-cc-manager - WARNING - Failed to create readiness file "
        "/run/nvidia/validations/.cc-manager-ctr-ready: [Errno 13] Permission denied\n"
        "2026-03-11 11:57:41,903 - k8s-cc-manager - INFO - Set nvidia.com/cc.mode.state=on, "
        "nvidia.com/cc.ready.state=true\n"),
}


@pytest.mark.parametrize("component", sorted(_OWNERS))
def test_the_sandbox_managers_success_says_nothing(component: str) -> None:
    label, fine, container, _, _, _ = _OWNERS[component]
    evidence = [{"kind": "node-labels", "labels": {label: fine}},
                {"kind": "pod-state", "component": component, "state": "Running"},
                {"kind": "log", "component": component, "container": container,
                 "text": _SUCCEEDED[component]}]
    assert _judged(_case(*evidence), component).status == Status.OK
