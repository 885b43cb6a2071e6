"""A toolkit config.toml that refuses NVIDIA_VISIBLE_DEVICES from unprivileged containers
(``accept-nvidia-visible-devices-envvar-when-unprivileged = false``) beside a device plugin
whose start-up config says it names GPUs only by that variable (deviceListStrategy envvar,
its default): unprivileged GPU pods get no GPU, and the plugin's strategy is the setting at
fault (NVIDIA/nvidia-container-toolkit#1089). The toolkit settings are those public reports
pasted: the operator's toolkit config of NVIDIA/gpu-operator#372 and the host's of
nvidia-container-toolkit#1089. The plugin on volume-mounts (the pairing the setting is for:
NVIDIA/k8s-device-plugin#440, NVIDIA/gpu-operator#700's DEVICE_LIST_STRATEGY=volume-mounts)
or on CDI, a toolkit that accepts the variable, and a plugin log without its config dump
stay healthy."""

from __future__ import annotations

from typing import Any

import pytest
from case import synthetic_case
from scoreboard import top_pair

from gpunode.checks.device_list import strategies

# NVIDIA/gpu-operator#372 (the operator's toolkit, /usr/local/nvidia/toolkit/.config/...)
_OPERATOR_TOOLKIT = ("usr/local/nvidia/toolkit/.config/nvidia-container-runtime/config.toml",
                     "disable-require = false\n"
                     "accept-nvidia-visible-devices-envvar-when-unprivileged = false\n"
                     "accept-nvidia-visible-devices-as-volume-mounts = true\n\n"
                     "[nvidia-container-cli]\n  load-kmods = true\n")
# NVIDIA/nvidia-container-toolkit#1089 (a host-installed toolkit on RKE2)
_HOST_TOOLKIT = ("etc/nvidia-container-runtime/config.toml",
                 "accept-nvidia-visible-devices-as-volume-mounts = true\n"
                 "accept-nvidia-visible-devices-envvar-when-unprivileged = false\n"
                 "disable-require = false\n\n[nvidia-container-runtime]\n  mode = \"auto\"\n")
_ACCEPTING = ("etc/nvidia-container-runtime/config.toml",
              "accept-nvidia-visible-devices-envvar-when-unprivileged = true\n"
              "accept-nvidia-visible-devices-as-volume-mounts = false\n")


def _plugin_log(strategy: str) -> str:
    """The plugin's start-up lines as v0.14+ prints them, with ``strategy`` as its JSON value."""
    return ("I0520 08:10:02.000000       1 main.go:317] Loading configuration.\n"
            "I0520 08:10:02.100000       1 main.go:353] \n"
            "Running with config:\n{\n  \"version\": \"v1\",\n  \"flags\": {\n"
            "    \"migStrategy\": \"none\",\n    \"plugin\": {\n      \"passDeviceSpecs\": false,\n"
            f"      \"deviceListStrategy\": {strategy},\n"
            "      \"deviceIDStrategy\": \"uuid\"\n    }\n  }\n}\n"
            "I0520 08:10:02.200000       1 main.go:356] Retrieving plugins.\n")


def _evidence(toolkit: tuple[str, str], log: str | None) -> list[dict[str, Any]]:
    evidence: list[dict[str, Any]] = [{"kind": "node-file", "path": toolkit[0], "text": toolkit[1]}]
    if log is not None:
        evidence.append({"kind": "log", "component": "device-plugin", "text": log})
    return evidence


@pytest.mark.parametrize("toolkit", [_OPERATOR_TOOLKIT, _HOST_TOOLKIT])
@pytest.mark.parametrize("strategy", ['[\n        "envvar"\n      ]', '"envvar"'])
def test_envvar_plugin_under_refusing_toolkit(toolkit: tuple[str, str], strategy: str) -> None:
    case = synthetic_case("x-envvar-refused", _evidence(toolkit, _plugin_log(strategy)), healthy=False)
    assert top_pair(case) == ("device-plugin", "error_config_invalid")


@pytest.mark.parametrize(("toolkit", "log"), [
    (_OPERATOR_TOOLKIT, _plugin_log('[\n        "volume-mounts"\n      ]')),   # the intended pairing
    (_HOST_TOOLKIT, _plugin_log('[\n        "cdi-annotations"\n      ]')),      # CDI names the devices
    (_ACCEPTING, _plugin_log('[\n        "envvar"\n      ]')),                  # the default toolkit
    (_HOST_TOOLKIT, "I0520 08:10:02.200000       1 main.go:356] Retrieving plugins.\n"),  # no dump: unknown
])
def test_look_alikes_stay_healthy(toolkit: tuple[str, str], log: str) -> None:
    case = synthetic_case("x-envvar-fine", _evidence(toolkit, log))
    assert top_pair(case) is None


def test_strategy_read_from_the_last_dump() -> None:
    lines = _plugin_log('["envvar", "volume-mounts"]').splitlines()
    read = strategies(lines)
    assert read is not None and read[1] == ("envvar", "volume-mounts")
    assert strategies(["I0520 08:10:02.200000       1 main.go:356] Retrieving plugins."]) is None
