"""nvidia-container-cli's "WSL environment detected but no adapters were found": dxcore (the
WSL GPU path, libdxcore and /dev/dxg) answers with no GPU adapter from the Windows host
(libnvidia-container src/nvc.c), so no driver serves the Linux side: driver_not_loaded
(IDEA-Research/Grounded-Segment-Anything#506: a host without an NVIDIA GPU; OpenBMB/UltraRAG#12:
the WSL-capable driver to install; xencon/aixcl#142; AbdBarho/stable-diffusion-webui-docker#117:
WSL1). The CLI's non-WSL start ("dxcore initialization failed, continuing assuming a non-WSL
environment", an info line of its debug log) stays silent."""

from __future__ import annotations

from case import Case, synthetic_case
from scoreboard import top_pair

HOOK = ("failed to create task for container: failed to create shim task: OCI runtime create failed: "
        "runc create failed: unable to start container process: error during container init: error running "
        "prestart hook #0: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\n"
        "nvidia-container-cli: initialization error: WSL environment detected but no adapters were found: "
        "unknown")


def _case(message: str, healthy: bool = False) -> Case:
    evidence = [{"kind": "workload", "name": "app", "namespace": "default", "container": "app",
                 "state": "RunContainerError" if not healthy else "Running"},
                {"kind": "event", "object": {"kind": "Pod", "name": "app", "namespace": "default"},
                 "type": "Warning" if not healthy else "Normal",
                 "reason": "Failed" if not healthy else "Started", "message": message}]
    return synthetic_case("x-wsl-adapters", evidence, healthy=healthy, cluster={"driver_mode": "host"})


def test_no_wsl_adapters_is_no_driver() -> None:
    """UltraRAG#12's hook error, as a GPU pod's Failed event."""
    assert top_pair(_case(HOOK)) == ("driver", "driver_not_loaded")


def test_non_wsl_start_stays_silent() -> None:
    """The CLI's debug note on a node that is not WSL is no failure."""
    note = ("I0913 11:52:12.170514 4764 nvc.c:395] dxcore initialization failed, continuing assuming "
            "a non-WSL environment")
    assert top_pair(_case(note, healthy=True)) is None

