"""A device node that cannot be made is the device's failure (error_device), not a file the
component reads: nvidia-ctk's nvdevices (the toolkit container's control nodes, the validator's
/dev/char links) takes the major from /proc/devices and says which step failed ('failed to
create device node nvidiactl: failed to determine major: invalid device node'). Each line comes
from a public report or the source that prints it (its address beside it)."""

from __future__ import annotations

from gpunode.kb import load_kb


def test_a_device_node_nvidia_ctk_cannot_create_is_the_devices() -> None:
    class_of = load_kb().class_of
    lines = [
        # NVIDIA/gpu-operator#1015 (toolkit v1.14.3 on an R550 driver: NVIDIA/nvidia-container-toolkit#324)
        'time="2024-09-27T12:16:45Z" level=info msg="Error: error validating driver installation: error '
        "creating symlink creator: failed to create NVIDIA device nodes: failed to create device node "
        'nvidiactl: failed to determine major: invalid device node"',
        # NVIDIA/nvidia-container-toolkit internal/system/nvdevices/devices.go: the other steps it names
        "failed to create device node nvidia-uvm: failed to determine minor: invalid device node",
        'invalid device node "dri": invalid device node',
        # internal/system/nvdevices/gpu-device-nodes.go: the driver lists no major
        "failed to determine device major; nvidia kernel module may not be loaded",
    ]
    for line in lines:
        assert class_of(line) == "error_device", line


def test_the_same_words_meaning_something_else_keep_their_class() -> None:
    class_of = load_kb().class_of
    # a node the process may not make is a refusal (the earlier class), as mknod says it
    assert class_of("failed to create device node /dev/nvidia-uvm: operation not permitted") \
        == "error_permission_denied"
    # a major *version* is not a device's major number
    assert class_of("Failed to determine major version: unexpected version string") != "error_device"
    # nvdevices skipping a node that is there is no failure
    assert class_of("Skipping: /dev/nvidiactl already exists") is None
