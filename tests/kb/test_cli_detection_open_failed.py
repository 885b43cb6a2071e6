"""nvidia-container-cli's driver detection that cannot open a driver library its linker-cache
listing named ('detection error: open failed: <lib>: no such file or directory',
NVIDIA/nvidia-container-toolkit#266, NVIDIA/nvidia-docker#1404) is container_cli_no_driver_libs:
the driver's libraries are not where the hook looks. Look-alikes keep their own readings: a path
the CLI may not read (permission denied), NVML's errors during detection, a library that is not
the driver's."""

from __future__ import annotations

import pytest

from gpunode.kb import load_kb

KB = load_kb()


@pytest.mark.parametrize(
    "line",
    [
        "nvidia-container-cli: detection error: open failed: "
        "/usr/lib/x86_64-linux-gnu/libnvidia-tls.so.450.36.06: no such file or directory",
        "stderr: nvidia-container-cli: detection error: open failed: "
        "/usr/lib/x86_64-linux-gnu/libnvidia-tls.so.470.86: no such file or directory: unknown.",
        "nvidia-container-cli.real: detection error: open failed: /usr/lib64/libcuda.so.535.104.05: "
        "no such file or directory",
    ],
)
def test_detection_open_failed_is_no_driver_libs(line: str) -> None:
    found = KB.catalogued_in("container-toolkit", line)
    assert found is not None and found.code == "container_cli_no_driver_libs"


@pytest.mark.parametrize(
    "line",
    [
        "nvidia-container-cli: detection error: path error: ///usr/local/nvidia/lib64/libvdpau_nvidia.so: "
        "permission denied",
        "nvidia-container-cli: detection error: nvml error: unknown error",
        "nvidia-container-cli: detection error: open failed: /usr/lib/x86_64-linux-gnu/libfoo.so.1: "
        "no such file or directory",
    ],
)
def test_look_alike_is_not_no_driver_libs(line: str) -> None:
    found = KB.catalogued_in("container-toolkit", line)
    assert found is None or found.code != "container_cli_no_driver_libs"
