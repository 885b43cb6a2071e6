"""The driver container that cannot find the node's kernel (no version string in the kernel
image, a version it cannot resolve) on an OS NVIDIA publishes no driver image for runs
another OS's image: the OS is unsupported. On a published OS the same words are the kernel's
(a kernel image without a readable version, headers missing)."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

#: gpu-driver-container's RHEL-family script tracing its kernel version step (set -x).
_VMLINUX = ("Generating Linux kernel version string...\n"
            "+ extract-vmlinux ./lib/modules/{kernel}/vmlinuz\n"
            "+ strings\n"
            "+ grep -E '^Linux version'\n"
            "extract-vmlinux: Cannot find vmlinux.\n"
            "+ '[' -z '' ']'\n"
            "+ echo 'Could not locate Linux kernel version string'\n"
            "Could not locate Linux kernel version string\n")


def _case(os_image: str, kernel: str, log: str) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "node-info", "fields": {"osImage": os_image, "kernelVersion": kernel}},
        {"kind": "pod-state", "component": "driver", "container": "nvidia-driver-ctr",
         "state": "CrashLoopBackOff"},
        {"kind": "log", "component": "driver", "container": "nvidia-driver-ctr", "previous": True,
         "text": log},
    ]
    return synthetic_case("x-kernel-unresolved", evidence, healthy=False)


def test_no_kernel_version_string_on_fedora_coreos_is_an_unsupported_os() -> None:
    kernel = "6.5.6-300.fc39.x86_64"
    case = _case("Fedora CoreOS 39.20231101.3.0", kernel, _VMLINUX.format(kernel=kernel))
    assert top_pair(case) == ("driver", "unsupported_os")


def test_the_same_words_on_ubuntu_are_not_the_os() -> None:
    # an Azure confidential VM boots a unified kernel image: no standalone vmlinuz to read
    kernel = "6.8.0-1025-azure-fde"
    case = _case("Ubuntu 22.04.5 LTS", kernel, _VMLINUX.format(kernel=kernel))
    assert top_pair(case)[1] != "unsupported_os"


def test_an_unresolved_kernel_on_centos_linux_is_the_kernel_s() -> None:
    # CentOS Linux 7 had driver images; its newer kernels lacked headers in the repositories
    case = _case("CentOS Linux 7 (Core)", "3.10.0-1062.12.1.el7.x86_64",
                 "Resolving Linux kernel version...\nCould not resolve Linux kernel version\n")
    assert top_pair(case) == ("driver", "kernel_headers_missing")
