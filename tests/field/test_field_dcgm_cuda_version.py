"""DCGM refusing the CUDA version the node's driver reports, newer than its release knows
(data/job_errors/profilers.toml ``dcgm-unsupported-cuda-version``): DCGM and the driver at
versions that do not match, DCGM's to upgrade (NVIDIA/DCGM#59: dcgmi 3.0.4 on driver
525.60.13). Look-alikes: build scripts' own "unsupported CUDA version" words, which are no
DCGM's and name no layer."""

from __future__ import annotations

from case import gpu_job_case
from scoreboard import top_pair

from gpunode.job_errors import job_error

#: NVIDIA/DCGM#59
DCGM_59 = "Detected unsupported Cuda version"


def test_dcgm_s_refusal_of_the_driver_s_cuda_is_dcgm_s_version_mismatch() -> None:
    expected = ("dcgm-exporter", "error_version_mismatch")
    found = job_error(DCGM_59)
    assert found is not None and (found.component, found.cause) == expected
    assert top_pair(gpu_job_case("x-dcgm-cuda-version", DCGM_59)) == expected


def test_a_build_script_s_unsupported_cuda_words_are_not_dcgm_s() -> None:
    # a configure script and a package build (public build scripts' words)
    for line in ("***configure failed: Unsupported CUDA version 13_0.",
                 "unsupported cuda version. Please update build.sh"):
        found = job_error(line)
        assert found is None or found.component != "dcgm-exporter", line
