"""An RDMA device plugin that discovered its devices before OFED loaded its modules.

Mellanox/network-operator#31: after a reboot the RDMA shared device plugin started before the
MOFED driver container had loaded its modules, logged "non-Rdma Device <interface>" and stayed
Ready with an unusable resource (fixed by failing or re-checking, Mellanox/k8s-rdma-shared-
dev-plugin#23 and PR #24). Read while the node's OFED pod restarted or is not ready; the same
warning with OFED running undisturbed (a selector naming a netdev without RDMA, a resource
skipped by design, k8s-rdma-shared-dev-plugin#44) is not read.
"""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

NON_RDMA = "Warning: non-Rdma Device ens2f0"
MISSING = ('2023/09/02 06:23:37 error creating new device: "missing RDMA device spec for device '
           '0000:ec:00.0, RDMA device \\"issm\\" not found"')


def _node(line: str, restarts: int) -> list[dict[str, Any]]:
    return [{"kind": "log", "component": "rdma-device-plugin", "text": line + "\n"},
            {"kind": "pod-state", "component": "ofed", "state": "Running", "restarts": restarts}]


def test_a_plugin_finding_no_rdma_side_while_ofed_restarted_waits_on_ofed() -> None:
    for line in (NON_RDMA, MISSING):
        case = synthetic_case("x-rdma-before-ofed", _node(line, 1), platform="ubuntu", healthy=False)
        assert top_pair(case) == ("rdma-device-plugin", "error_not_found")


def test_the_same_warning_with_ofed_undisturbed_is_not_read() -> None:
    case = synthetic_case("x-rdma-ofed-steady", _node(NON_RDMA, 0), platform="ubuntu")
    assert top_pair(case) is None
