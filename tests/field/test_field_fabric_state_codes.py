"""The driver's own status codes for Fabric Manager's state, in an NVRM line of the kernel log:
NV_ERR_FABRIC_STATE_OUT_OF_SYNC ("NVLink fabric state cached by the driver is out of sync") and
NV_ERR_FABRIC_MANAGER_NOT_PRESENT ("Fabric Manager is not loaded"), both listed in the open
kernel modules' status codes (NVIDIA/open-gpu-kernel-modules,
src/common/sdk/nvidia/inc/nvstatuscodes.h). The multicast (NVLS) setup returns them after Fabric
Manager was stopped or restarted under live GPUs, and only a GPU reset with Fabric Manager
started again clears it (Fabric Manager user guide, "NVSwitch and NVLink Initialization",
https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html; an NCCL
maintainer in https://github.com/NVIDIA/nccl/issues/1488; Fabric Manager killed on H100 nodes,
https://github.com/NVIDIA/NVSentinel/issues/883). So the line is Fabric Manager's, not the
driver's; another NVRM failure stays the driver's."""

from __future__ import annotations

from case import Case, synthetic_case
from scoreboard import top_pair

#: The multicast setup's check failing, as the open modules print it (mem_multicast_fabric.c).
OUT_OF_SYNC = ("[1891044.581319] NVRM: nvCheckOkFailedNoLog: Check failed: NVLink fabric state cached "
               "by the driver is out of sync [NV_ERR_FABRIC_STATE_OUT_OF_SYNC] (0x00000087) returned "
               "from status @ mem_multicast_fabric.c:3119")
NOT_PRESENT = ("[  812.100200] NVRM: nvCheckOkFailedNoLog: Check failed: Fabric Manager is not loaded "
               "[NV_ERR_FABRIC_MANAGER_NOT_PRESENT] (0x0000007A) returned from status @ "
               "mem_multicast_fabric.c:3039")
#: Look-alike: another status code of the same check, the driver's own.
OTHER_CHECK = ("[ 5120.004411] NVRM: nvCheckOkFailedNoLog: Check failed: Invalid state "
               "[NV_ERR_INVALID_STATE] (0x00000040) returned from status @ mem_multicast_fabric.c:2917")


def _node(dmesg: str) -> Case:
    return synthetic_case("x-fabric-state", [{"kind": "node-cmd", "name": "dmesg.txt", "text": dmesg + "\n"}],
                          cluster={"gpu_node": {"gpu": "NVIDIA H100 80GB HBM3", "gpus": 8}})


def test_the_fabric_state_codes_are_fabric_managers() -> None:
    for line in (OUT_OF_SYNC, NOT_PRESENT):
        top = top_pair(_node(line))
        assert top is not None and top[0] == "fabric-manager", (line, top)


def test_another_nvrm_check_failure_stays_the_drivers() -> None:
    top = top_pair(_node(OTHER_CHECK))
    assert top is not None and top[0] == "driver"


def test_a_kernel_log_without_failure_stays_healthy() -> None:
    quiet = "[    5.120000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  575.57.08"
    assert top_pair(_node(quiet)) is None
