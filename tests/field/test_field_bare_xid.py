# ruff: noqa: E501  (real log lines are long)
"""The driver's Xid report quoted without its head is still the driver's Xid report.

A kernel line pasted into a ticket or a monitor's message often loses "NVRM: Xid (PCI:...): "
and keeps "Xid N, " and the driver's message (marin-community/marin#8934: "Xid 149,
NETIR_LINK_DOWN Fatal XC0 i0 Link 14"). Where the message has the driver's own shape (its
process fields, or the NVLink5 unit report of Xids 144-150: unit word, severity word, link) the
line reads as the whole report would; prose that names a code does not.
"""

from __future__ import annotations

import re

import pytest
from case import synthetic_case
from scoreboard import top_pair

#: Whole driver lines from public reports; each is also tried with its head cut off.
DRIVER_LINES = {
    # leptonai/gpud#1174 (https://github.com/leptonai/gpud/pull/1174): GB200 NVLink5 NETIR, fatal
    "gpud-1174-149": "NVRM: Xid (PCI:0019:01:00): 149, NETIR Fatal XC0 i0 Link -1 (0x000fe406 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)",
    # leptonai/gpud#1160 (https://github.com/leptonai/gpud/pull/1160): NETIR link event, fatal
    "gpud-1160-149": "NVRM: Xid (PCI:0000:00:00): 149, NETIR_LINK_EVT Fatal XC0 i0 Link 00 (0x026001c6 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)",
    # leptonai/gpud#1174: the RLW unit's non-fatal report, a handled error on its own
    "gpud-1174-145": "NVRM: Xid (PCI:0018:01:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x0409a0c2 0x00000008 0x00000001 0x00000000 0x00100000 0x00000004)",
    # leptonai/gpud#1160: the SAW unit's non-fatal report
    "gpud-1160-144": "NVRM: Xid (PCI:0000:01:00): 144, SAW_MVB Nonfatal XC0 i0 Link 0 (0x00000001 0x00000008 0x00000000 0x00000000 0x00000000 0x00000000)",
    # leptonai/gpud#46 (https://github.com/leptonai/gpud/pull/46): an application Xid with its process fields
    "gpud-46-13": "[Fri Aug 30 11:43:09 2024] NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception on (GPC 7, TPC 7, SM 0): Illegal Instruction Parameter",
    # the catalog's own example of a GPU lost from the bus (data/causes/gpu_hardware.toml)
    "kb-79": "NVRM: Xid (PCI:0000:b5:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
}
_HEAD = re.compile(r"NVRM: Xid \(PCI:[0-9a-fA-F:.]+\): ")


def _dmesg(*lines: str) -> list[dict[str, str]]:
    return [{"kind": "node-cmd", "name": "dmesg.txt", "text": "\n".join(lines) + "\n"}]


def _pair(name: str, line: str) -> tuple[str, str] | None:
    return top_pair(synthetic_case(name, _dmesg(line), healthy=False))


def test_the_fragment_quoted_in_the_ticket_is_an_nvlink_hardware_xid() -> None:
    line = "Xid 149, NETIR_LINK_DOWN Fatal XC0 i0 Link 14"  # marin-community/marin#8934
    assert _pair("x-bare-xid-149", line) == ("gpu-hardware", "xid_hardware_error")


@pytest.mark.parametrize("name", sorted(DRIVER_LINES))
def test_a_report_without_its_head_reads_as_the_whole_report(name: str) -> None:
    whole = DRIVER_LINES[name]
    cut = _HEAD.sub("Xid ", whole)
    assert cut != whole and "NVRM" not in cut
    assert _pair(f"x-bare-{name}", cut) == _pair(f"x-whole-{name}", whole)


def test_the_fatal_nvlink_reports_take_the_gpu_out() -> None:
    for name in ("gpud-1174-149", "gpud-1160-149"):
        assert _pair(name, _HEAD.sub("Xid ", DRIVER_LINES[name])) == ("gpu-hardware", "xid_hardware_error")


@pytest.mark.parametrize("line", [
    "we saw Xid 79, then rebooted the node and it came back",
    "Xid 149, NETIR_LINK_DOWN is listed under WORKFLOW_NVLINK5_ERR in the catalog",
    "| 149 | NVLINK_NETIR_ERROR | B100,GB200 | WORKFLOW_NVLINK5_ERR |",
])
def test_prose_naming_a_code_stays_prose(line: str) -> None:
    assert top_pair(synthetic_case("x-bare-xid-prose", _dmesg(line))) is None
