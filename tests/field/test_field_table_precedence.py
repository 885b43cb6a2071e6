"""A line another component's pod prints that the job-error table gives a catalogued cause
is that cause, not the class its words fall in: CUDA's insufficient-driver error (the
cudaGetErrorString text of cudaErrorInsufficientDriver, 35) in the operator validator's
vectorAdd init container is the driver's cuda_driver_too_old, as it is in a job's log
(NVIDIA/gpu-operator#167). A table entry that gives only a class (NVML's Insufficient
Permissions: error_device) leaves the class of the line's own words."""

from __future__ import annotations

from case import synthetic_case
from scoreboard import top_pair

#: CUDA's vectorAdd sample as the validator's init container prints it on an old driver
INSUFFICIENT = ("Failed to allocate device vector A (error code CUDA driver version is insufficient "
                "for CUDA runtime version)!")


def _validator(text: str) -> list[dict[str, object]]:
    return [{"kind": "pod-state", "component": "validator", "container": "cuda-validation", "init": True,
             "state": "Init:CrashLoopBackOff"},
            {"kind": "log", "component": "validator", "container": "cuda-validation", "init": True,
             "previous": True, "text": f"[Vector addition of 50000 elements]\n{text}\n"}]


def test_the_tables_catalogued_cause_wins_over_the_lines_class() -> None:
    top = top_pair(synthetic_case("x-table-cause", _validator(INSUFFICIENT), healthy=False))
    assert top == ("driver", "cuda_driver_too_old")


def test_a_table_entry_that_gives_a_class_keeps_the_lines_own_class() -> None:
    event = {"kind": "event", "object": {"kind": "Pod", "name": "cuda-test"}, "type": "Warning",
             "reason": "Failed",
             "message": "nvidia-container-cli: initialization error: nvml error: insufficient permissions\n"}
    top = top_pair(synthetic_case("x-table-class", [event], healthy=False))
    assert top == ("driver", "error_permission_denied")
