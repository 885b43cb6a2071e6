# ruff: noqa: E501  (real log lines are long)
"""nvidia-container-cli's debug log (config.toml's ``[nvidia-container-cli] debug``, or
``nvidia-container-cli -d``) records its failures as klog lines before the one-line
"initialization error" or "ldcache error" the runtime relays; pasted alone, they name the
same causes as the short forms already catalogued.

Lines: NVIDIA/nvidia-docker#1246 and #1090 (the chroot into the driver container's root),
OE4T/meta-tegra#1456 (the driver service that could not load libcuda from the root),
NVIDIA/nvidia-docker#1163 and #1399 (the host ldconfig that could not be executed, Debian 10
and 11). Look-alikes from the same logs that say nothing failed stay unexplained, and the
chroot of another program is not the CLI's."""

from __future__ import annotations

import pytest

from gpunode.explain import explain_lines

_NO_LIBS = [
    # nvidia-docker#1246
    "E0409 09:28:27.690053 29764 nvc.c:180] failed to change root directory: No such file or directory",
    # nvidia-docker#1090
    "E0927 14:12:43.003080 7399 driver.c:197] could not start driver service: change root failed: no such file or directory",
    # OE4T/meta-tegra#1456
    "E0116 15:56:51.763612 1363 driver.c:196] could not start driver service: load library failed: libcuda.so.1: cannot open shared object file: no such file or directory",
]
_LDCONFIG = [
    # nvidia-docker#1163
    "E0105 19:55:43.488469 1 nvc_ldcache.c:384] could not start /sbin/ldconfig: process execution failed: no such file or directory",
    # nvidia-docker#1399
    "E0216 16:10:49.982844 1 nvc_ldcache.c:393] could not start /usr/sbin/ldconfig: process execution failed: no such file or directory",
]
_QUIET = [
    # the same logs' records of steps that went well
    "I0409 09:28:27.686423 29760 nvc.c:255] using root /run/nvidia/driver",
    "I0927 14:12:43.002266 7399 driver.c:133] starting driver service",
    "I0105 19:55:43.487585 13429 nvc_ldcache.c:353] executing /sbin/ldconfig from host at /var/lib/docker/devicemapper/mnt/c73813553175/rootfs",
    "I0913 11:52:12.223464 4764 rpc.c:135] driver rpc service terminated successfully",
]


def _best(line: str) -> str | None:
    matches = explain_lines([line]).matches
    return matches[0].cause.code if matches else None


@pytest.mark.parametrize("line", _NO_LIBS)
def test_driver_root_records_name_the_missing_libraries(line: str) -> None:
    assert _best(line) == "container_cli_no_driver_libs"


@pytest.mark.parametrize("line", _LDCONFIG)
def test_ldconfig_exec_record_names_the_ldconfig_setting(line: str) -> None:
    assert _best(line) == "toolkit_ldconfig_path_wrong"


@pytest.mark.parametrize("line", _QUIET)
def test_records_of_steps_that_went_well_name_nothing(line: str) -> None:
    assert _best(line) not in ("container_cli_no_driver_libs", "toolkit_ldconfig_path_wrong")


def test_another_programs_chroot_is_not_the_clis() -> None:
    line = "chroot: failed to run command '/bin/bash': No such file or directory"
    assert _best(line) != "container_cli_no_driver_libs"
