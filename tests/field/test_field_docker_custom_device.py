"""Docker adds a container's devices (--device, or the device specs a device plugin handed the
kubelet) by reading each host node, and refuses one that is not there: 'error gathering device
information while adding custom device "<path>": no such file or directory' (older engines put
'lstat <path>: ' before the errno). For a /dev/nvidia* node the driver creates it, so its absence
is the driver's, read as the same node missing in any other words (/dev/nvidia-uvm:
nvidia_uvm_missing). Lines from public reports, each address beside it."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from case import Case
from scoreboard import top_pair

UVM = (
    # https://github.com/cBio/cbio-cluster/issues/389 (nvidia0-7 and nvidiactl there, no nvidia-uvm)
    'Error response from daemon: Cannot start container 23e6442e787b: error gathering device information '
    'while adding custom device "/dev/nvidia-uvm": lstat /dev/nvidia-uvm: no such file or directory',
    # https://github.com/webanck/docker-wine-steam/issues/15
    'Error response from daemon: linux runtime spec devices: error gathering device information while '
    'adding custom device "/dev/nvidia-uvm": lstat /dev/nvidia-uvm: no such file or directory',
    # newer engines leave the lstat out (PierreBeucher/cloudypad#179's form)
    'Error response from daemon: error gathering device information while adding custom device '
    '"/dev/nvidia-uvm": no such file or directory',
)


def _failed(message: str) -> Case:
    pod = {"kind": "Pod", "name": "job-0", "namespace": "default"}
    raw: dict[str, Any] = {
        "id": "x-custom-device", "source": "https://example.org/x", "title": "t", "platform": "docker",
        "cluster": {"driver_mode": "host"},
        "evidence": [{"kind": "event", "object": pod, "type": "Warning", "reason": "Failed",
                      "message": message}],
        "expect": {"healthy": True}}
    return msgspec.convert(raw, Case)


@pytest.mark.parametrize("line", UVM)
def test_docker_finding_no_uvm_node_is_the_drivers(line: str) -> None:
    assert top_pair(_failed(line)) == ("driver", "nvidia_uvm_missing")


def test_the_driver_node_of_another_name_is_the_drivers() -> None:
    line = ('Error response from daemon: error gathering device information while adding custom device '
            '"/dev/nvidiactl": no such file or directory')
    pair = top_pair(_failed(line))
    assert pair is not None and pair[0] == "driver"


def test_a_missing_device_node_of_another_vendor_is_not_the_drivers() -> None:
    # the same refusal for a FUSE or DRI render node names nothing of the NVIDIA stack
    for path in ("/dev/fuse", "/dev/dri/renderD128"):
        line = ("Error response from daemon: error gathering device information while adding custom "
                f'device "{path}": no such file or directory')
        pair = top_pair(_failed(line))
        assert pair is None or pair[0] != "driver"
