"""The resource manager's NV_ERR_RESET_REQUIRED names the GPU: RM returns it for every call
once the GPU's GSP has crashed or its bus is dead, so the GPU has to be reset, whatever
assertion or RPC prints it. A driver assertion with another status stays the driver's."""

from __future__ import annotations

from case import Case, synthetic_case
from scoreboard import top_pair


def _case(dmesg: str) -> Case:
    return synthetic_case("x-reset-required", [{"kind": "node-cmd", "name": "dmesg.txt", "text": dmesg}],
                          healthy=False)


def test_a_channel_allocation_that_needs_a_gpu_reset_is_the_gpu_s() -> None:
    # the shape NVIDIA/NVSentinel's syslog rule reads (a failed GSP RPC, then the assertion)
    case = _case(
        "[Mon Jan  1 12:00:00 2024] NVRM: rpcRmApiAlloc_GSP: GspRmAlloc failed: hClient=0xc1d1a616; "
        "hParent=0x5c000054; hObject=0x5c00005b; hClass=0x0000c86f; paramsSize=0x00000170; "
        "paramsStatus=0x00000062; status=0x00000062\n"
        "[Mon Jan  1 12:00:02 2024] NVRM: nvAssertOkFailedNoLog: Assertion failed: Reset required "
        "[NV_ERR_RESET_REQUIRED] (0x00000062) returned from _kchannelSendChannelAllocRpc(pKernelChannel, "
        "pChannelGpfifoParams, pKernelChannelGroup, bFullSriov) @ kernel_channel.c:936\n")
    assert top_pair(case) == ("gpu-hardware", "error_device")


def test_a_driver_assertion_with_another_status_stays_the_driver_s() -> None:
    case = _case(
        "[  812.514722] NVRM: nvAssertOkFailedNoLog: Assertion failed: Invalid state [NV_ERR_INVALID_STATE] "
        "(0x00000040) returned from status @ kernel_channel.c:2827\n")
    assert top_pair(case)[0] == "driver"
