"""The driver script's 'Could not resolve Linux kernel version' names headers the repository
lacks on a distribution's kernel, but the script's own failure to read the kernel's name on
a kernel built outside any distribution (setlocalversion's '-g<hash>', a 'custom' name)."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import top_pair

_LOG = ("========== NVIDIA Software Installer ==========\n\n"
        "Starting installation of NVIDIA driver version 575.57.08 for Linux kernel version {kernel}\n\n"
        "Unloading NVIDIA driver kernel modules...\nUnmounting NVIDIA driver rootfs...\n"
        "Updating the package cache...\nResolving Linux kernel version...\n"
        "Could not resolve Linux kernel version\n")


def _driver(kernel: str) -> Case:
    raw: dict[str, Any] = {
        "id": "x-kernel-name", "source": "https://example.org/x", "title": "t", "platform": "generic",
        "cluster": {"driver_mode": "operator"}, "expect": {"healthy": True},
        "evidence": [{"kind": "node-info", "fields": {"kernelVersion": kernel}},
                     {"kind": "log", "component": "driver", "container": "nvidia-driver-ctr",
                      "previous": True, "text": _LOG.format(kernel=kernel)},
                     {"kind": "pod-state", "component": "driver", "container": "nvidia-driver-ctr",
                      "state": "CrashLoopBackOff"}]}
    return msgspec.convert(raw, Case)


def test_a_locally_built_kernel_is_the_script_s_failure_to_read_its_name() -> None:
    for kernel in ("6.8.0-52-gc758b3587a28", "6.5.13custom-00042", "6.1.0+"):
        assert top_pair(_driver(kernel)) == ("driver", "driver_container_script_error"), kernel


def test_a_distribution_s_kernel_stays_headers_missing() -> None:
    for kernel in ("5.15.0-1075-aws", "6.8.0-1017-gcp", "5.14.0-427.13.1.el9_4.x86_64"):
        assert top_pair(_driver(kernel)) == ("driver", "kernel_headers_missing"), kernel
