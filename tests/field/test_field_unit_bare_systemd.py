"""A unit's failed run read in its own journal where the pasted lines lost systemd's prefix:
systemd names the unit first in its lines about it ("nvidia-fabricmanager.service: Control
process exited, code=exited, status=1", spectrocloud/CanvOS b764b30: Fabric Manager's start
wrapper missing ibstat), so the line ends the run as 'systemd[1]: ...' would, and the unit's own
line before it is the reason. Another unit's name, or a clean exit, ends nothing."""

from __future__ import annotations

import msgspec
import pytest
from case import Case
from scoreboard import top_pair

WRAPPER = '"ibstat" command not found! Please install "ibstat".\n'


def _case(journal: str) -> Case:
    raw = {"id": "x-fm-bare", "source": "https://example.org/x", "title": "t", "platform": "generic",
           "cluster": {"driver_mode": "host", "gpu_node": {"gpus": 8, "gpu": "NVIDIA B200"}},
           "evidence": [{"kind": "node-cmd", "name": "journal-fabricmanager.txt", "text": journal}],
           "expect": {"healthy": False}}
    return msgspec.convert(raw, Case)


@pytest.mark.parametrize("end", [
    "nvidia-fabricmanager.service: Control process exited, code=exited, status=1",
    "nvidia-fabricmanager.service: Failed with result 'exit-code'.",
])
def test_the_unit_s_own_bare_end_fails_it(end: str) -> None:
    top = top_pair(_case(WRAPPER + end + "\n"))
    assert top is not None and top[0] == "fabric-manager", top


@pytest.mark.parametrize("end", [
    "nvidia-fabricmanager.service: Deactivated successfully.",
    "nvidia-fabricmanager.service: Main process exited, code=exited, status=0/SUCCESS",
    "nvidia-persistenced.service: Control process exited, code=exited, status=1",
])
def test_a_clean_end_or_another_unit_s_is_no_failed_run(end: str) -> None:
    journal = "nv-fabricmanager[1507]: Connected to 1 node.\n" + end + "\n"
    top = top_pair(_case(journal))
    assert top is None or top[0] != "fabric-manager", top
