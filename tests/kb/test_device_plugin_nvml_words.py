"""The device plugin's own words about its GPUs: a withdrawn device, and an NVML query it failed.

The plugin's ListAndWatch loop logs each device it withdraws ("'<resource>' device marked
unhealthy: <id>", NVIDIA/k8s-device-plugin server.go); quoted without its head and followed by
the NVML return its health check got ("marked unhealthy: ERROR_NO_PERMISSION" after a kubelet
restart, boettiger-lab/k8s docs/infrastructure/nvidia.md) it is the same withdrawal
(gpus_unhealthy). A query answered by NVML's error text ("error getting device memory: Not
Supported", the plugin before v0.17.4 on a unified-memory GB10, NVIDIA/gpu-operator#1794) is the
device's or its library's refusal (class error_device); the later plugin's warning that it
ignores that error is no failure."""

from __future__ import annotations

import pytest

from gpunode.catalog import load_catalog
from gpunode.explain import explain_lines
from gpunode.kb import load_kb


def _causes(line: str) -> list[str]:
    return [m.cause.code for m in explain_lines([line], load_kb()).matches]


@pytest.mark.parametrize("line", [
    "marked unhealthy: ERROR_NO_PERMISSION",
    "I0112 08:00:00.000000       1 server.go:260] 'nvidia.com/gpu' device marked unhealthy: "
    "ERROR_OPERATING_SYSTEM",
    "'nvidia.com/gpu' device marked unhealthy: GPU-1d6a9c4e-0f3b-4a51-9a2e-6b1f6a0c2d11",
])
def test_a_withdrawn_device_is_gpus_unhealthy(line: str) -> None:
    assert "gpus_unhealthy" in _causes(line)


@pytest.mark.parametrize("line", [
    "'nvidia.com/gpu' device marked healthy: GPU-1d6a9c4e-0f3b-4a51-9a2e-6b1f6a0c2d11",
    "node gpu-wk-01 marked unhealthy: NotReady",
    "devices marked unhealthy: 0",
])
def test_a_healthy_or_foreign_mark_is_not_gpus_unhealthy(line: str) -> None:
    assert "gpus_unhealthy" not in _causes(line)


@pytest.mark.parametrize("line", [
    "error getting device memory: Not Supported",
    "E0112 08:00:00.000000       1 main.go:132] error getting device memory info: Driver Not Loaded",
    "error querying GPU power usage: GPU is lost",
])
def test_a_query_answered_by_nvml_error_text_is_error_device(line: str) -> None:
    found = explain_lines(["starting", line], load_kb())
    assert found.decisive is not None and found.decisive.text == line
    assert found.decisive_class == "error_device"


@pytest.mark.parametrize("line", [
    "W0920 14:27:50.000000       1 devices.go:77] Ignoring error getting device memory: Not Supported",
    "error getting device memory: Not Supported by this exporter's config schema v2",
])
def test_an_ignored_query_or_other_words_are_not_error_device(line: str) -> None:
    assert explain_lines(["starting", line], load_kb()).decisive_class != "error_device"


@pytest.mark.parametrize("line", [
    "identifier is not a valid UUID or index",
    'failed to get device handle: identifier is not a valid UUID or index: "0000:01:00.0"',
    'expected cgroupsPath to be of format "slice:prefix:name" for systemd cgroups, '
    'got "/kubepods/besteffort/pod1/abc" instead',
])
def test_a_value_refused_for_its_form_is_error_config_invalid(line: str) -> None:
    found = explain_lines(["starting", line], load_kb())
    assert found.decisive is not None and found.decisive.text == line
    assert found.decisive_class == "error_config_invalid"


@pytest.mark.parametrize("line", [
    "I0112 08:00:00.000000       1 main.go:40] device identifier GPU-1d6a9c4e-0f3b is a valid UUID",
    "cgroupsPath is expected in systemd format slice:prefix:name when SystemdCgroup = true",
])
def test_a_healthy_line_about_the_same_forms_is_quiet(line: str) -> None:
    assert explain_lines(["starting", line], load_kb()).decisive_class is None


def test_the_refused_identifier_names_the_device_plugin() -> None:
    line = 'identifier is not a valid UUID or index: "/var/run/nvidia-container-devices"'
    assert load_catalog().named_in(line) == "device-plugin"
    assert load_catalog().named_in("device GPU-1d6a9c4e is a valid UUID") is None
