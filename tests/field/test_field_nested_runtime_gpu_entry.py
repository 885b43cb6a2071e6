"""A nested container runtime asking for a GPU its pod was not given: nvidia-container-cli's
stat of a /proc/driver/nvidia/gpus/<bus id> entry failing in the current log of a container
that runs, of a pod given fewer GPUs than the node has, is the pod's own request past its share
(libnvidia-container binds into each GPU container only its own GPUs' entries: nvc_driver_mount
and nvc_device_mount, mount_procfs and mount_procfs_gpu; NVIDIA/nvidia-container-runtime#92, an
inner --gpus=all in a Docker-in-Docker container given one of two GPUs). Look-alikes: the same
line in a pod that holds every GPU, or in a container that ended, is still the toolkit's."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

from gpunode.checks.busy_gpus import pod_gpus

#: NVIDIA/nvidia-container-runtime#92: the inner run's error for the host's other GPU.
STAT_92 = ("nvidia-container-cli: mount error: stat failed: /proc/driver/nvidia/gpus/0000:03:00.0: "
           "no such file or directory")


def _pair(gpus: str, state: str, node_gpus: int = 2) -> tuple[str, str] | None:
    workload: dict[str, Any] = {"kind": "workload", "name": "dind-0", "namespace": "ci", "container": "dind",
                                "state": state, "resources": {"limits": {"nvidia.com/gpu": gpus}}}
    if state != "Running":
        workload["exit_code"] = 1
    evidence = [workload, {"kind": "log", "object": {"kind": "Pod", "name": "dind-0", "namespace": "ci"},
                           "container": "dind", "text": STAT_92 + "\n"}]
    return top_pair(synthetic_case("x-nested-gpu-entry", evidence, platform="docker",
                                   cluster={"driver_mode": "host", "gpu_node": {"gpus": node_gpus}}))


def test_the_pod_s_gpu_count_over_its_containers() -> None:
    assert pod_gpus([{"nvidia.com/gpu": "1"}, {"cpu": "2"}]) == 1
    assert pod_gpus([{"nvidia.com/gpu": "2"}, {"nvidia.com/gpu": "1"}]) == 3
    assert pod_gpus([{"cpu": "2"}]) is None
    assert pod_gpus([{"nvidia.com/gpu": "half"}]) is None


def test_a_running_pod_given_one_of_two_gpus_asks_past_its_share() -> None:
    assert _pair("1", "Running") is None


def test_a_running_pod_holding_every_gpu_is_still_the_toolkit_s() -> None:
    # look-alike: every GPU's entry is in its container, so a missing one is no share's limit
    assert _pair("2", "Running") == ("container-toolkit", "error_file_state")


def test_a_container_that_ended_is_still_the_toolkit_s() -> None:
    # look-alike: the node's hook refusing the container itself
    assert _pair("1", "Error") == ("container-toolkit", "error_file_state")
