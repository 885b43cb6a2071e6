"""TensorFlow's and XLA's CUDA diagnostics compare the loaded kernel module's version with the
libcuda the process loaded: "kernel version X does not match DSO version Y" is the driver's module
and user-space library at two releases, the driver's driver_library_mismatch whoever prints it
(NVML's "Driver/library version mismatch" in a framework's words). Lines from public reports,
each address beside it; the same diagnostics' other lines stay unread."""

from __future__ import annotations

import pytest
from scoreboard import top_pair
from test_field_job_words import _job_log

from gpunode.checks.job_words import job_names

MISMATCH = (
    # https://github.com/tensorflow/tensorflow/issues/4768 (352 module, 361 libcuda)
    "E tensorflow/stream_executor/cuda/cuda_diagnostics.cc:296] kernel version 352.63.0 does not "
    "match DSO version 361.93.2 -- cannot find working devices in this configuration",
    # https://github.com/tensorflow/tensorflow/issues/22525 (384 module, 375 libcuda)
    "2018-09-26 16:20:01.273681: E tensorflow/stream_executor/cuda/cuda_diagnostics.cc:303] kernel version "
    "384.130.0 does not match DSO version 375.66.0 -- cannot find working devices in this configuration",
    # https://github.com/tensorflow/tensorflow/issues/4349 (nvidia-smi: Driver/library version mismatch)
    "2021-10-16 14:56:09.420791: E tensorflow/stream_executor/cuda/cuda_diagnostics.cc:313] kernel version "
    "460.91.3 does not match DSO version 470.57.2 -- cannot find working devices in this configuration",
)


@pytest.mark.parametrize("line", MISMATCH)
def test_kernel_and_dso_versions_differing_is_the_drivers_mismatch(line: str) -> None:
    assert job_names(line) == "driver"
    assert top_pair(_job_log(line + "\n")) == ("driver", "driver_library_mismatch")


def test_the_diagnostics_other_lines_are_not_read() -> None:
    # versions that match, and no libcuda loaded, printed "Not found: ..." in its place (as the
    # libcuda line of https://github.com/ai4d-iasc/trixie/issues/41 shows)
    seems = ("I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:200] kernel version seems to match "
             "DSO: 470.57.2\n")
    assert top_pair(_job_log(seems)) is None
    unfound = ("E cuda_diagnostics.cc:313] kernel version 460.91.3 does not match DSO version Not found: was "
               "unable to find libcuda.so DSO loaded into this program -- cannot find working devices\n")
    assert job_names(unfound) is None
