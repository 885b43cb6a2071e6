# ruff: noqa: E501  (real condition messages are long)
"""A GPU health monitor's node condition is its fault report on the part it watches.

NVSentinel sets a node condition True only for an error that needs action, the action it
recommends in the message, and sets it back to False when the part is healthy; warnings go out
as events (NVIDIA/NVSentinel docs/INTEGRATIONS.md, "Condition vs Event Behavior" and "Condition
Message Format", https://github.com/NVIDIA/NVSentinel/blob/main/docs/INTEGRATIONS.md). So a True
condition of a GPU monitor with an action other than NONE fails the GPU (a device error) with
the monitor's action beside it; False, Unknown and an action of NONE stay quiet, and so does a
report on the GPU's NVLink links or IMEX domain (a link state after a reboot, a daemon a
single-node box does not run: NVIDIA/NVSentinel#1701, #1471).
"""

from __future__ import annotations

from typing import Any

import pytest
from case import synthetic_case
from scoreboard import diagnose_case, top_pair


def _condition(kind: str, status: str, reason: str, message: str) -> dict[str, Any]:
    return {"kind": "node-condition", "type": kind, "status": status, "reason": reason, "message": message}


#: NVIDIA/NVSentinel's end-to-end tests (https://github.com/NVIDIA/NVSentinel/tree/main/tests):
#: the Xid 79 condition, True while the GPU is lost, then back to False once healthy.
XID_79 = _condition("GpuXidError", "True", "GpuXidErrorIsNotHealthy",
                    "ErrorCode:79 gpu:0 XID error occured Recommended Action=NODE_REBOOT;")
XID_79_CLEARED = _condition("GpuXidError", "False", "GpuXidErrorIsHealthy", "No Health Failures")
#: NVIDIA/NVSentinel docs/INTEGRATIONS.md, "Condition Message Format": the DCGM monitor's form.
FAULTY_MEMORY = _condition("GpuMemoryError", "True", "HardwareFailure",
                           "[DCGM_FR_FAULTY_MEMORY] GPU memory failure detected on GPU 0 - RecommendedAction: RESTART_VM")
#: The runbook's power-brake condition (https://docs.nvidia.com/nvsentinel/runbooks/gpu-power-brake.md).
POWER_BRAKE = _condition("GpuPowerBrakeWatch", "True", "GpuPowerBrakeWatchIsNotHealthy",
                         "ErrorCode:GPU_HW_POWER_BRAKE_VIOLATION GPU:2 GPU 2 hardware power brake asserted for 3 consecutive poll(s) (clocks event reasons mask 0x8c) Recommended Action=CONTACT_SUPPORT;")


@pytest.mark.parametrize("condition", [XID_79, FAULTY_MEMORY, POWER_BRAKE], ids=["xid-79", "faulty-memory", "power-brake"])
def test_a_monitors_fault_condition_fails_the_gpu(condition: dict[str, Any]) -> None:
    case = synthetic_case("x-monitor-fault", [condition], healthy=False)
    assert top_pair(case) == ("gpu-hardware", "error_device")


def test_the_recommended_action_is_kept_with_the_finding() -> None:
    report = diagnose_case(synthetic_case("x-monitor-action", [POWER_BRAKE], healthy=False))
    root = next(r for n in report.nodes for r in n.root_causes)
    assert root.component == "gpu-hardware" and "recommends CONTACT_SUPPORT" in root.title


@pytest.mark.parametrize("condition", [
    XID_79_CLEARED,
    # a warning in the event form (docs/INTEGRATIONS.md, "Example non-fatal event"), were it set as a condition
    _condition("GpuThermalWatch", "True", "GpuThermalWatchIsNotHealthy",
               "[DCGM_FR_CLOCK_THROTTLE_THERMAL] GPU thermal throttling detected - RecommendedAction: NONE"),
    # the same monitor unable to say
    _condition("GpuXidError", "Unknown", "GpuXidErrorUnknown", "ErrorCode:79 gpu:0 XID error occured Recommended Action=NODE_REBOOT;"),
    # node-problem-detector's own conditions carry no action and name no GPU part
    _condition("KernelDeadlock", "False", "KernelHasNoDeadlock", "kernel has no deadlock"),
    # NVIDIA/NVSentinel#1701 (https://github.com/NVIDIA/NVSentinel/issues/1701): links down while they train after a reboot
    _condition("GpuNvlinkWatch", "True", "GpuNvlinkWatchIsNotHealthy",
               "ErrorCode:DCGM_FR_NVLINK_DOWN GPU:3 GPU 3's NvLink link 16 is currently down Recommended Action=RESTART_VM;"),
    # NVIDIA/NVSentinel#1471 (https://github.com/NVIDIA/NVSentinel/issues/1471): IMEX checked on a single-node NVSwitch box
    _condition("GpuNvlinkWatch", "True", "GpuNvlinkWatchIsNotHealthy",
               "ErrorCode:DCGM_FR_IMEX_UNHEALTHY GPU:0 IMEX daemon status is -3 (not READY) Recommended Action=CONTACT_SUPPORT;"),
], ids=["cleared", "action-none", "unknown", "npd-false", "nvlink-training", "imex-single-node"])
def test_healthy_unknown_and_no_action_stay_quiet(condition: dict[str, Any]) -> None:
    assert top_pair(synthetic_case("x-monitor-quiet", [condition])) is None


#: NVIDIA/NVSentinel docs/runbooks/gpu-thermal-margin.md: the thermal-margin watch failing when
#: the GPU's T.Limit margin falls below its hardware-slowdown offset (CONTACT_SUPPORT).
THERMAL_MARGIN = _condition("GpuThermalMarginWatch", "True", "GpuThermalMarginWatchIsNotHealthy",
                            "ErrorCode:GPU_TEMP_HW_SLOWDOWN_VIOLATION GPU:3 GPU 3 thermal margin 1°C below HW slowdown T.Limit (slowdown=-2°C) Recommended Action=CONTACT_SUPPORT;")


@pytest.mark.parametrize("condition", [
    THERMAL_MARGIN,
    # the DCGM monitor's form of a thermal clocks event, reported with an action to take
    _condition("GpuThermalWatch", "True", "GpuThermalWatchIsNotHealthy",
               "[DCGM_FR_CLOCKS_EVENT_THERMAL] Clocks event thermal violation on GPU 1 - RecommendedAction: CONTACT_SUPPORT"),
], ids=["thermal-margin", "clocks-event-thermal"])
def test_a_thermal_code_is_the_gpus_thermal_slowdown(condition: dict[str, Any]) -> None:
    case = synthetic_case("x-monitor-thermal", [condition], healthy=False)
    assert top_pair(case) == ("gpu-hardware", "gpu_thermal_slowdown")


@pytest.mark.parametrize("condition", [
    # the watch back to healthy once the margin recovers
    _condition("GpuThermalMarginWatch", "False", "GpuThermalMarginWatchIsHealthy", "No Health Failures"),
    # the same code with no action to take
    _condition("GpuThermalMarginWatch", "True", "GpuThermalMarginWatchIsNotHealthy",
               "ErrorCode:GPU_TEMP_HW_SLOWDOWN_VIOLATION GPU:0 GPU 0 thermal margin 1°C below HW slowdown T.Limit (slowdown=-2°C) Recommended Action=NONE;"),
], ids=["cleared", "action-none"])
def test_a_cool_or_actionless_thermal_watch_stays_quiet(condition: dict[str, Any]) -> None:
    assert top_pair(synthetic_case("x-monitor-thermal-quiet", [condition])) is None


def test_a_power_brake_code_stays_a_device_error() -> None:
    """Only a thermal code names the slowdown: another code of the same monitor does not."""
    case = synthetic_case("x-monitor-brake", [POWER_BRAKE], healthy=False)
    assert top_pair(case) == ("gpu-hardware", "error_device")
