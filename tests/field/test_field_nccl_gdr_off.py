"""NCCL's IB transport saying, for every HCA it lists, that GPUDirect RDMA is disabled: a GPU
workload's traffic to the NIC goes through host memory, a degraded GPUDirect RDMA on the
node (NVIDIA/nccl#1676). Look-alikes from public write-ups stay quiet: the socket
transport's own line (sockets never do GPUDirect), a host where one HCA has it enabled (the
others are ports it does not use), and GPUs that do not do GPUDirect RDMA (DGX Spark's GB10)."""

from __future__ import annotations

import msgspec
from case import Case
from scoreboard import top_pair

# NVIDIA/nccl#1676: DGX OS 25.01 with NCCL 2.22.3, every HCA disabled
_ALL_OFF = ("learn01:2228637:2230195 [3] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n"
            "learn01:2228637:2230195 [3] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 1 'mlx5_1'\n")


def _job(text: str, **labels: str) -> Case:
    evidence: list[dict[str, object]] = [
        {"kind": "log", "object": {"kind": "Pod", "name": "nccl-0", "namespace": "default"}, "text": text}]
    if labels:
        evidence.insert(0, {"kind": "node-labels", "labels": labels})
    raw = {"id": "x-nccl-gdr", "source": "https://example.org/x", "title": "t", "platform": "ubuntu",
           "evidence": evidence, "expect": {"healthy": True}}
    return msgspec.convert(raw, Case)


def test_every_hca_without_gpudirect_degrades_gpudirect_rdma() -> None:
    top = top_pair(_job(_ALL_OFF))
    assert top is not None and top[0] == "gpudirect-rdma"
    # NCCL's own source wording with its reason after the device
    top = top_pair(_job("node1:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0' "
                        "(no module)\n"))
    assert top is not None and top[0] == "gpudirect-rdma"


def test_the_socket_transports_own_line_says_nothing() -> None:
    text = ("NCCL INFO NET/IB : No device found.\nNCCL INFO NET/Socket : Using [0]eth0:10.140.0.7<0>\n"
            "NCCL INFO Using network Socket\n"
            "NCCL INFO NET/Socket : GPU Direct RDMA Disabled for HCA 0 'eth0'\n")
    # the fallback to sockets on a node with RDMA ports is its own cause; the line adds nothing
    assert top_pair(_job(text)) in (None, ("gpudirect-rdma", "nccl_socket_fallback"))


def test_one_hca_with_gpudirect_enabled_is_health() -> None:
    text = ("hostA:31842:31905 [0] NCCL INFO NET/IB : GPU Direct RDMA Enabled for HCA 0 'mlx5_0'\n"
            "hostA:31842:31905 [5] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 5 'mlx5_5'\n"
            "hostA:31842:31905 [0] NCCL INFO Channel 00/0 : 3[3] -> 8[0] [send] via NET/IB/0/GDRDMA\n")
    assert top_pair(_job(text)) is None


def test_gpus_without_gpudirect_rdma_say_nothing() -> None:
    text = ("spark-01:14213:14219 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n"
            "spark-01:14213:14219 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [receive] via NET/IB/0\n")
    assert top_pair(_job(text, **{"nvidia.com/gpu.product": "NVIDIA-GB10"})) is None


_LSMOD_PEERMEM = ("Module                  Size  Used by\n"
                  "nvidia_peermem         16384  0\n"
                  "nvidia              11739136  43 nvidia_uvm,nvidia_peermem,nvidia_modeset\n"
                  "ib_uverbs             200704  2 nvidia_peermem,mlx5_ib\n")
_LSMOD_NONE = ("Module                  Size  Used by\n"
               "nvidia              11739136  43 nvidia_uvm,nvidia_modeset\n"
               "ib_uverbs             200704  1 mlx5_ib\n")


def _with_modules(text: str, lsmod: str) -> Case:
    raw = msgspec.to_builtins(_job(text))
    raw["evidence"] = [{"kind": "node-cmd", "name": "lsmod.txt", "text": lsmod}, *raw["evidence"]]
    return msgspec.convert(raw, Case)


def test_every_hca_off_with_nvidia_peermem_loaded_is_the_job_s_nccl_against_the_module() -> None:
    # NVIDIA/nccl#1676 and #1537: nvidia_peermem in lsmod, an NCCL that looks only for nv_peer_mem
    assert top_pair(_with_modules(_ALL_OFF, _LSMOD_PEERMEM)) == ("gpudirect-rdma", "error_version_mismatch")
    # the same with NCCL's banner naming a release older than 2.23.4
    old = "NCCL version 2.19.3+cuda12.3\n" + _ALL_OFF
    assert top_pair(_with_modules(old, _LSMOD_PEERMEM)) == ("gpudirect-rdma", "error_version_mismatch")


def test_no_module_loaded_or_an_nccl_that_knows_it_is_not_a_version_mismatch() -> None:
    top = top_pair(_with_modules(_ALL_OFF, _LSMOD_NONE))
    assert top is not None and top != ("gpudirect-rdma", "error_version_mismatch")
    new = "NCCL version 2.23.4+cuda12.6\n" + _ALL_OFF
    top = top_pair(_with_modules(new, _LSMOD_PEERMEM))
    assert top is not None and top != ("gpudirect-rdma", "error_version_mismatch")
