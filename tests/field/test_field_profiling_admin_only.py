"""GPU performance counters refused for privilege while the node's driver parameters, in the
bundle, restrict them to admin users (RmProfilingAdminOnly: 1 in /proc/driver/nvidia/params):
the refusal is the driver's setting, so the driver layer is named (its module parameter
NVreg_RestrictProfilingToAdminUsers, or an admin monitor, is the fix). gpuopenanalytics/pynvml#19
(the case: nvidia-smi nvlink -g 0 and pynvml monitors on a DGX), cihlab/fics-cluster-guide#4 and
IBM/powerai#35 (ERR_NVGPUCTRPERM refused to non-admin users until the driver's parameter is
set to 0). Without the parameter in the bundle, or with it at 0, the refusal keeps the
component's own reading."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

#: gpuopenanalytics/pynvml#19
NVLINK = ("NVML: Unable to get the NvLink link utilization counter control for link 0: "
          "Insufficient Permissions")
#: IBM/powerai#35, illinois-scicomp/machine-shop-maintenance#11 (nvprof's words)
PROFILER = ("==708142== Warning: ERR_NVGPUCTRPERM - The user does not have permission to profile on "
            "the target device.")


def _agent(line: str, params: str | None) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "pod-state", "component": "dcgm-exporter", "state": "Running"},
        {"kind": "log", "component": "dcgm-exporter", "text": line + "\n"}]
    if params is not None:
        evidence.append({"kind": "node-file", "path": "proc/driver/nvidia/params", "text": params})
    return synthetic_case("x-counters", evidence, healthy=False, cluster={"driver_mode": "host"})


def test_counters_refused_under_the_drivers_admin_only_setting_are_the_drivers() -> None:
    assert top_pair(_agent(NVLINK, "RmProfilingAdminOnly: 1\n")) == ("driver", "error_permission_denied")


def test_without_the_setting_the_refusal_stays_the_components() -> None:
    for params in (None, "RmProfilingAdminOnly: 0\n"):
        top = top_pair(_agent(NVLINK, params))
        assert top is not None and top[0] == "dcgm-exporter", (params, top)


def test_a_refusal_of_no_counter_keeps_its_reading() -> None:
    line = "Failed to initialize NVML: Insufficient Permissions"
    assert top_pair(_agent(line, "RmProfilingAdminOnly: 1\n")) == top_pair(_agent(line, None))
