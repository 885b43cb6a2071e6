"""conda's solver refusing a package whose __cuda constraint the node's driver does not meet
(data/job_errors/frameworks.toml ``conda-cuda-virtual-package-conflict``): __cuda is the highest
CUDA version the display driver supports (conda's "Managing virtual packages"), so the driver is
too old for the environment (the RAPIDS install guide's "__cuda constraint conflict").
Look-alikes: conda info listing __cuda, and a solver that finds no __cuda at all (a host with
no driver seen, such as a build machine)."""

from __future__ import annotations

from case import running_job_case
from scoreboard import top_pair

from gpunode.job_errors import job_error

CONFLICT = (" - package cuda-version-12.0-hffde075_0 has constraint __cuda >=12 conflicting with "
            "__cuda-11.8-0")
INFO = "                          __cuda=12.4=0"
NOTHING = "  - nothing provides __cuda >=12 needed by cuda-version-12.0-hffde075_0"


def test_a_cuda_constraint_conflict_is_the_driver_too_old() -> None:
    found = job_error(CONFLICT)
    assert found is not None and (found.component, found.cause) == ("driver", "cuda_driver_too_old")
    text = "LibMambaUnsatisfiableError: Encountered problems while solving:\n" + CONFLICT
    node = {"gpus": 1, "driver_version": "520.61.05", "cuda_version": "11.8"}
    case = running_job_case("x-conda-cuda", text, cluster={"driver_mode": "host", "gpu_node": node})
    assert top_pair(case) == ("driver", "cuda_driver_too_old")


def test_listing_cuda_or_finding_none_is_not_read() -> None:
    assert job_error(INFO) is None
    assert job_error(NOTHING) is None
