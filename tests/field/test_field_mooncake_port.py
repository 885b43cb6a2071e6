"""Mooncake's transfer engine finding an RDMA device whose port is not ACTIVE
(data/job_errors/interconnect.toml ``mooncake-port-not-active``): the node's RDMA link.

Sources: Mooncake's rdma_context.cpp (openRdmaDevice: ibv_query_port, then "Device <name> port
not active" for any state but IBV_PORT_ACTIVE); Mooncake's troubleshooting guide (the RDMA
device's "connection status is not active"). Look-alikes: the engine's line for a device it
opened (ai-dynamo/nixl#330) and its summary "No available RNIC" after a GID failure
(kvcache-ai/Mooncake#1384), which say nothing of a port's state."""

from __future__ import annotations

from case import gpu_job_case
from scoreboard import top_pair

from gpunode.job_errors import job_error

DOWN = "W0115 05:20:19.944772   309 rdma_context.cpp:433] Device mlx5_8 port not active"
#: ai-dynamo/nixl#330: a device opened.
OPENED = ("I20250519 11:37:43.171371  1480 rdma_context.cpp:125] RDMA device: mlx5_bond_7, LID: 0, "
          "GID: (GID_Index 3) 00:00:00:00:00:00:00:00:00:00:ff:ff:1d:70:89:3d")
#: kvcache-ai/Mooncake#1384: a GID index failure, then the summary.
GID_FAILED = ("E0115 05:20:19.945159   309 rdma_context.cpp:81] Failed to open device mlx5_8 on port  "
              "with GID 0\n"
              "W0115 05:20:19.945183   309 rdma_transport.cpp:656] Disable device mlx5_8\n"
              "E0115 05:20:19.945191   309 rdma_transport.cpp:662] RdmaTransport: No available RNIC")


def test_a_port_not_active_is_the_rdma_link_s() -> None:
    found = job_error(DOWN)
    assert found is not None and (found.component, found.cause) == ("rdma-links", "rdma_port_down")
    assert top_pair(gpu_job_case("x-mooncake-port", DOWN + "\n" + GID_FAILED.split("\n", 1)[1])) == (
        "rdma-links", "rdma_port_down")


def test_an_opened_device_and_a_gid_failure_are_no_port_down() -> None:
    assert job_error(OPENED) is None
    assert top_pair(gpu_job_case("x-mooncake-opened", OPENED)) is None
    assert all((f := job_error(line)) is None or f.cause != "rdma_port_down"
               for line in GID_FAILED.splitlines())
