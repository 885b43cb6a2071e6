"""The kernel's and the hardware's own vocabulary on a GPU node, read wherever it is quoted:
the driver's GSP RPC timeout without its NVRM/Xid prefix, and the EKS node monitoring agent's
double-bit-error condition. Each rule has a line it names and a look-alike it stays silent
on."""

from __future__ import annotations

import pytest

from gpunode.explain import explain_lines
from gpunode.kb import load_kb

KB = load_kb()


def _best(text: str) -> str | None:
    found = explain_lines(text.splitlines(), KB)
    return found.matches[0].cause.code if found.matches else None


@pytest.mark.parametrize(
    "line",
    [
        # Lambda Cloud's FAQ quotes the driver's words alone
        "Timeout waiting for RPC from GSP!",
        # later releases' wording, as a kernel log without the Xid prefix carries it
        "[ 8711.204318] NVRM: Timeout after 6s of waiting for RPC response from GPU5 GSP! Expected function 76",
    ],
)
def test_gsp_rpc_timeout_words(line: str) -> None:
    cause = KB.get("gsp_firmware_unresponsive")
    in_dmesg = [m for c, m in KB.matchers("driver", "node_cmd") if c is cause and m.name == "dmesg.txt"]
    assert any(m.regex.search(line) for m in in_dmesg)


def test_gsp_rpc_timeout_quoted_alone() -> None:
    assert _best("Timeout waiting for RPC from GSP!") == "gsp_firmware_unresponsive"


def test_gsp_rpc_timeout_on_an_xid_line_stays_the_xid() -> None:
    line = ("NVRM: Xid (PCI:0000:61:00): 119, pid=977823, name=nvidia-smi, Timeout waiting for RPC "
            "from GSP! Expected function 76 (GSP_RM_CONTROL) (0x2080014b 0x5).")
    assert _best(line) == "xid_119_gsp_timeout"


@pytest.mark.parametrize(
    "line",
    [
        "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  550.54.15",
        "NVRM: GPU0 RPC to GSP completed in 3us",
        "waiting for GSP firmware to boot",
    ],
)
def test_gsp_look_alikes_stay_silent(line: str) -> None:
    assert _best(line) != "gsp_firmware_unresponsive"


def test_eks_double_bit_condition() -> None:
    line = "AcceleratedHardwareReady=False NvidiaDoubleBitError detected 2 Nvidia Double Bit error(s) on location DEVICE"
    cause = KB.get("uncorrectable_ecc")
    signatures = [m for c, m in KB.matchers("gpu-hardware", "node_condition") if c is cause]
    assert any(m.regex.search(line) for m in signatures)
    assert _best("NvidiaDoubleBitError") == "uncorrectable_ecc"


def test_eks_ready_condition_is_silent() -> None:
    cause = KB.get("uncorrectable_ecc")
    signatures = [m for c, m in KB.matchers("gpu-hardware", "node_condition") if c is cause]
    for line in ("AcceleratedHardwareReady=True AcceleratedHardwareIsReady Monitoring for the AcceleratedHardware system is active",
                 "AcceleratedHardwareReady=False NvidiaNVLinkError detected 3 NVLink errors on fieldId 404"):
        assert not any(m.regex.search(line) for m in signatures)
