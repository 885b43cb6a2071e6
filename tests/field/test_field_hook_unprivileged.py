"""The NVIDIA hook refused the devices cgroup write inside a user namespace: a container
engine run in an unprivileged LXC/LXD container (nested Docker) fails every GPU container with
nvidia-container-cli's 'mount error: write error: .../devices.allow: operation not permitted'
while other containers start (NVIDIA/nvidia-docker#1546 and NVIDIA/nvidia-container-toolkit#290,
the same line; NVIDIA/nvidia-container-runtime#78). Its own cause, container_cli_unprivileged;
the devices controller absent under cgroup v2 ('open failed: ... devices.allow: no such file')
stays container_cli_cgroup_error's."""

from __future__ import annotations

from case import Case, synthetic_case
from scoreboard import top_pair

#: NVIDIA/nvidia-docker#1546, as the Docker daemon relayed it (container id shortened).
NESTED_LXD = ("docker: Error response from daemon: OCI runtime create failed: container_linux.go:380: "
              "starting container process caused: process_linux.go:545: container init caused: Running "
              "hook #0:: error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: mount "
              "error: write error: /sys/fs/cgroup/devices/docker/098ad8bf1fdc/devices.allow: operation "
              "not permitted: unknown.")
#: The cgroup v2 look-alike: no devices controller to write to (container_cli_cgroup_error).
NO_DEVICES_FILE = ("nvidia-container-cli: mount error: open failed: "
                   "/sys/fs/cgroup/devices/kubepods/burstable/pod1/devices.allow: no such file or directory")


def _pod(message: str) -> Case:
    evidence = [
        {"kind": "workload", "name": "cuda-smi", "namespace": "default", "container": "cuda",
         "state": "RunContainerError"},
        {"kind": "event", "object": {"kind": "Pod", "name": "cuda-smi", "namespace": "default"},
         "type": "Warning", "reason": "Failed", "message": message}]
    return synthetic_case("x-hook-unprivileged", evidence, healthy=False, platform="docker",
                          cluster={"driver_mode": "host"})


def test_devices_allow_refused_is_the_hook_in_a_user_namespace() -> None:
    assert top_pair(_pod(NESTED_LXD)) == ("container-toolkit", "container_cli_unprivileged")


def test_a_missing_devices_controller_stays_the_cgroup_error() -> None:
    assert top_pair(_pod(NO_DEVICES_FILE)) == ("container-toolkit", "container_cli_cgroup_error")
