"""A Tegra (Jetson) node has no NVML: the device plugin's NVML-only build cannot serve it, and
its boilerplate hint to set Docker's default runtime names no layer below there. The node's own
record says Tegra: an L4T kernel release (-tegra) or a GPU product named Jetson."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import top_pair

#: https://github.com/NVIDIA/k8s-device-plugin/issues/132 (a Jetson Nano under k3s, as pasted);
#: https://github.com/NVIDIA/k8s-device-plugin/issues/297 is the same form on other Jetson boards
#: (the maintainer: the plugin discovers devices with NVML only, which Jetson does not have).
NANO = ("2019/09/04 20:04:18 Loading NVML\n"
        "2019/09/04 20:04:18 Failed to initialize NVML: could not load NVML library.\n"
        "2019/09/04 20:04:18 If this is a GPU node, did you set the docker default runtime to `nvidia`?\n"
        "2019/09/04 20:04:18 You can check the prerequisites at: "
        "https://github.com/NVIDIA/k8s-device-plugin#prerequisites\n")
#: https://github.com/NVIDIA/k8s-device-plugin/issues/444 (an RTX 3080 Ti on Ubuntu 22.04) and
#: https://github.com/NVIDIA/k8s-device-plugin/issues/303 (x86 nodes): the same lines off Tegra.
DISCRETE = NANO.replace("2019/09/04 20:04:18", "2023/10/19 03:11:54")


def _case(log: str, *, gpu: str, kernel: str | None = None) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "log", "component": "device-plugin", "container": "nvidia-device-plugin-ctr", "text": log}]
    if kernel is not None:
        evidence.append({"kind": "node-info", "fields": {"kernelVersion": kernel, "architecture": "arm64"}})
    raw = {"id": "x-tegra", "source": "https://example.org/x", "title": "t", "platform": "docker",
           "cluster": {"driver_mode": "host", "components": [], "device_plugin": "static",
                       "gpu_node": {"gpus": 1, "gpu": gpu}},
           "evidence": evidence, "expect": {"healthy": False}}
    return msgspec.convert(raw, Case)


def test_an_nvml_only_plugin_on_a_jetson_is_a_platform_it_does_not_support() -> None:
    assert top_pair(_case(NANO, gpu="Jetson Nano")) == ("device-plugin", "device_plugin_platform_unsupported")


def test_an_l4t_kernel_says_tegra_too() -> None:
    found = top_pair(_case(NANO, gpu="Tesla T4", kernel="4.9.140-tegra"))
    assert found == ("device-plugin", "device_plugin_platform_unsupported")


def test_the_same_lines_on_a_discrete_gpu_stay_the_runtime_s() -> None:
    found = top_pair(_case(DISCRETE, gpu="Tesla T4"))
    assert found is not None and found[1] != "device_plugin_platform_unsupported"


def test_a_platform_aware_build_on_a_jetson_is_left_to_its_own_words() -> None:
    # k8s-device-plugin v0.13.0 on detects the platform first: its NVML failure is another matter.
    log = "I0814 09:35:39.851780       1 factory.go:104] Detected Tegra platform\n" + NANO
    found = top_pair(_case(log, gpu="Jetson Orin"))
    assert found is None or found[1] != "device_plugin_platform_unsupported"
