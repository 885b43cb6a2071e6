"""A GPU device node the file system says is not there (ENOENT), reported by a component other
than the driver, is a file that component asked for, mounted or was handed and that does not
exist (error_file_state), not the device answering with an error: nvidia-container-cli's 'stat
failed: /dev/nvidia-modeset: no such file or directory' when a container's capabilities ask for
display on a node where the modeset node was never made, a runtime's 'lstat /dev/nvidiactl: no
such file or directory' applying a device plugin's device spec. The driver does not register its
nodes with devtmpfs; userspace makes them on demand (nvidia-modprobe; /dev/nvidia-modeset only
with -m), so a node may be absent while the driver serves the GPUs. Where the driver is the
component at fault (its nodes never made) the line stays the device's class.

Sources: NVIDIA/libnvidia-container#388 (the library assumed /dev/nvidia-modeset exists; the
driver's udev rule runs bare nvidia-modprobe, which does not make it), NVIDIA/nvidia-container-
runtime#123 (a Jetson CSV listing /dev/nvidiactl, which need not exist there: 'stat failed:
/dev/nvidiactl'); lines from NVIDIA/enroot#15, NVIDIA/nvidia-docker#1453."""

from __future__ import annotations

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

LINES = {
    # https://github.com/NVIDIA/enroot/issues/15
    "enroot-15": "nvidia-container-cli: mount error: stat failed: /dev/nvidia-modeset: "
                 "no such file or directory",
    # https://github.com/NVIDIA/nvidia-docker/issues/1453 (the hook's stderr as Docker quotes it)
    "nvidia-docker-1453": "OCI runtime create failed: container_linux.go:345: starting container "
                          "process caused \"process_linux.go:430: container init caused "
                          "\\\"error running hook: exit status 1, stdout: , stderr: "
                          "nvidia-container-cli: mount error: stat failed: /dev/nvidia-modeset: "
                          "no such file or directory\\\"\": unknown",
}


def _refused(name: str, message: str) -> Case:
    return synthetic_case(f"node-absent-{name}", [
        {"kind": "workload", "name": "cuda-job", "namespace": "default", "container": "cuda",
         "state": "RunContainerError"},
        {"kind": "event", "object": {"kind": "Pod", "name": "cuda-job", "namespace": "default"},
         "type": "Warning", "reason": "Failed", "message": message},
    ], healthy=False, cluster={"driver_mode": "host"})


@pytest.mark.parametrize("name", sorted(LINES))
def test_absent_node_the_toolkit_mounts_is_a_file_state(name: str) -> None:
    assert top_pair(_refused(name, LINES[name])) == ("container-toolkit", "error_file_state")


def test_the_toolkit_refused_by_the_device_stays_the_devices_class() -> None:
    line = "nvidia-container-cli: initialization error: nvml error: driver not loaded"
    pair = top_pair(_refused("nvml", line))
    assert pair is not None and pair[1] != "error_file_state"


def test_nodes_the_driver_never_made_stay_the_devices() -> None:
    """The kubelet handing Docker the driver's nodes, none made on the host (k8sp/sextant#397):
    the driver is at fault and the absent node is its device's."""
    line = ('Failed to start container with docker id aa5a0319488f with error: Error response from '
            'daemon: {"message":"linux runtime spec devices: error gathering device information '
            'while adding custom device \\"/dev/nvidia0\\": lstat /dev/nvidia0: no such file or '
            'directory"}')
    assert top_pair(_refused("driver", line)) == ("driver", "error_device")


def test_a_running_job_beside_the_node_listing_stays_healthy() -> None:
    case = synthetic_case("node-absent-healthy", [
        {"kind": "workload", "name": "cuda-job", "namespace": "default", "container": "cuda",
         "state": "Running"},
        {"kind": "log", "object": {"kind": "Pod", "name": "cuda-job", "namespace": "default"},
         "container": "cuda",
         "text": "ls: cannot access '/dev/nvidia-modeset': No such file or directory\nstep 1 ok\n"},
    ], cluster={"driver_mode": "host"})
    assert top_pair(case) is None
