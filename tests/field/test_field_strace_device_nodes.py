"""A GPU job's strace of the driver's device nodes names the driver.

strace records each failed open as 'open("/dev/nvidia-uvm", O_RDWR) = -1 EPERM (Operation not
permitted)'. A node absent (ENOENT) is the driver's; /dev/nvidia-uvm refused by the container's
device cgroup (EPERM) is a node created after the container was, since the toolkit gives a
container only the nodes that exist when it is created and CUDA opens nvidia-uvm after
nvidiactl (NVIDIA/k8s-device-plugin#222: nvidia-uvm loaded on demand after a reboot): both are
nvidia_uvm_missing. EPERM on /dev/nvidiactl is the container's device access, not the driver's."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

CUDA = ('CUDA error at ../../common/inc/helper_cuda.h:708 code=30(cudaErrorUnknown) '
        '"cudaGetDeviceCount(&device_count)"')
IOCTL = "ioctl(-1, _IOC(0, 0, 0x2, 0x3000), 0)   = -1 EBADF (Bad file descriptor)"


def _case(strace: str) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "log", "object": {"kind": "Pod", "name": "cuda-job", "namespace": "default"},
         "text": f"{strace}\n{IOCTL}\n{CUDA}\n"}]
    return synthetic_case("x-strace-nodes", evidence, cluster={"driver_mode": "host"})


def test_uvm_refused_by_the_device_cgroup_is_uvm_missing() -> None:
    line = 'open("/dev/nvidia-uvm", O_RDWR|O_CLOEXEC) = -1 EPERM (Operation not permitted)'
    assert top_pair(_case(line)) == ("driver", "nvidia_uvm_missing")


def test_uvm_absent_is_uvm_missing() -> None:
    line = 'openat(AT_FDCWD, "/dev/nvidia-uvm", O_RDWR|O_CLOEXEC) = -1 ENOENT (No such file or directory)'
    assert top_pair(_case(line)) == ("driver", "nvidia_uvm_missing")


def test_control_node_refused_is_not_the_driver() -> None:
    line = 'openat(AT_FDCWD, "/dev/nvidiactl", O_RDWR) = -1 EPERM (Operation not permitted)'
    top = top_pair(_case(line))
    assert top is None or top != ("driver", "nvidia_uvm_missing")
    assert top is None or top[0] != "driver"
