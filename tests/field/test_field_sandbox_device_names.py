"""A sandbox device plugin (kubevirt-gpu-device-plugin) that names its GPUs after a device that
is no GPU: the plugin names each passthrough device after the pci.ids line of its device id,
and a build that matched the id alone took another vendor's device of the same id (an H100 SXM,
device 2330, advertised as 802_11BG_WIRELESS_CARDBUS_ADAPTER: NVIDIA/kubevirt-gpu-device-plugin#106).
VMs asking for the GPU's proper name are never scheduled there. A resource under a prefix of the
operator's own before the device name ("nvidia.com/gpu-vm-<DEVICE>") is still the plugin's. GPU
names (a chip, a brand word) stay healthy, also where another word of the name is shared."""

from __future__ import annotations

from typing import Any

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.checks.sandbox import _not_a_gpu


def _node(resource: str) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "pod-state", "component": "sandbox-device-plugin", "state": "Running"},
        {"kind": "node-capacity", "resources": {resource: "2"}}]
    return synthetic_case("x-sandbox-name", evidence, healthy=False,
                          cluster={"gpu_node": {"gpu": "NVIDIA H100 80GB HBM3", "gpus": 2}})


@pytest.mark.parametrize("resource", [
    "nvidia.com/gpu-vm-802_11BG_WIRELESS_CARDBUS_ADAPTER",  # kubevirt-gpu-device-plugin#106
    "nvidia.com/802_11BG_WIRELESS_CARDBUS_ADAPTER",
    "nvidia.com/ETHERNET_CONTROLLER",
])
def test_a_device_name_that_is_no_gpu_is_an_invalid_name(resource: str) -> None:
    assert _not_a_gpu(resource)
    assert top_pair(_node(resource)) == ("sandbox-device-plugin", "error_config_invalid")


@pytest.mark.parametrize("resource", [
    "nvidia.com/GH100_H100_SXM5_80GB",
    "nvidia.com/TU104GL_TESLA_T4",
    "nvidia.com/GP107_GEFORCE_GTX_1050_TI",
    "nvidia.com/GRID_T4_16Q",
    # a GPU's own name that also holds another kind's word: the GPU word settles it
    "nvidia.com/AD102_HIGH_DEFINITION_AUDIO_CONTROLLER",
])
def test_gpu_names_stay_healthy(resource: str) -> None:
    assert not _not_a_gpu(resource)
    top = top_pair(_node(resource))
    assert top is None or top[1] != "error_config_invalid", top
