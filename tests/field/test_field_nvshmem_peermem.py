"""NVSHMEM's IB transport unable to register its GPU heap is the missing peer-memory client
where the node's module list shows the GPU driver and no nvidia_peermem (nor nv_peer_mem);
with the client loaded, or no failure, nothing is said of it."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import top_pair

#: Azure/azhpc-images#316: NVSHMEM over IB RC on the AlmaLinux 8.7 HPC image.
NVSHMEM = ("src/comm/transports/common/transport_ib_common.cpp:58: NULL value mem registration failed\n"
           "src/comm/transports/ibrc/ibrc.cpp:486: non-zero status: 2 Unable to register memory handle."
           "src/mem/mem.cpp:349: non-zero status: 7 transport get memhandle failed\n"
           "src/mem/mem.cpp:604: non-zero status: 7 register heap handle failed\n")
NO_PEERMEM = ("Module                  Size  Used by\n"
              "nvidia_uvm           1376256  0\n"
              "nvidia              56467456  106 nvidia_uvm,gdrdrv,nvidia_modeset\n"
              "mlx5_ib               487424  0\n"
              "ib_core               499712  2 mlx5_ib,ib_uverbs\n")
WITH_PEERMEM = NO_PEERMEM + "nvidia_peermem         16384  0\n"


def _case(log: str, lsmod: str) -> Case:
    raw: dict[str, Any] = {
        "id": "x-nvshmem-peermem", "source": "https://example.org/x", "title": "t", "platform": "generic",
        "cluster": {"driver_mode": "host"},
        "evidence": [{"kind": "log", "text": log,
                      "object": {"kind": "Pod", "name": "nvshmem-job-0", "namespace": "default"}},
                     {"kind": "node-cmd", "name": "lsmod.txt", "text": lsmod}],
        "expect": {"healthy": False}}
    return msgspec.convert(raw, Case)


def test_nvshmem_unable_to_register_gpu_memory_without_a_peer_memory_client_is_peermem() -> None:
    assert top_pair(_case(NVSHMEM, NO_PEERMEM)) == ("driver", "peermem_not_loaded")


def test_the_same_failure_with_nvidia_peermem_loaded_is_not_peermem() -> None:
    # look-alike: the client is there, so the registration failed for another reason
    found = top_pair(_case(NVSHMEM, WITH_PEERMEM))
    assert found is None or found[1] != "peermem_not_loaded"


def test_a_healthy_nvshmem_job_on_a_node_without_peermem_stays_healthy() -> None:
    # look-alike: no peer-memory client (DMA-BUF or intra-node only) and no failure
    log = "NVSHMEM configuration:\n  NVSHMEM_REMOTE_TRANSPORT ibrc\nrunning 8 PEs, done\n"
    assert top_pair(_case(log, NO_PEERMEM)) is None


#: NVSHMEM 2.2.1's FAQ: the ibrc transport's own registration failure, quoted with no line number.
OLD_IBRC = "src/comm/transports/ibrc/ibrc.cpp:: NULL value mem registration failed.\n"


def test_an_older_transport_s_own_registration_failure_without_a_peer_memory_client_is_peermem() -> None:
    assert top_pair(_case(OLD_IBRC, NO_PEERMEM)) == ("driver", "peermem_not_loaded")


def test_the_older_transport_s_failure_with_nvidia_peermem_loaded_is_not_peermem() -> None:
    found = top_pair(_case(OLD_IBRC, WITH_PEERMEM))
    assert found is None or found[1] != "peermem_not_loaded"


def test_another_module_s_null_registration_is_not_read_as_the_ib_transport_s() -> None:
    # look-alike: a registration failure printed from a non-IB source file on the same node
    found = top_pair(_case("src/host/mem/mem_heap.cpp:: NULL value mem registration failed.\n", NO_PEERMEM))
    assert found is None or found[1] != "peermem_not_loaded"
