"""PyTorch's NCCL watchdog timeout among the GPUs of one pod (checks.collective_stall): read
against the host's PCIe peer-to-peer path (NCCL's troubleshooting guide, PCI Access Control
Services), and silent where the timeout points elsewhere: one GPU in the pod, NCCL sending over
the network, the job's own P2P setting, GPUs joined by NVLink.

Sources: https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html#pci-access-control-services-acs;
PyTorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (the watchdog's line)."""

from __future__ import annotations

from typing import Any

import pytest
from case import synthetic_case
from scoreboard import top_pair

from gpunode.checks.collective_stall import stalled_index

TIMEOUT = ("[rank0]:[E ProcessGroupNCCL.cpp:563] [Rank 0] Watchdog caught collective operation timeout: "
           "WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for "
           "600104 milliseconds before timing out.")
PCIE_TOPO = ("        GPU0    GPU1    CPU Affinity    NUMA Affinity\n"
             "GPU0     X      PHB     0-31            0\n"
             "GPU1    PHB      X      0-31            0\n")
NVLINK_TOPO = ("        GPU0    GPU1    CPU Affinity    NUMA Affinity\n"
               "GPU0     X      NV12    0-31            0\n"
               "GPU1    NV12     X      0-31            0\n")


def _case(case_id: str, text: str, gpus: str = "2", topo: str | None = None) -> Any:
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "ddp-0", "namespace": "default", "container": "train",
         "resources": {"limits": {"nvidia.com/gpu": gpus}}, "state": "Error", "exit_code": 1},
        {"kind": "log", "object": {"kind": "Pod", "name": "ddp-0", "namespace": "default"},
         "container": "train", "text": text + "\n"}]
    if topo is not None:
        evidence.append({"kind": "node-cmd", "name": "nvidia-smi-topo-m.txt", "text": topo})
    return synthetic_case(case_id, evidence)


def test_shape() -> None:
    lines = ["epoch 1 loss 0.31", TIMEOUT, "process 1 terminated with signal SIGABRT"]
    assert stalled_index(lines, 2, PCIE_TOPO) == 1
    assert stalled_index(lines, 1, "") is None
    assert stalled_index(lines, 4, NVLINK_TOPO) is None


def test_timeout_among_a_pods_gpus_is_the_pcie_path() -> None:
    assert top_pair(_case("x-stall", TIMEOUT, topo=PCIE_TOPO)) == ("kernel", "error_unreachable")
    assert top_pair(_case("x-stall-no-topo", TIMEOUT, gpus="4")) == ("kernel", "error_unreachable")


@pytest.mark.parametrize(("text", "gpus", "topo"), [
    (TIMEOUT, "1", None),  # one GPU: its peers are in other pods
    (TIMEOUT, "2", NVLINK_TOPO),  # NVLink, not PCIe, joins the GPUs
    ("node1:12:40 [0] NCCL INFO Channel 00/0 : 0[0] -> 2[0] [send] via NET/IB/0\n" + TIMEOUT, "2", None),
    ("node1:12:12 [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 1\n" + TIMEOUT, "2", None),
    ("[rank0]: NCCL INFO Watchdog thread started, timeout 600000 ms\nepoch 1 loss 0.31", "2", None),
])
def test_look_alikes_stay_silent(text: str, gpus: str, topo: str | None) -> None:
    top = top_pair(_case("x-stall-lookalike", text, gpus=gpus, topo=topo))
    assert top is None or top[0] != "kernel"
