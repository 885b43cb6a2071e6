"""The driver image's script failing on files of its own (data/causes/layer1.toml,
driver_container_script_error): apt's 404 for a package its baked-in lists name and the mirror
rotated out (NVIDIA/gpu-operator#1244, fixed by apt-get update in the script,
NVIDIA/gpu-driver-container#592), and a copy of a program from the image's own bin directories
that the image keeps elsewhere (NVIDIA/gpu-driver-container#513: /usr/bin/lspci on RHEL, where it
lives in /usr/sbin). The host's files, wget's 404 and an unreachable repository keep their
readings."""

from __future__ import annotations

from case import Case, synthetic_case
from scoreboard import top_pair

_SCRIPT = ("driver", "driver_container_script_error")


def _driver_log(text: str) -> Case:
    """The driver container crash-looping with ``text`` as its previous log."""
    return synthetic_case("x-driver-script-files", [
        {"kind": "log", "component": "driver", "container": "nvidia-driver-ctr", "previous": True,
         "text": text + "\n"},
        {"kind": "pod-state", "component": "driver", "container": "nvidia-driver-ctr",
         "state": "CrashLoopBackOff"},
    ], healthy=False, cluster={"driver_mode": "operator"})


def test_apt_404_for_a_listed_package_is_the_scripts() -> None:
    logs = (
        "Get:57 http://us.archive.ubuntu.com/ubuntu jammy-updates/restricted amd64 nvidia-driver-550-server "
        "amd64 550.127.08-0ubuntu0.22.04.1 [489 kB]\n"
        "Err:6 http://us.archive.ubuntu.com/ubuntu jammy-updates/main amd64 libpython3.10-minimal amd64 "
        "3.10.12-1~22.04.7\n  404  Not Found [IP: 91.189.91.81 80]",
        "E: Failed to fetch http://archive.ubuntu.com/ubuntu/pool/main/p/python3.10/"
        "python3.10-minimal_3.10.12-1~22.04.7_amd64.deb  404  Not Found [IP: 185.125.190.36 80]\n"
        "E: Unable to fetch some archives, maybe run apt-get update or try with --fix-missing?",
    )
    for log in logs:
        assert top_pair(_driver_log(log)) == _SCRIPT, log


def test_a_program_missing_from_the_images_bin_directories_is_the_scripts() -> None:
    for path in ("/usr/bin/lspci", "/usr/local/bin/nvidia-driver", "/sbin/modprobe"):
        log = (f"+ cp -r {path} /mnt/shared-nvidia-driver-toolkit/\n"
               f"cp: cannot stat '{path}': No such file or directory")
        assert top_pair(_driver_log(log)) == _SCRIPT, path


def test_the_hosts_files_wgets_404_and_an_unreachable_repository_are_not_the_scripts() -> None:
    logs = (
        # the host's kernel headers and modules, read through the host's mounts
        "cp: cannot stat '/host/usr/bin/nvidia-smi': No such file or directory",
        "cp: cannot stat '/lib/modules/5.15.0-1078-azure/build/Module.symvers': No such file or directory",
        "cp: cannot stat '/usr/src/linux-headers-5.15.0-1078-azure/.config': No such file or directory",
        # GKE's installer fetching a prebuilt package with wget: no build for this kernel
        "2024-05-31 17:59:39 ERROR 404: Not Found.\nThe requested driver does not exist.",
        # an index the proxy refuses: the repository, not the script
        "E: Failed to fetch http://mirror.example.org/ubuntu/dists/focal-updates/Release  403  Forbidden "
        "[IP: 10.0.0.1 3128]",
        "Err:6 http://us.archive.ubuntu.com/ubuntu jammy-updates/main amd64 python3.10 amd64 "
        "3.10.12-1~22.04.7\n"
        "  Could not connect to us.archive.ubuntu.com:80 (91.189.91.81), connection timed out",
    )
    for log in logs:
        assert top_pair(_driver_log(log)) != _SCRIPT, log
