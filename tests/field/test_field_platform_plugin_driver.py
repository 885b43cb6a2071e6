"""A job's CUDA words for a driver too old, read with the node facts that settle them.

GKE's managed device plugin mounts the driver's files (/usr/local/nvidia) into every container
it gives a GPU, under plain runc: there CUDA's insufficient-driver error is the driver's, not a
pod started without NVIDIA's runtime; a node pool labelled
``gke-no-default-nvidia-gpu-device-plugin=true`` hands the GPUs to another plugin, and the
runtime's reading stands. CUDA's 804 (forward compatibility attempted on a GPU without it) is
said only where the kernel driver is older than the job's CUDA: the driver too old, while 803
(the container's libcuda and the loaded module of two releases) is a version mismatch of the
layer that chose the container's libraries."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

#: cudaErrorInsufficientDriver as Triton prints it when it cannot pin host memory
INSUFFICIENT = ("failed to allocate pinned system memory: CUDA driver version is insufficient for CUDA "
                "runtime version")
#: NGC containers' driver check, the status line it quotes from cuInit
E804 = "[[CUDA Driver UNAVAILABLE (cuInit(0) returned 804)]]"
E803 = ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Error 803: system has unsupported display "
        "driver / cuda driver combination")


def _case(platform: str, line: str, labels: dict[str, str | None] | None = None) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "job-0", "namespace": "default", "container": "job",
         "image": "nvcr.io/nvidia/tritonserver:24.01-py3", "state": "CrashLoopBackOff", "restarts": 3,
         "exit_code": 1},
        {"kind": "log", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
         "container": "job", "text": line + "\n"}]
    if labels:
        evidence.append({"kind": "node-labels", "labels": labels})
    return synthetic_case("x-platform-plugin", evidence, platform=platform, cluster={"driver_mode": "host"})


def test_gke_managed_plugin_gives_runc_the_driver() -> None:
    assert top_pair(_case("gke", INSUFFICIENT)) == ("driver", "cuda_driver_too_old")


def test_gke_pool_with_the_managed_plugin_off_keeps_the_runtime_reading() -> None:
    # the runtime's reading names the toolkit, which GKE's profile lists as not used: the
    # driver is not named from the words alone there
    top = top_pair(_case("gke", INSUFFICIENT, {"gke-no-default-nvidia-gpu-device-plugin": "true"}))
    assert top is None or top[0] != "driver"


def test_generic_node_keeps_the_runtime_reading() -> None:
    assert top_pair(_case("generic", INSUFFICIENT)) == ("container-toolkit", "nvidia_not_default_runtime")


def test_cuda_804_is_the_driver_too_old_and_803_a_mismatch() -> None:
    assert top_pair(_case("docker", E804)) == ("driver", "cuda_driver_too_old")
    assert top_pair(_case("generic", E804)) == ("driver", "cuda_driver_too_old")
    assert top_pair(_case("docker", E803)) == ("container-toolkit", "error_version_mismatch")
