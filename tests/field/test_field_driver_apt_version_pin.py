"""apt refusing the exact version a driver install script pinned (data/causes/layer1.toml,
driver_container_script_error): "E: Version '<v>' for '<pkg>' was not found" is apt's answer once
the package name resolved and no version of it matches the pin (apt-pkg/cacheset.cc,
CacheSetHelper::canNotGetVerFromVersionNumber, https://salsa.debian.org/apt-team/apt/-/blob/main/apt-pkg/cacheset.cc),
so the version the script computed is what is wrong (NVIDIA/gpu-driver-container#451,
https://github.com/NVIDIA/gpu-driver-container/pull/451: the precompiled R580 image's pins, fixed in
its script). A package with no name in the repositories ("Unable to locate package") stays the
OS's or kernel's missing build."""

from __future__ import annotations

from case import Case, synthetic_case
from scoreboard import top_pair


def _driver_log(text: str) -> Case:
    """The driver container crash-looping with ``text`` as its previous log."""
    return synthetic_case("x-driver-apt-pin", [
        {"kind": "log", "component": "driver", "container": "nvidia-driver-ctr", "previous": True,
         "text": text + "\n"},
        {"kind": "pod-state", "component": "driver", "container": "nvidia-driver-ctr",
         "state": "CrashLoopBackOff"},
    ], healthy=False, cluster={"driver_mode": "operator"})


def test_a_pinned_version_apt_does_not_have_is_the_scripts() -> None:
    for line in ("E: Version '580.65.06-1' for 'nvidia-fabricmanager-580' was not found",
                 "E: Version '535.104.05-1' for 'cuda-drivers' was not found"):
        log = "Installing NVIDIA driver packages...\n" + line
        assert top_pair(_driver_log(log)) == ("driver", "driver_container_script_error"), line


def test_a_package_that_does_not_exist_is_not_the_scripts_pin() -> None:
    log = "Installing Linux kernel headers...\nE: Unable to locate package linux-headers-5.15.0-1053-azure"
    assert top_pair(_driver_log(log)) != ("driver", "driver_container_script_error")
