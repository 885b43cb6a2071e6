"""An Xid line read with the severity word the driver writes into it.

NVLink5 Xids (144-150) carry the driver's own verdict after the unit name: "Nonfatal" or
"Fatal". A Nonfatal one alone is an error the driver handled; the GPU stays in service
(NVIDIA/NVSentinel#1357: "145, RLW_SRC_TRACK Nonfatal XC1 i0 Link 17", a monitor's fatal
mapping filed and closed as its bug). Beside another Xid on the node (NVIDIA/nccl#2241: the
same Nonfatal 145 with Xid 137 on the same link while a collective hung) the link is failing,
and the same line is the hardware Xid it was. Xid catalogue:
https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html
"""

from __future__ import annotations

from case import synthetic_case
from scoreboard import top_pair

NONFATAL = ("NVRM: Xid (PCI:0000:c5:00): 145, RLW_SRC_TRACK Nonfatal XC1 i0 Link 17 (0x04084507 0x00000004 "
            "0x00000000 0x00000000 0x00000000 0x00000000")
BESIDE = "NVRM: Xid (PCI:0000:c5:00): 137, RLW_RXPIPE interrupt hit on link 17 on GPU0: PRIV Error"


def _dmesg(*lines: str) -> list[dict[str, str]]:
    return [{"kind": "node-cmd", "name": "dmesg.txt", "text": "\n".join(lines) + "\n"}]


def test_a_nonfatal_xid_alone_leaves_the_gpu_in_service() -> None:
    assert top_pair(synthetic_case("x-xid-nonfatal", _dmesg(NONFATAL))) is None


def test_the_same_xid_marked_fatal_is_a_hardware_xid() -> None:
    fatal = NONFATAL.replace("Nonfatal", "Fatal")
    case = synthetic_case("x-xid-fatal", _dmesg(fatal), healthy=False)
    assert top_pair(case) == ("gpu-hardware", "xid_hardware_error")


def test_a_nonfatal_xid_beside_another_xid_is_a_failing_link() -> None:
    case = synthetic_case("x-xid-nonfatal-beside", _dmesg(NONFATAL, BESIDE), healthy=False)
    assert top_pair(case) == ("gpu-hardware", "xid_hardware_error")


# A correctable-ECC storm on one GPU, read against its peers (NVIDIA/DCGM#313, NVIDIA/NVSentinel#1748:
# one GB200 GPU at 9.6e9 corrected errors since the driver loaded, the three others at 0).
def _sbe(*values: str) -> list[dict[str, str]]:
    rows = "\n".join(f'DCGM_FI_DEV_ECC_SBE_VOL_TOTAL{{gpu="{i}"}} {v}' for i, v in enumerate(values))
    text = ("# HELP DCGM_FI_DEV_ECC_SBE_VOL_TOTAL Total number of single-bit volatile ECC errors.\n"
            "# TYPE DCGM_FI_DEV_ECC_SBE_VOL_TOTAL counter\n" + rows + "\n")
    return [{"kind": "metrics", "name": "dcgm-exporter.prom", "text": text}]


def test_one_gpu_correcting_by_the_billion_among_quiet_peers_is_degrading() -> None:
    case = synthetic_case("x-sbe-storm", _sbe("0", "0", "9.6e9", "0"), platform="ubuntu", healthy=False,
                          cluster={"gpu_node": {"gpus": 4}})
    assert top_pair(case) == ("gpu-hardware", "error_device")


def test_corrected_counts_alike_on_every_gpu_stay_healthy() -> None:
    case = synthetic_case("x-sbe-even", _sbe("2.1e6", "1.9e6", "2.4e6", "2.0e6"), platform="ubuntu",
                          cluster={"gpu_node": {"gpus": 4}})
    assert top_pair(case) is None
    few = synthetic_case("x-sbe-few", _sbe("0", "0", "12", "0"), platform="ubuntu",
                         cluster={"gpu_node": {"gpus": 4}})
    assert top_pair(few) is None
