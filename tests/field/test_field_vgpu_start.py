"""Xid 78 (a vGPU that did not start) in a guest's kernel log is the guest driver's: its
message names the driver's branch against the host's. The kernel's own line and a ticket's
quote of it are read; prose naming the code and other Xids are not."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from case import Case
from scoreboard import top_pair


def _case(dmesg: str) -> Case:
    raw: dict[str, Any] = {
        "id": "x-vgpu-start", "source": "https://example.org/x", "title": "t", "platform": "generic",
        "cluster": {"driver_mode": "host",
                    "gpu_node": {"gpu": "NVIDIA A10-24Q", "gpus": 1, "driver_version": "535.161.08"}},
        "evidence": [{"kind": "node-cmd", "name": "dmesg.txt", "text": dmesg}], "expect": {"healthy": False}}
    return msgspec.convert(raw, Case)


@pytest.mark.parametrize("line", [
    # skypilot-org/skypilot#10468, quoted without the kernel's head
    "Xid 78: Guest driver is incompatible with host driver",
    # the kernel's own form of the same report
    "[   12.345678] NVRM: Xid (PCI:0002:00:00): 78, pid=1203, name=nvidia-smi, "
    "Guest driver is incompatible with host driver",
])
def test_xid_78_s_branch_mismatch_is_the_guest_driver_s_version_mismatch(line: str) -> None:
    assert top_pair(_case(line + "\n")) == ("driver", "error_version_mismatch")


def test_xid_78_for_an_unsupported_vgpu_type_is_the_guest_driver_s() -> None:
    found = top_pair(_case("NVRM: Xid (PCI:0002:00:00): 78, pid=1203, name=nvidia-smi, "
                           "vGPU type is not supported\n"))
    assert found is not None and found[0] == "driver"


@pytest.mark.parametrize("text", [
    # look-alikes: prose that names the code, and an application Xid of another number
    "monitor: Xid 78 would mean a vGPU start error; none seen\n",
    "NVRM: Xid (PCI:0002:00:00): 13, pid=1203, name=python, Graphics Exception on GPC 0\n",
])
def test_prose_and_other_xids_do_not_name_the_guest_driver(text: str) -> None:
    found = top_pair(_case(text))
    assert found is None or found != ("driver", "error_version_mismatch")
