"""An NVML function the loader cannot resolve, read against the node's driver
(checks/nvml_symbol.py): on a driver older than any current NVML consumer resolves, the
driver is what to change; on a current driver the program was built against a newer NVML and
the failure stays its own. Each line from a public report (its address beside it)."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import diagnose_case, top_root_cause


def _plugin_case(line: str, driver: str | None) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "pod-state", "component": "device-plugin", "container": "nvidia-device-plugin-ctr",
         "state": "CrashLoopBackOff", "restarts": 5, "exit_code": 127},
        {"kind": "log", "component": "device-plugin", "container": "nvidia-device-plugin-ctr",
         "previous": True, "text": line + "\n"}]
    if driver is not None:
        header = f"| NVIDIA-SMI {driver}    Driver Version: {driver}        |\n"
        evidence.append({"kind": "node-cmd", "name": "nvidia-smi.txt", "text": header})
    raw = {"id": "x-nvml-symbol", "source": "https://example.org/x", "title": "t", "platform": "ubuntu",
           "cluster": {"driver_mode": "host", "components": [], "device_plugin": "static"},
           "evidence": evidence, "expect": {"healthy": True}}
    return msgspec.convert(raw, Case)


def _top(case: Case) -> tuple[str, str] | None:
    top = top_root_cause(diagnose_case(case), case.node)
    return (top.component, top.cause) if top else None


#: NVIDIA/k8s-device-plugin#108: the plugin on driver 375 (384.81 works).
PLUGIN_108 = ("nvidia-device-plugin: symbol lookup error: nvidia-device-plugin: "
              "undefined symbol: nvmlDeviceGetPciInfo_v3")
#: Syllo/nvtop#32: nvtop on driver 340 (384 works); the same loader line from another consumer.
NVTOP_32 = "nvtop: symbol lookup error: nvtop: undefined symbol: nvmlDeviceGetPcieThroughput"


def test_an_unresolved_nvml_symbol_on_a_legacy_driver_is_the_driver_s() -> None:
    assert _top(_plugin_case(PLUGIN_108, "375.66")) == ("driver", "error_version_mismatch")
    assert _top(_plugin_case(NVTOP_32, "340.108")) == ("driver", "error_version_mismatch")


def test_the_same_line_on_a_current_driver_or_an_unknown_one_stays_the_program_s() -> None:
    # NVIDIA/dra-driver-nvidia-gpu#1014: nvmlDeviceGetAddressingMode missing on driver 570, a
    # program built against a newer NVML than the node's; and the line with no driver collected
    newer = ("gpu-kubelet-plugin: symbol lookup error: gpu-kubelet-plugin: "
             "undefined symbol: nvmlDeviceGetAddressingMode")
    assert _top(_plugin_case(newer, "570.133.20")) == ("device-plugin", "error_version_mismatch")
    assert _top(_plugin_case(PLUGIN_108, None)) == ("device-plugin", "error_version_mismatch")
