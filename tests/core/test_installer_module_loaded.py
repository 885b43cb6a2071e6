"""The NVIDIA driver installer's own words for a module of the driver it is about to replace
that is still loaded ("An NVIDIA kernel module 'nvidia-uvm' appears to already be loaded in
your kernel", printed by every .run installer, the GPU Operator's and GKE's installer
containers included) are the catalogued conflict with a driver already loaded on the host,
whichever module it names and however the message is wrapped or quoted. The installer's
progress and a module loaded as it should stay quiet."""

from __future__ import annotations

import pytest

from gpunode.kb import load_kb

KB = load_kb()


@pytest.mark.parametrize(
    "line",
    [
        # GoogleCloudPlatform/container-engine-accelerators#107: the installer's line, wrapped
        "ERROR: An NVIDIA kernel module 'nvidia-uvm' appears to already be loaded in",
        # the same message from a runfile install, whole, for the core module
        "ERROR: An NVIDIA kernel module 'nvidia' appears to already be loaded in your kernel.  "
        "This may be because it is in use (for example, by an X server, a CUDA program, or the NVIDIA "
        "Persistence Daemon)",
        # as blogs paste it, with typographic quotes
        "An NVIDIA kernel module \u2018nvidia-drm\u2018 appears to already be loaded in your kernel...",
    ],
)
def test_installer_sees_a_loaded_module(line: str) -> None:
    cause = KB.catalogued_in("driver", line)
    assert cause is not None and cause.code == "host_driver_conflict"


@pytest.mark.parametrize(
    "line",
    [
        "Unloading NVIDIA driver kernel modules...",
        "Loading NVIDIA driver kernel modules...",
        "Kernel module 'nvidia' loaded successfully",
    ],
)
def test_progress_is_no_conflict(line: str) -> None:
    assert KB.catalogued_in("driver", line) is None
