"""An OCI runtime that cannot stat or mount a host library of the driver's user space
(libnvidia-*, lib*_nvidia, libcuda, at the driver's version or their own, as egl-wayland's) was
asked to by what injects the driver into GPU containers: images carry none of them, so the
mount list is the toolkit's (its CDI spec or hook), written against files the host no longer
has after a driver update (regenerate the spec). The runtime only relays it. Lines from public
reports, each address beside it."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from case import Case
from scoreboard import top_pair

STALE = (
    # https://github.com/NVIDIA/nvidia-container-toolkit/issues/450 (Fedora 39, driver 550.67 installed)
    "Error: crun: cannot stat `/lib64/libEGL_nvidia.so.550.54.14`: No such file or directory: OCI runtime "
    "attempted to invoke a command that was not found",
    # https://github.com/containers/ramalama/issues/1900 (Fedora 42, 575.64.05 installed)
    "Error: crun: cannot stat `/usr/lib64/libEGL_nvidia.so.575.64.03`: No such file or directory: "
    "OCI runtime attempted to invoke a command that was not found",
    # a library versioned on its own (egl-wayland 1.1.13 replaced by 1.1.16), as
    # https://github.com/podman-container-tools/podman/issues/23935 reports it
    "Error: crun: cannot stat `/usr/lib/libnvidia-egl-wayland.so.1.1.13`: No such file or directory: "
    "OCI runtime attempted to invoke a command that was not found",
)


def _failed(message: str) -> Case:
    pod = {"kind": "Pod", "name": "job-0", "namespace": "default"}
    raw: dict[str, Any] = {
        "id": "x-runtime-file", "source": "https://example.org/x", "title": "t", "platform": "generic",
        "cluster": {"driver_mode": "host", "cdi": True},
        "evidence": [
            {"kind": "workload", "name": "job-0", "namespace": "default", "container": "main",
             "state": "RunContainerError"},
            {"kind": "event", "object": pod, "type": "Warning", "reason": "Failed", "message": message}],
        "expect": {"healthy": True}}
    return msgspec.convert(raw, Case)


@pytest.mark.parametrize("line", STALE)
def test_a_driver_library_the_runtime_cannot_find_is_the_toolkits(line: str) -> None:
    assert top_pair(_failed(line)) == ("container-toolkit", "error_file_state")


def test_a_missing_file_of_no_nvidia_library_stays_the_runtimes() -> None:
    # the same words for Mesa's EGL library name nothing the toolkit injects
    line = ("Error: crun: cannot stat `/usr/lib/libEGL_mesa.so.0.0.0`: No such file or directory: "
            "OCI runtime attempted to invoke a command that was not found")
    assert top_pair(_failed(line)) == ("container-runtime", "error_file_state")
