"""CUDA's insufficient-driver error (35) is said both by a driver older than the job's CUDA and
by a container that reached no driver library at all (PyTorch's c10/cuda/CUDAFunctions.cpp reads
error 35 with driver version 0 as "Found no NVIDIA driver"; NVIDIA/gpu-operator#1017, a pod under
plain runc on a current driver). Node facts settle it where the job's image names its CUDA
version in its tag (NVIDIA's CUDA images are tagged by toolkit version:
https://nvidia.github.io/container-wiki/toolkit/container-images.html): drivers are backward
compatible with every older CUDA (https://docs.nvidia.com/deploy/cuda-compatibility/frequently-asked-questions.html),
so a node whose nvidia-smi CUDA version is at or above the image's is not too old for it, and a pod
that names no RuntimeClass got no NVIDIA runtime (NVIDIA/nvidia-docker#24's shape: plain docker
run with --device flags). A node older than the image's CUDA by a major release (minor-version
compatibility holds only within a major release from CUDA 11 on:
https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html) is too old
whatever the runtime. An image that names no CUDA version, or a pod that names a RuntimeClass,
leaves the reading as it was."""

from __future__ import annotations

from typing import Any

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.parse.image_cuda import image_cuda

ERROR_35 = "cudaGetDeviceCount returned 35\n-> CUDA driver version is insufficient for CUDA runtime version\n"


def _job(image: str, *, platform: str = "docker", runtime_class: bool = True) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "cuda-job", "namespace": "default", "container": "cuda",
         "image": image, "state": "Error", "exit_code": 1},
        {"kind": "log", "object": {"kind": "Pod", "name": "cuda-job", "namespace": "default"},
         "container": "cuda", "text": ERROR_35}]
    cluster: dict[str, Any] = {"driver_mode": "host"}
    if not runtime_class:
        cluster["runtime_class"] = False
    return synthetic_case("x-image-cuda", evidence, healthy=False, platform=platform, cluster=cluster)


@pytest.mark.parametrize(("image", "cuda"), [
    ("nvidia/cuda:7.0-cudnn3-devel", (7, 0)),
    ("nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04", (12, 4)),
    ("docker.io/nvidia/cudagl:11.4.2-runtime", (11, 4)),
    ("pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime", (12, 1)),
    ("paddlepaddle/paddle:2.4.2-gpu-cuda11.7-cudnn8.4-trt8.4", (11, 7)),
    ("nvcr.io/nvidia/pytorch:24.01-py3", None),
    ("registry:5000/team/cuda-app", None),
    ("ollama/ollama:latest", None),
    ("nvidia/cuda@sha256:362e4e25aa46", None),
])
def test_image_cuda_reads_the_version_a_tag_names(image: str, cuda: tuple[int, int] | None) -> None:
    assert image_cuda(image) == cuda


def test_an_image_the_nodes_driver_supports_on_docker_is_the_runtime() -> None:
    # the node's driver (CUDA 12.8) runs CUDA 7.0; no driver library reached the container
    top = top_pair(_job("nvidia/cuda:7.0-cudnn3-devel"))
    assert top == ("container-toolkit", "nvidia_not_default_runtime")


def test_an_image_newer_than_the_nodes_driver_stays_the_driver_too_old() -> None:
    assert top_pair(_job("nvidia/cuda:13.0.1-base-ubuntu24.04")) == ("driver", "cuda_driver_too_old")


def test_an_image_newer_than_the_driver_under_plain_runc_is_still_the_driver() -> None:
    # a generic node's pod without a RuntimeClass starts under runc: the image's CUDA 13 on a
    # CUDA 12.8 driver is too old whatever the runtime
    top = top_pair(_job("nvidia/cuda:13.0.1-base-ubuntu24.04", platform="generic", runtime_class=False))
    assert top == ("driver", "cuda_driver_too_old")


def test_an_image_that_names_no_cuda_leaves_the_docker_reading_alone() -> None:
    assert top_pair(_job("nvcr.io/nvidia/pytorch:24.01-py3")) == ("driver", "cuda_driver_too_old")
