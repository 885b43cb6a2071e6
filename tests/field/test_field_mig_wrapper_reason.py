"""The device plugin wraps every MIG layout it refuses in 'invalid MIG configuration'; the
reason after the wrapper decides the cause. A MIG-enabled GPU left without instances (the
layout never applied) is mig_enabled_no_instances, whichever wording of the plugin says so;
a layout the strategy cannot serve stays mig_strategy_mismatch. Lines in the klog form the
plugin writes (NVIDIA/k8s-device-plugin main.go)."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import top_pair

_HEAD = ("E0723 19:02:59.909633       1 main.go:182] error starting plugins: error getting plugins: "
         "unable to create plugins: failed to construct resource managers: error building device map: "
         "error building "
         "device map from config.resources: invalid MIG configuration: ")


def _plugin(reason: str) -> Case:
    raw: dict[str, Any] = {
        "id": "x-mig-wrapper", "source": "https://example.org/x", "title": "t", "platform": "generic",
        "expect": {"healthy": True},
        "evidence": [{"kind": "log", "component": "device-plugin", "container": "nvidia-device-plugin",
                      "previous": True, "text": _HEAD + reason + "\n"},
                     {"kind": "pod-state", "component": "device-plugin", "state": "CrashLoopBackOff"}]}
    return msgspec.convert(raw, Case)


def test_a_mig_enabled_gpu_without_instances_behind_the_wrapper_is_no_strategy_mismatch() -> None:
    for reason in ("at least one device with migEnabled=true was not configured correctly: error visiting "
                   "device: device 3 has no MIG devices configured",
                   "at least one device with migEnabled=true was not configured correctly: No MIG devices "
                   "associated with /dev/nvidia0: GPU-fe14a161-d1f3-7706-c257-3b22fe15c684"):
        assert top_pair(_plugin(reason)) == ("device-plugin", "mig_enabled_no_instances")


def test_a_layout_the_strategy_cannot_serve_behind_the_wrapper_stays_the_strategy_s() -> None:
    found = top_pair(_plugin("more than one MIG device type present on node"))
    assert found == ("device-plugin", "mig_strategy_mismatch")
