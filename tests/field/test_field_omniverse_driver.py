"""Omniverse Kit applications (Isaac Sim, Isaac Lab) refusing the node's driver in their own
words: gpu.foundation's "The currently installed NVIDIA graphics driver is unsupported or has
known issues" (with the installed release and the unsupported range it read) and the RTX
renderer's "rtx driver verification failed" are the driver's release against the
application's requirement (the Omniverse technical requirements: "Drivers older than the ones
listed below are not supported"; isaac-sim/IsaacLab#4244 and InternRobotics/InternNav#201 at
535.18, isaac-sim/IsaacAutomator#40 at 535.54, fixed by a newer driver). Kit's other start-up
lines about the GPU or a driver stay unread."""

from __future__ import annotations

from case import running_job_case
from scoreboard import top_pair

from gpunode.checks.job_words import job_cause, job_names

#: isaac-sim/IsaacLab#4244, as the log prints it (one message over several lines)
KIT = ("2025-12-18T08:52:52Z [8,385ms] [Error] [gpu.foundation.plugin] The currently installed NVIDIA "
       "graphics driver is unsupported or has known issues.\n\n"
       "Reason for failure: The minimum Omniverse RTX requirement on Linux\n"
       "Installed driver: 535.18\nThe unsupported driver range: [0.0, 535.129)\n\n"
       "The recommended drivers: 535.161.07 (GameReady, Studio, RTX/Quadro, Grid/vGPU)\n"
       "The latest driver version may also work but is not fully tested.\n"
       "2025-12-18T08:52:52Z [8,385ms] [Error] [carb.scenerenderer-rtx.plugin] "
       "rtx driver verification failed.")


def _table(line: str) -> tuple[str | None, str | None]:
    component = job_names(line)
    return component, job_cause(line, component) if component else None


def test_kit_refusing_the_installed_driver_is_the_drivers_version() -> None:
    lines = KIT.splitlines()
    assert _table(lines[0]) == ("driver", "error_version_mismatch")
    assert _table(lines[-1]) == ("driver", "error_version_mismatch")
    assert top_pair(running_job_case("x-kit-driver", KIT)) == ("driver", "error_version_mismatch")


def test_kits_other_driver_and_gpu_lines_say_nothing() -> None:
    healthy = ("2025-12-18T08:52:52Z [8,100ms] [Info] [gpu.foundation.plugin] Driver Version: 580.95.05\n"
               "|---------------------------------------------------------------------------------------|\n"
               "2025-12-18T08:52:52Z [8,200ms] [Warning] [omni.hydra.rtx] The latest driver version may also "
               "work but is not fully tested.\n[8.726s] app ready")
    for line in healthy.splitlines():
        assert _table(line) == (None, None), line
    assert top_pair(running_job_case("x-kit-ok", healthy)) is None
