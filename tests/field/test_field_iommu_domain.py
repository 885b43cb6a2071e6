"""A verbs local protection error under a translating IOMMU (checks/iommu_domain.py): NCCL's
NET/IB completion with IBV_WC_LOC_PROT_ERR in a GPU job's log is the kernel's where the node's
own kernel log says the IOMMU's default domain is Translated (iommu=pt was missing); with the
boot line saying Passthrough, or without it, the table's layer (gpudirect-rdma) stands."""

from __future__ import annotations

import msgspec
from case import Case
from scoreboard import top_pair

from gpunode.checks.iommu_domain import iommu_translated, protection_under_translation

#: EldritchJS/ml-dev-env docs/rdma/IOMMU-PASSTHROUGH-FIX.md's warning (wrapped there, joined).
LOC_PROT = ("[2026-02-25 06:16:39] h-kim-0:1353:1409 [3] ib_plugin.c:2033 NCCL WARN NET/IB: Got completion "
            "from peer 10.128.8.30<55095> with status=IBV_WC_LOC_PROT_ERR(4) opcode=IBV_WC_SEND(0) "
            "reqSize=524288 vendor_err=81 req_type=Send localGid ::ffff:10.0.106.7 "
            "remoteGids::ffff:10.0.106.6 hca mlx5_11\n")
#: drivers/iommu/iommu.c iommu_subsys_init's boot lines, translated (lazy: DMA-FQ) and passthrough.
TRANSLATED = ("[    1.204311] iommu: Default domain type: Translated\n"
              "[    1.204312] iommu: DMA domain TLB invalidation policy: lazy mode\n")
PASSTHROUGH = "[    1.204311] iommu: Default domain type: Passthrough (set via kernel command line)\n"


def _case(dmesg: str | None, log: str = LOC_PROT) -> Case:
    evidence: list[dict[str, object]] = [
        {"kind": "workload", "name": "trainer-0", "namespace": "ml",
         "resources": {"limits": {"nvidia.com/gpu": "4"}}, "state": "Running"},
        {"kind": "log", "object": {"kind": "Pod", "name": "trainer-0", "namespace": "ml"}, "text": log}]
    if dmesg is not None:
        evidence.insert(0, {"kind": "node-cmd", "name": "dmesg.txt", "text": dmesg})
    raw = {"id": "x-iommu-domain", "source": "https://example.org/x", "title": "t", "platform": "generic",
           "cluster": {"gpu_node": {"gpus": 4}}, "evidence": evidence, "expect": {"healthy": False}}
    return msgspec.convert(raw, Case)


def test_local_protection_under_a_translating_iommu_is_the_kernel_s() -> None:
    assert top_pair(_case(TRANSLATED)) == ("kernel", "error_unclassified")


def test_passthrough_or_no_boot_line_leaves_the_peer_path() -> None:
    assert top_pair(_case(PASSTHROUGH)) == ("gpudirect-rdma", "error_unclassified")
    assert top_pair(_case(None)) == ("gpudirect-rdma", "error_unclassified")


def test_other_verbs_errors_on_a_translating_iommu_keep_their_layer() -> None:
    retry = ("kp-ddp-worker-0:3468:3905 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer "
             "10.216.210.236<54862> with status=12 opcode=0 len=0 vendor err 129 (Recv)\n")
    assert top_pair(_case(TRANSLATED, retry)) == ("rdma-links", "error_unreachable")


def test_a_healthy_translating_node_stays_healthy() -> None:
    assert top_pair(_case(TRANSLATED, "NCCL INFO NET/IB : Using [0]mlx5_11:1/RoCE\n")) is None


def test_the_domain_is_read_from_the_last_boot_line() -> None:
    assert iommu_translated(TRANSLATED)
    assert not iommu_translated(PASSTHROUGH)
    assert not iommu_translated(TRANSLATED + PASSTHROUGH)
    assert not iommu_translated(None)
    assert not iommu_translated("[    0.000000] Command line: ro amd_iommu=on\n")
    assert protection_under_translation(LOC_PROT.strip(), TRANSLATED)
    assert not protection_under_translation("NCCL WARN NET/IB : Got completion with error 12, opcode 1, "
                                            "len 0, vendor err 129", TRANSLATED)
