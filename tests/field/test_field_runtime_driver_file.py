"""An OCI runtime that cannot stat or mount a host library of the driver's user space
(libnvidia-*, lib*_nvidia, libcuda, at the driver's version or their own, as egl-wayland's) was
asked to by what injects the driver into GPU containers: images carry none of them, so the
mount list is the toolkit's (its CDI spec or hook), written against files the host no longer
has after a driver update (regenerate the spec). The runtime only relays it; a message cut to
its last part names the file alone, at the driver's release, and is read the same way. Lines
from public reports, each address beside it."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from case import Case
from scoreboard import top_pair

from gpunode.catalog import load_catalog

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
    # WSL2's driver store, renamed by each Windows driver update, in single quotes with the hash
    # as octasoft-ltd/wsl-ui's docs/TROUBLESHOOTING.md prints it and as a real hash reads
    "crun: cannot stat '/usr/lib/wsl/drivers/nvmdi.inf_amd64_<oldhash>/libcuda.so.1.1': No such file "
    "or directory",
    "crun: cannot stat '/usr/lib/wsl/drivers/nvmdi.inf_amd64_9b3c1f0e2d4a7c55/libcuda.so.1.1': No such "
    "file or directory",
)


#: https://github.com/HaveAGitGat/Tdarr/issues/1423: the daemon's message after a driver update to
#: 580.178.04, as quoted to its last part (the CDI spec still named 580.159.04; the same mechanism
#: as nvidia-container-toolkit#450 and Igalia/webkit-container-sdk#23, regenerated per NVIDIA's CDI
#: page: "you must generate a new CDI specification ... when the driver is upgraded")
BARE_NAME = "libEGL_nvidia.so.580.159.04: no such file or directory"


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


def test_a_driver_library_named_without_its_directory_is_the_toolkits() -> None:
    assert top_pair(_failed(BARE_NAME)) == ("container-toolkit", "error_file_state")


@pytest.mark.parametrize("line", [
    # the soname a program loads (no driver release in it): the image's or the request's business
    "libEGL_nvidia.so.0: cannot open shared object file: No such file or directory",
    # a name that only ends like a driver library is none of the driver's files
    "mylibEGL_nvidia.so.580.159.04: no such file or directory",
    # two quoted names on one line: the missing one is not a driver library
    "crun: cannot stat '/usr/lib/wsl/lib/libfoo.so.1' for '/usr/lib/wsl/lib/libcuda.so.1.1': No such file or "
    "directory",
])
def test_a_name_without_the_drivers_release_names_no_toolkit(line: str) -> None:
    assert load_catalog().named_in(line) != "container-toolkit"
