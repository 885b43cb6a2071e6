"""The job's own lines name the CUDA it needs where its image tag does not
(gpunode.parse.image_cuda.stated_cuda): a framework wheel's local version (PyTorch's
"2.1.0+cu121", the download.pytorch.org/whl/cuXYZ builds:
https://pytorch.org/get-started/previous-versions/) or the runtime version it printed
(PaddlePaddle's "Runtime API Version: 10.2", gpu_context.cc; deviceQuery's "CUDA Driver
Version / Runtime Version", cuda-samples deviceQuery.cpp). CUDA's insufficient-driver error is
then settled against the node's driver as for an image tag (checks.workload_logs
``_image_cuda_settles``; minor-version compatibility within a major only:
https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html): a newer
major than the node's is the driver too old under any runtime; one the node runs, in a pod
under plain runc, is the runtime's default. Look-alike: a log that names no version is read
as before."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.parse.image_cuda import stated_cuda

ERROR_35 = "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version\n"


def _job(text: str, driver: str | None) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "train-0", "namespace": "default", "container": "train",
         "state": "Error", "exit_code": 1},
        {"kind": "log", "object": {"kind": "Pod", "name": "train-0", "namespace": "default"},
         "container": "train", "text": text}]
    node: dict[str, Any] = {"gpus": 1, **({"driver_version": driver} if driver else {})}
    return synthetic_case("x-stated-cuda", evidence, healthy=False, platform="generic",
                          cluster={"driver_mode": "host", "gpu_node": node})


def test_the_version_is_read_in_each_form() -> None:
    assert stated_cuda(["torch==2.1.0+cu121"]) == (12, 1)
    assert stated_cuda(["paddle 1.8.5+cu92"]) == (9, 2)
    assert stated_cuda(["Driver API Version: 10.1, Runtime API Version: 10.2"]) == (10, 2)
    assert stated_cuda(["  CUDA Driver Version / Runtime Version          11.4 / 12.1"]) == (12, 1)
    assert stated_cuda(["CUDA available: True", "loss=0.41"]) is None


def test_a_newer_major_than_the_node_is_the_driver_under_plain_runc() -> None:
    text = "PyTorch version: 2.9.0+cu130\n" + ERROR_35
    assert top_pair(_job(text, "535.183.01")) == ("driver", "cuda_driver_too_old")


def test_a_cuda_the_node_runs_under_plain_runc_is_the_runtime() -> None:
    text = "PyTorch version: 2.1.0+cu121\n" + ERROR_35
    assert top_pair(_job(text, None)) == ("container-toolkit", "nvidia_not_default_runtime")
    assert top_pair(_job(ERROR_35, "535.183.01")) == ("container-toolkit", "nvidia_not_default_runtime")
