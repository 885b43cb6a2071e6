"""Whether a node's driver can run any CUDA runtime of the CUDA majors still built against.

From CUDA 11 on, an application built with any toolkit of one CUDA major runs on every driver
at or above that major's minimum (minor-version compatibility), and on no older driver:
11.x needs 450.80.02, 12.x 525.60.13, 13.x 580.65.06
(https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html, the full
table in https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html). The frameworks'
supported releases build against the two newest majors (PyTorch's release compatibility
matrix: https://github.com/pytorch/pytorch/blob/main/RELEASE.md#release-compatibility-matrix
lists CUDA 12.x and 13.x builds), so a driver below the older of the two majors' minimum runs
none of their runtimes. CUDA's "driver version is insufficient for CUDA runtime version" on
such a node is the driver's verdict whatever else the node's runtime did: a container that got
the driver's libraries fails the same way.
"""

from __future__ import annotations

from typing import Final

#: NVIDIA's minimum driver of each CUDA major under minor-version compatibility (Linux x86_64).
MAJOR_FLOOR: Final[dict[int, tuple[int, ...]]] = {
    11: (450, 80, 2),
    12: (525, 60, 13),
    13: (580, 65, 6),
}
#: The lowest number a driver branch has (R100 on); L4T releases and CUDA versions are below.
_BRANCH_MIN: Final = 100
#: How many of the newest CUDA majors the frameworks' supported releases build against.
_BUILT_MAJORS: Final = 2


def runs_no_current_cuda(driver: tuple[int, ...]) -> bool:
    """Whether a driver release (570.133.20 -> (570, 133, 20)) is below the minimum of every
    CUDA major still built against, so no current CUDA runtime runs on it. Only a driver
    branch's number is compared (three digits since R100); a Jetson's L4T release (35.4.1)
    or a CUDA version read in its place is not one, and says nothing."""
    majors = sorted(MAJOR_FLOOR)[-_BUILT_MAJORS:]
    return driver[0] >= _BRANCH_MIN and driver < MAJOR_FLOOR[majors[0]]


def on_major_first_branch(driver: tuple[int, ...]) -> bool:
    """Whether a driver release is of the first branch of its CUDA major (450 for 11.x, 525
    for 12.x, 580 for 13.x): the minimum every runtime of that major runs on under minor-version
    compatibility, "with limited feature-set" (the compatibility guide's words). An API a later
    minor release added that needs the newer driver is not served there (its FAQ: such APIs
    need the driver to be upgraded), so the runtime answers that the operation is not
    supported. A later branch of the major, or a number that is no driver branch, says nothing."""
    return driver[0] >= _BRANCH_MIN and any(driver[0] == floor[0] for floor in MAJOR_FLOOR.values())
