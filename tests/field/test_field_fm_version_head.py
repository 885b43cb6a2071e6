"""Fabric Manager's refusal of a driver it was not built for is read by its head: the words
'fabric manager NVIDIA GPU driver interface version <its version>' appear in no other line of
Fabric Manager (every public line of them is the refusal), while the words after vary (don't,
doesn't, don’t) and a pasted journal may cut them.
A unit journal that ends with a line a catalogued cause knows ends with that cause, whether
or not the line's error words survived."""

from __future__ import annotations

import msgspec
import pytest
from case import Case
from scoreboard import top_pair

FM = ("fabric-manager", "fabric_manager_version_mismatch")
START = "Feb 24 09:28:18 node systemd[1]: Starting NVIDIA fabric manager service...\n"


def _case(journal: str) -> Case:
    raw = {"id": "x-fm-head", "source": "https://example.org/x", "title": "t", "platform": "generic",
           "evidence": [{"kind": "node-cmd", "name": "journal-fabricmanager.txt", "text": START + journal}],
           "expect": {"healthy": False}}
    return msgspec.convert(raw, Case)


@pytest.mark.parametrize("line", [
    # NVIDIA/gpu-operator#544
    "nv-fabricmanager[3228]: fabric manager NVIDIA GPU driver interface version 530.30.02 don't match with "
    "driver version 530.41.03. Please update with matching NVIDIA driver package.",
    # akash-network/website#632
    "nv-fabricmanager[104230]: fabric manager NVIDIA GPU driver interface version 550.127.05 doesn't match "
    "with driver version 550.120. Please update with the matching NVIDIA driver package.",
    # NVIDIA/nvtrust#55
    "nv-fabricmanager[2201]: fabric manager NVIDIA GPU driver interface version 550.90.07 don’t match with "
    "driver version 550.107.02. Please update with matching NVIDIA driver package",
    # dstackai/dstack#2348, the journal line as the report's copy keeps it (cut after "don'")
    "nv-fabricmanager[1507]: fabric manager NVIDIA GPU driver interface version 535.183.01 don'",
])
def test_the_refusal_is_read_by_its_head(line: str) -> None:
    assert top_pair(_case(f"Feb 24 09:28:28 node {line}\n")) == FM


def test_a_fabric_manager_that_starts_stays_healthy() -> None:
    journal = ("Feb 24 09:28:30 node nv-fabricmanager[1507]: Connected to 1 node.\n"
               "Feb 24 09:28:31 node systemd[1]: Started NVIDIA fabric manager service.\n")
    assert top_pair(_case(journal)) is None


def test_an_unknown_last_line_without_error_words_is_not_read() -> None:
    journal = "Feb 24 09:28:28 node nv-fabricmanager[1507]: fabric manager probing the NVSwitch devi\n"
    assert top_pair(_case(journal)) != FM
