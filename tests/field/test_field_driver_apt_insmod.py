"""Two readings of the driver container's own output, on real lines from public reports.

apt's words for a repository it cannot reach (the index fetch failed on the network, or an
intercepting proxy or portal answered with a page instead of the signed index: 'does the network
require authentication?') are the repository being unreachable; a 404 for a package is not.

insmod's EEXIST ('File exists') for a module the NVIDIA driver depends on means that module is
already loaded, the node's normal state: an image that insmods it unconditionally and stops is the
image's script at fault; the same errno on NVIDIA's own module and other insmod errors are not."""

from __future__ import annotations

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair


def _driver_log(text: str) -> Case:
    """The driver container crash-looping with ``text`` as its previous log."""
    return synthetic_case("x-driver-log", [
        {"kind": "log", "component": "driver", "container": "nvidia-driver-ctr", "previous": True,
         "text": text + "\n"},
        {"kind": "pod-state", "component": "driver", "container": "nvidia-driver-ctr",
         "state": "CrashLoopBackOff"},
    ], healthy=False, cluster={"driver_mode": "operator"})


#: apt lines of an unreachable repository, as apt prints them in other programs' logs.
APT_UNREACHABLE = [
    # ushahidi/platform-release#60 (a Docker build behind an intercepting network)
    "E: Failed to fetch https://packages.sury.org/php/dists/buster/InRelease  Clearsigned file "
    "isn't valid, got 'NOSPLIT' (does the network require authentication?)",
    # microsoft/mssql-docker#616
    "E: Failed to fetch http://kali.download/kali/dists/kali-rolling/InRelease  Clearsigned file "
    "isn't valid, got 'NOSPLIT' (does the network require authentication?)",
    # 64studio/pdk#29: the same question with an empty answer
    "E: GPG error: http://apt.64studio.com lenny-backports InRelease :  Clearsigned file isn't "
    "valid, got 'NO DATA' (does the network require authentication?)",
    # NVIDIA/nvidia-docker#61: apt's own form of a name that does not resolve
    "W: Failed to fetch http://archive.ubuntu.com/ubuntu/dists/trusty/Release.gpg  Could not "
    "resolve 'archive.ubuntu.com'",
    # actions/runner-images#7048
    "E: Failed to fetch http://azure.archive.ubuntu.com/ubuntu/pool/main/s/systemd/"
    "libudev1_245.4-4ubuntu3.21_amd64.deb  Unable to connect to azure.archive.ubuntu.com:http:",
]


@pytest.mark.parametrize("line", APT_UNREACHABLE)
def test_apt_that_cannot_reach_its_repository_is_the_repository(line: str) -> None:
    log = "Checking NVIDIA driver packages...\nUpdating the package cache...\n" + line
    assert top_pair(_driver_log(log)) == ("driver", "driver_repo_unreachable")


def test_a_package_the_repository_answers_404_for_is_not_unreachable() -> None:
    """The repository answered: the package is missing, not the route to it."""
    log = ("Installing Linux kernel headers...\nE: Failed to fetch http://archive.ubuntu.com/ubuntu/"
           "pool/main/l/linux/linux-headers-5.15.0-67_5.15.0-67.74_all.deb  404  Not Found "
           "[IP: 185.125.190.39 80]")
    assert top_pair(_driver_log(log)) != ("driver", "driver_repo_unreachable")


#: insmod's EEXIST on a dependency module, in the forms insmod prints it.
INSMOD_DEPENDENCY_LOADED = [
    # src-d/coreos-nvidia#4 (the case's own form, kept as the reference)
    "insmod: ERROR: could not insert module /rootfs/usr/lib64/modules/4.14.19-coreos/kernel/"
    "drivers/char/ipmi/ipmi_msghandler.ko: File exists",
    # ntop/PF_RING#359, FrescoLogic/FL2000#50: the module already loaded (lsmod shows it)
    "insmod: ERROR: could not insert module pf_ring.ko: File exists",
    "insmod: ERROR: could not insert module fl2000.ko: File exists",
    # jtsylve/LiME#60: the older module-init-tools form
    "insmod: error inserting '/mnt/usb/lime-mater/src/lime.ko': -1 File exists",
]


@pytest.mark.parametrize("line", INSMOD_DEPENDENCY_LOADED)
def test_insmod_of_an_already_loaded_dependency_is_the_images_script(line: str) -> None:
    assert top_pair(_driver_log(line)) == ("driver", "driver_container_script_error")


@pytest.mark.parametrize("line", [
    # NVIDIA's own module already loaded: a driver on the host, not the image's dependency step
    "insmod: ERROR: could not insert module /opt/nvidia/lib/modules/4.14.16/video/nvidia.ko: File exists",
    # src-d/coreos-nvidia#3: another errno is the module load itself
    "insmod: ERROR: could not insert module /opt/nvidia/lib/modules/4.14.16/video/nvidia.ko: "
    "Unknown symbol in module",
])
def test_other_insmod_failures_stay_module_load(line: str) -> None:
    assert top_pair(_driver_log(line)) == ("driver", "error_module_load")
