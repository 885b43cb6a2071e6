"""A GPU job that loads a driver library by its unversioned development name (libnvidia-ml.so),
which no runtime delivers (gpunode.checks.unversioned_library): the NVIDIA runtime mounts the
soname (libnvidia-ml.so.1) and creates one unversioned link, libcuda.so
(https://github.com/NVIDIA/nvidia-container-toolkit/blob/main/internal/discover/symlinks.go);
nvidia-docker never delivered libnvidia-ml.so (https://github.com/NVIDIA/DIGITS/pull/658). T-Rex's
dlopen of it in a served container (trexminer/T-Rex#777) and its NVML library-not-found after it
say nothing of the stack; the soname missing, or libcuda.so, stays the runtime's."""

from __future__ import annotations

from case import running_job_case
from scoreboard import top_pair

from gpunode.checks.unversioned_library import own_unversioned_load
from gpunode.job_errors import load_job_errors

TABLE = load_job_errors()

DLOPEN = ("WARN: Can't load NVML library, dlopen(25): failed to load libnvidia-ml.so, libnvidia-ml.so: "
          "cannot open shared object file: No such file or directory")
CODE = "WARN: NVML error, code 12"
SONAME = "OSError: libnvidia-ml.so.1: cannot open shared object file: No such file or directory"


def test_the_unversioned_name_is_no_driver_library_the_runtime_left_out() -> None:
    for line in (DLOPEN, "Failed to load libnvidia-cfg.so",
                 "libnvidia-ml.so: cannot open shared object file"):
        found = TABLE.read(line)
        assert found is None or found.component != "container-toolkit", (line, found.id)
    for line in (SONAME, "Cannot load libcuda.so", "libcuda.so: cannot open shared object file"):
        found = TABLE.read(line)
        assert found is not None and found.component == "container-toolkit", line


def test_nvmls_not_found_after_the_unversioned_load_is_the_programs() -> None:
    assert own_unversioned_load(CODE, 2, [DLOPEN, CODE])
    assert not own_unversioned_load(CODE, 1, [CODE])
    assert not own_unversioned_load(CODE, 3, [SONAME, DLOPEN, CODE])
    smi = "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure"
    assert not own_unversioned_load(smi, 1, [smi])


def test_a_served_miner_that_dlopens_the_unversioned_name_stays_healthy() -> None:
    log = "\n".join([DLOPEN, CODE, "WARN: Can't initialize NVML. GPU monitoring will be disabled.",
                     "+ GPU #0: [00:2d.0|2489] GeForce RTX 3060 Ti, 7981 MB"])
    assert top_pair(running_job_case("x-unversioned", log, cluster={"driver_mode": "host"},
                                     platform="docker")) is None


def test_the_soname_missing_stays_the_runtimes() -> None:
    case = running_job_case("x-soname", "\n".join([SONAME, CODE]), cluster={"driver_mode": "host"},
                            platform="docker")
    pair = top_pair(case)
    assert pair is not None and pair[0] == "container-toolkit"
