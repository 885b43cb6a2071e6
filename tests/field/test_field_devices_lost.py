"""CUDA finding no device in a GPU container that is running under NVIDIA's runtime
(checks/devices_lost.py): the container's access to its GPUs was taken away after the start,
the toolkit's documented "containers losing access to GPUs". A container that is not running,
or a running one without CUDA's no-device words, says nothing of it. Each line from a public
report (its address beside it)."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import diagnose_case, top_root_cause

#: rishikanthc/Scriberr#326: after about 12 hours running, the container lost the CUDA device;
#: restarting the container healed it.
SCRIBERR_326 = "CUDA failed with error no CUDA-capable device is detected"
#: HaveAGitGat/Tdarr#666: NVENC jobs of a running Tdarr node failed with this until a restart.
TDARR_666 = "CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected"
#: pytorch/pytorch#141863 in the runtime API's enumerator form, as CUDA's error names print it.
NVIDIA = {"runtimeClassName": "nvidia"}
RUNTIME_FORM = "RuntimeError: CUDA error: no CUDA-capable device is detected (cudaErrorNoDevice)"


def _case(line: str, state: str, extra: dict[str, Any] | None = None) -> Case:
    workload: dict[str, Any] = {"kind": "workload", "name": "job-0", "namespace": "default",
                                "container": "cuda", "state": state}
    workload.update(extra or {})
    evidence: list[dict[str, Any]] = [
        workload,
        {"kind": "log", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
         "container": "cuda", "text": f"starting\n{line}\n"}]
    raw = {"id": "x-devices-lost", "source": "https://example.org/x", "title": "t", "platform": "ubuntu",
           "evidence": evidence, "expect": {"healthy": True}}
    return msgspec.convert(raw, Case)


def _top(case: Case) -> tuple[str, str] | None:
    top = top_root_cause(diagnose_case(case), case.node)
    return (top.component, top.cause) if top else None


def test_a_running_container_whose_cuda_finds_no_device_lost_its_gpus() -> None:
    for line in (SCRIBERR_326, TDARR_666, RUNTIME_FORM):
        case = _case(line, "Running", {"runtimeClassName": "nvidia"})
        assert _top(case) == ("container-toolkit", "nvml_device_access_lost"), line


def test_a_running_container_under_plain_runc_is_not_read_as_a_loss() -> None:
    # no RuntimeClass and NVIDIA's runtime not the node's default: nothing says the GPUs were
    # given and then taken; and CUDA's no-device answer comes from a driver library that
    # answered, which plain runc does not put into a container, so it is not the runtime's
    # default either (checks.workload_logs, _DRIVER_ANSWERED)
    top = _top(_case(TDARR_666, "Running"))
    assert top is None or top[1] not in ("nvml_device_access_lost", "nvidia_not_default_runtime")


def test_a_container_that_is_not_running_is_not_read_so() -> None:
    # exited at once: it may never have had the devices, so the lost-access reading says nothing
    top = _top(_case(TDARR_666, "Error", {"exit_code": 1, "runtimeClassName": "nvidia"}))
    assert top is None or top[1] != "nvml_device_access_lost"


def test_a_running_container_with_a_stray_error_line_stays_healthy() -> None:
    # a healthy look-alike: a running GPU job's own error that names no missing device
    assert _top(_case("ERROR: request timed out while fetching model list", "Running", NVIDIA)) is None
    assert _top(_case("WARNING: device 0 is busy, retrying", "Running", NVIDIA)) is None
