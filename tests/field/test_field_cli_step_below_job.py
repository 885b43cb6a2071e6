"""A GPU job's "NVIDIA-SMI couldn't find libnvidia-ml.so" followed down to nvidia-container-cli's
own debug log on the node: where the CLI's last run logged a catalogued error of the toolkit
(nvc_ldcache.c "could not start /sbin/ldconfig: process execution failed", the ldconfig its
config names missing or not executable), that step is the cause and the job's words are its
consequence. Sources: NVIDIA/nvidia-docker#1163 (Debian 10, "@/sbin/ldconfig"),
NVIDIA/nvidia-docker#1399 (Debian 11, /usr/sbin/ldconfig), both with the job's nvidia-smi line;
apptainer/apptainer#2028 (Ubuntu's wrapper script). Look-alikes keep the job's reading: no CLI
log (nebius/soperator#2468), a CLI error that is itself the missing library (OE4T/meta-tegra#1456),
a CLI run without an error."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

JOB = ("NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA "
       "Display Driver is properly installed and present in your system.\n")
#: NVIDIA/nvidia-docker#1399's form: the CLI told to run /usr/sbin/ldconfig, which it cannot start.
LDCONFIG = ("I1014 17:07:55.034915 22711 nvc_ldcache.c:359] executing /usr/sbin/ldconfig from host at "
            "/var/lib/docker/overlay2/3f1c/merged\n"
            "E1014 17:07:55.035760 1 nvc_ldcache.c:390] could not start /usr/sbin/ldconfig: "
            "process execution failed: no such file or directory\n")
#: OE4T/meta-tegra#1456: the driver service cannot load libcuda in the driver root.
NO_LIBCUDA = ("I0116 15:56:51.762404 1363 driver.c:134] starting driver service\n"
              "E0116 15:56:51.763612 1363 driver.c:196] could not start driver service: load library failed: "
              "libcuda.so.1: cannot open shared object file: no such file or directory\n")
CLEAN = ("I0420 02:47:27.364644 3475 nvc.c:281] initializing library context (version=1.0.0, build=x)\n"
         "I0420 02:47:27.410000 3475 nvc.c:318] shutting down library context\n")


def _case(cli_log: str | None) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "cuda", "namespace": "default", "container": "cuda",
         "resources": {"limits": {"nvidia.com/gpu": "1"}}, "state": "Error", "exit_code": 1},
        {"kind": "log", "object": {"kind": "Pod", "name": "cuda", "namespace": "default"},
         "container": "cuda", "text": JOB}]
    if cli_log is not None:
        evidence.append({"kind": "node-file", "path": "var/log/nvidia-container-toolkit.log",
                         "text": cli_log})
    return synthetic_case("x-cli-step", evidence, healthy=False, cluster={"driver_mode": "host"})


def test_cli_ldconfig_error_is_the_cause_under_the_jobs_words() -> None:
    assert top_pair(_case(LDCONFIG)) == ("container-toolkit", "toolkit_ldconfig_path_wrong")


def test_job_words_alone_keep_their_reading() -> None:
    assert top_pair(_case(None)) == ("container-toolkit", "container_cli_no_driver_libs")


def test_cli_error_that_is_the_missing_library_keeps_it() -> None:
    assert top_pair(_case(NO_LIBCUDA)) == ("container-toolkit", "container_cli_no_driver_libs")


def test_cli_run_without_error_keeps_the_jobs_reading() -> None:
    assert top_pair(_case(CLEAN)) == ("container-toolkit", "container_cli_no_driver_libs")
