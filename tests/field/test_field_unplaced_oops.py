"""A kernel BUG whose faulting instruction the kernel log does not show, on a node whose driver
container keeps restarting, is the decisive line of the driver's restarts, degraded
(checks.driver_oops): damoke012/dareoke's GPU troubleshooting guide, an OpenShift worker with a
Tesla P40 rebooting on "kernel BUG at lib/list_debug.c:23!" under the 550 driver. Look-alikes:
the same BUG with a driver that never restarted, and one whose report places the fault in
another module, say nothing of the driver."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

BUG = "kernel BUG at lib/list_debug.c:23!\nDisabling lock debugging due to kernel taint\n"
#: The same BUG whose report names the faulting instruction in a file system's code.
PLACED = BUG + "RIP: 0010:__list_add_valid+0x38/0x40 [xfs]\n"


def _case(dmesg: str, restarts: int | None) -> Case:
    evidence: list[dict[str, Any]] = [{"kind": "node-cmd", "name": "dmesg.txt", "text": dmesg}]
    if restarts is not None:
        evidence.append({"kind": "pod-state", "component": "driver", "container": "nvidia-driver-ctr",
                         "state": "Running", "restarts": restarts})
    return synthetic_case("x-unplaced-oops", evidence, platform="openshift", healthy=False)


def test_a_restarting_driver_beside_an_unplaced_kernel_bug_quotes_it() -> None:
    assert top_pair(_case(BUG, 18)) == ("driver", "error_unclassified")


def test_the_bug_without_driver_restarts_or_placed_elsewhere_is_not_the_drivers() -> None:
    pair = top_pair(_case(BUG, None))
    assert pair is None or pair[0] != "driver"
    assert top_pair(_case(PLACED, 18)) == ("driver", "restarting")
