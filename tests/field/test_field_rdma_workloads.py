"""A pod that asks for the RDMA shared device plugin's devices and no GPU (an ib_write_bw or
ib_read_bw test between two pods, as every RDMA guide runs one) is read as a GPU job's log is,
for the RDMA layers only: perftest's own words for the verbs connection it could not make name
the GPUDirect RDMA path (Mellanox/k8s-rdma-shared-dev-plugin#72). A healthy perftest run names
nothing, nor does such a pod's word about a GPU it was never given."""

from __future__ import annotations

from case import Case, synthetic_case
from scoreboard import top_pair

#: perftest's output where the queue pair could not reach the peer (both GIDs zero: the pods
#: had no RoCE netdev), as Mellanox/k8s-rdma-shared-dev-plugin#72 quotes it.
FAILED = """\
                    RDMA_Write BW Test
 Dual-port       : OFF          Device         : mlx5_2
 Number of qps   : 1            Transport type : IB
 Connection type : RC           Using SRQ      : OFF
 Mtu             : 1024[B]
 Link type       : Ethernet
 GID index       : 0
---------------------------------------------------------------------------------------
 local address: LID 0000 QPN 0x003b PSN 0xab3a5e RKey 0x015b1a VAddr 0x007f72e9620000
 GID: 00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00
 remote address: LID 0000 QPN 0x003c PSN 0x65b096 RKey 0x014d0c VAddr 0x007fcb322d5000
 GID: 00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00
Failed to modify QP 59 to RTR
 Unable to Connect the HCA's through the link
"""

#: The same test when it connects: its results table.
PASSED = """\
                    RDMA_Write BW Test
 Dual-port       : OFF          Device         : mlx5_0
 Link type       : IB
---------------------------------------------------------------------------------------
 #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
 65536      5000             11734.42            11733.82             0.187741
---------------------------------------------------------------------------------------
"""


def _rdma_pod(text: str, limits: dict[str, str] | None = None) -> Case:
    return synthetic_case("x-rdma-workload", [
        {"kind": "workload", "name": "rdma-test-pod-1", "namespace": "default", "container": "app",
         "state": "Running", "resources": {"limits": limits or {"rdma/hca_shared_devices_a": "1"}}},
        {"kind": "log", "object": {"kind": "Pod", "name": "rdma-test-pod-1", "namespace": "default"},
         "text": text},
    ])


def test_perftest_that_cannot_connect_names_the_gpudirect_rdma_path() -> None:
    assert top_pair(_rdma_pod(FAILED)) == ("gpudirect-rdma", "error_unreachable")


def test_a_perftest_run_that_connects_names_nothing() -> None:
    assert top_pair(_rdma_pod(PASSED)) is None


def test_an_rdma_pod_s_word_about_a_gpu_names_no_gpu_layer() -> None:
    # no GPU was asked for, so CUDA finding none says nothing of the node's GPUs or runtime
    text = "RuntimeError: No CUDA GPUs are available\nCUDA error: no CUDA-capable device is detected\n"
    assert top_pair(_rdma_pod(text)) is None


def test_a_pod_asking_for_no_rdma_device_is_not_read() -> None:
    assert top_pair(_rdma_pod(FAILED, {"cpu": "1"})) is None
