"""CUDA's insufficient-driver error (35) in a pod under plain runc is read as the runtime's
default where the node's driver could serve the job (NVIDIA/gpu-operator#1017); on a node whose
driver is below the minimum of both CUDA majors still built against (12.x needs 525.60.13, 13.x
580.65.06: https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html and
https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html; the frameworks' supported
builds are CUDA 12 and 13: https://github.com/pytorch/pytorch/blob/main/RELEASE.md#release-compatibility-matrix)
no current CUDA runtime runs, so the driver is too old under any runtime (catboost/catboost#520
on 384.130, SYSTRAN/faster-whisper#866 on 472.12). A node at a current driver keeps the runtime
reading, and a healthy job on an old driver says nothing."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.checks.cuda_floor import runs_no_current_cuda

ERROR_35 = "RuntimeError: CUDA error 35: CUDA driver version is insufficient for CUDA runtime version\n"
#: a healthy job's own lines on the same node (a version banner, a device found)
HEALTHY = "Using CUDA device 0: Tesla T4 (driver 470.182.03, CUDA 11.4)\nepoch 1/10 loss=0.412\n"


def _job(text: str, driver: str | None, *, healthy: bool) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "train-0", "namespace": "default", "container": "train",
         "state": "Running" if healthy else "Error", **({} if healthy else {"exit_code": 1})},
        {"kind": "log", "object": {"kind": "Pod", "name": "train-0", "namespace": "default"},
         "container": "train", "text": text}]
    node: dict[str, Any] = {"gpus": 1}
    if driver is not None:
        node["driver_version"] = driver
    return synthetic_case("x-cuda-floor", evidence, healthy=healthy, platform="generic",
                          cluster={"driver_mode": "host", "gpu_node": node})


def test_the_floor_is_the_older_built_majors_minimum() -> None:
    assert runs_no_current_cuda((470, 182, 3)) and runs_no_current_cuda((384, 130))
    assert not runs_no_current_cuda((525, 60, 13)) and not runs_no_current_cuda((570, 133, 20))
    assert not runs_no_current_cuda((35, 4, 1))  # a Jetson's L4T release is no driver branch


def test_error_35_on_a_driver_below_every_current_major_is_the_driver() -> None:
    assert top_pair(_job(ERROR_35, "470.182.03", healthy=False)) == ("driver", "cuda_driver_too_old")


def test_error_35_under_plain_runc_on_a_current_driver_stays_the_runtime() -> None:
    top = top_pair(_job(ERROR_35, None, healthy=False))
    assert top == ("container-toolkit", "nvidia_not_default_runtime")


def test_a_healthy_job_on_an_old_driver_stays_healthy() -> None:
    assert top_pair(_job(HEALTHY, "470.182.03", healthy=True)) is None
