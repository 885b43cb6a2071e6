# ruff: noqa: E501  (real log lines are long)
"""Every Xid NVIDIA's catalog lists is read with its documented meaning, and the driver's
newer suffixes on an Xid line are read with it.

The catalog (https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html; its
spreadsheet, rupalis-nv/NVSentinel health-monitors/syslog-health-monitor/pkg/common/Xid-Catalog.xlsx)
gives each code an immediate action: RESTART_APP and IGNORE leave the GPU in service, RESET_GPU
and the like take it out. A code it lists is named by its mnemonic rather than reported as one
gpunode does not know; only codes whose action takes the GPU out make a node unhealthy.
"""

from __future__ import annotations

import pytest
from case import synthetic_case
from scoreboard import top_pair

from gpunode.explain import explain_lines
from gpunode.xid import classify, load_xid_catalog

#: ggml-org/llama.cpp#27102 (driver 610.57.04): the RC watchdog reset a channel that made no
#: progress for 7 s; the R610 driver prints the channel as "channel 0x...".
XID_8 = "aug 16 23:01:35 kernel: NVRM: Xid (PCI:0000:01:00): 8, pid=709378, name=llama-server, channel 0x00000027"
#: trexminer/T-Rex#20: a code the catalog lists unused on data-center GPUs, on a GeForce card.
XID_56 = "Dec  9 12:34:44 rige0d55e8357e3 kernel: [ 7561.089746] NVRM: Xid (PCI:0000:01:00): 56, pid=2628, CMDre 0000000b 00000ffc ffffffff 00000007 00ffffff"
#: NVIDIA/open-gpu-kernel-modules#1150 (driver 590.48.01, GB200): the preemptive cleanup names
#: the Xid that caused it, "caused by previous Xid N".
XID_45_CAUSED = "kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous Xid 149"
#: NVIDIA/open-gpu-kernel-modules#1045: Xid 154's recovery action, in its own words.
XID_154 = "kwi 03 09:01:25 testowy kernel: NVRM: Xid (PCI:0000:07:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)"


def _dmesg(*lines: str) -> list[dict[str, str]]:
    return [{"kind": "node-cmd", "name": "dmesg.txt", "text": "\n".join(lines) + "\n"}]


def test_every_catalogued_code_is_known() -> None:
    entries = load_xid_catalog().entries
    assert set(range(1, 173)) <= set(entries)


def test_a_channel_the_watchdog_reset_is_the_workloads_restart_not_a_gpu_fault() -> None:
    info = classify(8, "channel 0x00000027")
    assert (info.known, info.mnemonic, info.action, info.is_root_cause) == (True, "FIFO_ERROR_IDLE_TIMEOUT", "restart_workload", False)
    assert top_pair(synthetic_case("x-xid-8", _dmesg(XID_8))) is None


def test_the_same_channel_reset_beside_a_gpu_timeout_is_the_gpus() -> None:
    timeout = XID_8.replace("): 8, pid=709378, name=llama-server, channel 0x00000027", "): 46, pid='<unknown>', name=<unknown>, GPU stopped processing")
    case = synthetic_case("x-xid-8-46", _dmesg(XID_8, timeout), healthy=False)
    assert top_pair(case) == ("gpu-hardware", "xid_hardware_error")


def test_a_code_unused_on_data_center_gpus_is_named_and_stays_quiet() -> None:
    info = classify(56)
    assert info.known and info.mnemonic == "DISPLAY_CHANNEL_EXCEPTION" and not info.is_root_cause
    assert top_pair(synthetic_case("x-xid-56", _dmesg(XID_56))) is None


def test_a_cleanup_caused_by_a_previous_xid_is_read_as_the_cleanup() -> None:
    """The suffix names Xid 149; the line is Xid 45's (the catalog: follow the other Xid's own
    line), so the cleanup alone stays quiet and no Xid 149 is read from its words."""
    assert top_pair(synthetic_case("x-xid-45-caused", _dmesg(XID_45_CAUSED))) is None
    explained = explain_lines([XID_45_CAUSED])
    assert [s.info.code for s in explained.xids] == [45]


@pytest.mark.parametrize(("code", "cause"), [(158, "xid_hardware_error"), (167, "xid_hardware_error"),
                                             (169, "xid_hardware_error"), (171, "uncorrectable_ecc"),
                                             (172, "uncorrectable_ecc")])
def test_the_newest_fatal_codes_take_the_gpu_out(code: int, cause: str) -> None:
    """No public report of these yet; the line is the catalog's shape for the code."""
    line = f"[ 4411.273512] NVRM: Xid (PCI:0000:5d:00): {code}, pid='<unknown>', name=<unknown>, {classify(code).mnemonic}"
    case = synthetic_case(f"x-xid-{code}", _dmesg(line), healthy=False)
    assert top_pair(case) == ("gpu-hardware", cause)
    assert explain_lines([line]).matches[0].cause.code == cause


@pytest.mark.parametrize("code", [93, 159, 160, 161, 162, 163, 164, 165, 166, 168, 170])
def test_informational_codes_stay_quiet(code: int) -> None:
    info = classify(code)
    assert info.known and not info.is_root_cause
    line = f"[ 4411.273512] NVRM: Xid (PCI:0000:5d:00): {code}, pid='<unknown>', name=<unknown>, {info.mnemonic}"
    assert top_pair(synthetic_case(f"x-xid-{code}", _dmesg(line))) is None


@pytest.mark.parametrize(("value", "action"), [("0x1 (GPU Reset Required)", "reset_gpu"), ("0x5 (Recover IMEX Domain)", "reset_gpu"),
                                               ("0x6 (Bus Reset Required)", "reset_gpu"), ("0x7 (System Reboot Required)", "reboot_node"),
                                               ("0x0 (None)", "none")])
def test_xid_154_reads_every_nvml_recovery_action(value: str, action: str) -> None:
    line = XID_154.replace("0x1 (GPU Reset Required)", value)
    message = line.split("): 154, ", 1)[1]
    assert classify(154, message).action == action


def test_a_process_name_holding_to_0x_is_not_a_recovery_action() -> None:
    """Only the word "to" before the value names the action, not "proto 0x1" in a name."""
    assert classify(154, "pid=1, name=proto 0x2, GPU recovery action changed from 0x1 (GPU Reset Required) to 0x0 (None)").action == "none"
