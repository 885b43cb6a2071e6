"""NVML's Unknown Error read after NVML's name, whatever the program put before it.

NVML_ERROR_UNKNOWN's string is "Unknown Error"; nvidia-smi in a container whose device cgroup
lost /dev/nvidia* prints "Failed to initialize NVML: Unknown Error" (NVIDIA/nvidia-docker#1730,
NVIDIA/nvidia-container-toolkit#1227), and the device plugin's CDI page
(https://github.com/NVIDIA/k8s-device-plugin/blob/main/docs/cdi.md) quotes the same loss after a
container update as a workload's "NVML: Unknown error". Both are the container toolkit's
injection lost under a running container. Another NVML error (a version mismatch) keeps its
own layer, and NVML's healthy words stay healthy.
"""

from __future__ import annotations

from case import synthetic_case
from scoreboard import top_pair

from gpunode.catalog import load_catalog


def _workload(text: str, healthy: bool = False) -> object:
    ev = [{"kind": "log", "object": {"kind": "Pod", "name": "cuda-workload", "namespace": "default"},
           "text": text + "\n"}]
    return top_pair(synthetic_case("x-nvml-words", ev, platform="ubuntu", healthy=healthy))


def test_nvml_unknown_error_in_a_workload_is_lost_device_access() -> None:
    assert _workload("NVML: Unknown error") == ("container-toolkit", "nvml_device_access_lost")
    assert _workload("Failed to initialize NVML: Unknown Error") == ("container-toolkit",
                                                                     "nvml_device_access_lost")


def test_another_nvml_error_is_not_the_toolkits() -> None:
    assert load_catalog().named_in("Failed to initialize NVML: Driver/library version mismatch") \
        != "container-toolkit"


def test_nvml_healthy_words_stay_healthy() -> None:
    assert _workload("NVML initialized successfully; Unknown errors: 0", healthy=True) is None


def test_go_nvml_words_wrapped_in_a_plugins_error_stay_the_plugins() -> None:
    line = ("error creating nvml.Device 0: nvml: Unknown Error, which is unexpected")
    assert load_catalog().named_in(line) != "container-toolkit"
