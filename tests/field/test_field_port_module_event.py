"""The mlx5 driver's port module event with the module in its error state, in the node's kernel
log: "Port module event[error]: module <n>, <status>, <error type>" (drivers/net/ethernet/
mellanox/mlx5/core/events.c, port_module). The NIC's firmware took the transceiver or cable of
that cage out of service (an overheating AOC, a module over the cage's power budget, a shorted
cable), so its port has no link: the RDMA links' ``rdma_port_down``, standing on its own
(tsw2k/GLM5.3-Flash-Quad-DGX-Sparks README, an AOC cooking in a GB10 node's cage). Look-alikes:
the driver's informational module events (plugged, unplugged) and a link that went down without
a module error name nothing."""

from __future__ import annotations

from typing import Any

import pytest
from case import synthetic_case
from scoreboard import top_pair

_CLUSTER = {"driver_mode": "host"}

FAULTS = [
    "mlx5_core 0000:5c:00.0: Port module event[error]: module 0, Cable error, High Temperature",
    "[ 812.330201] mlx5_core 0000:ca:00.1: mlx5_port_module_event:1131:(pid 0): Port module event[error]: "
    "module 1, Cable error, Power Budget Exceeded",
    "mlx5_core: Port module event[error]: module 0, Cable error, Bad or shorted cable/module",
]

QUIET = [
    "[    8.951695] mlx5_core 0000:63:00.1: Port module event: module 1, Cable plugged",
    "mlx5_core 0000:63:00.1: Port module event: module 1, Cable unplugged",
    "mlx5_core 0000:63:00.1 enp99s0f1np1: Link down",
]


def _dmesg(text: str) -> list[dict[str, Any]]:
    return [{"kind": "node-cmd", "name": "dmesg.txt", "text": text + "\n"}]


@pytest.mark.parametrize("line", FAULTS)
def test_a_module_in_its_error_state_takes_the_port_down(line: str) -> None:
    case = synthetic_case("port-module-error", _dmesg(line), healthy=False, cluster=_CLUSTER)
    assert top_pair(case) == ("rdma-links", "rdma_port_down")


@pytest.mark.parametrize("line", QUIET)
def test_module_notices_and_a_bare_link_down_name_nothing(line: str) -> None:
    case = synthetic_case("port-module-notice", _dmesg(line), cluster=_CLUSTER)
    assert top_pair(case) is None
