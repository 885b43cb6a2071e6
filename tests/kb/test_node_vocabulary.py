# ruff: noqa: E501  (real log lines are long)
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


# --- NVSwitch SXids read by their number (data/sxid.toml) ---------------------------------

_DATA_LINE = ("kern  :err   : 2025-01-25T10:34:54,859532+00:00 nvidia-nvswitch1: SXid (PCI:0000:84:00.0): "
              "12028, Data {0x000001c0, 0x00bd5c8a, 0x00000500, 0x00000064, 0x00000000}")


def test_sxid_catalog_loads_and_classes_numbers() -> None:
    from gpunode.xid import SXID_FATAL, load_sxid_catalog

    table = load_sxid_catalog()
    assert table[12028].sxid_class in SXID_FATAL  # egress non-posted PRIV error: traffic stalls
    assert table[24007].sxid_class in SXID_FATAL
    assert table[23001].sxid_class == "always_fatal"
    assert table[11012].sxid_class == "non_fatal"  # single-bit ECC, corrected
    assert table[20001].sxid_class == "non_fatal"  # TX replay


def test_sxid_catalog_refuses_a_number_twice() -> None:
    from gpunode.errors import BundleError
    from gpunode.xid import parse_sxid_catalog

    entry = '[[sxid]]\ncode = 1\nname = "x"\nclass = "fatal"\nrecovery = "r"\n'
    with pytest.raises(BundleError):
        parse_sxid_catalog(entry + entry)
    with pytest.raises(BundleError):
        parse_sxid_catalog(entry.replace('"fatal"', '"bad"'))


@pytest.mark.parametrize(
    "line",
    [
        _DATA_LINE,
        # another line of a fatal report, its severity given as a number only
        "[ 1108.858290] nvidia-nvswitch0: SXid (PCI:0000:c3:00.0): 24007, Severity 5 Engine instance 28 Sub-engine instance 00",
        # an always-fatal number
        "nvidia-nvswitch2: SXid (PCI:0000:05:00.0): 23001, Data {0x00000000}",
    ],
)
def test_fatal_sxid_by_number(line: str) -> None:
    assert _best(line) == "nvswitch_fatal_error"


@pytest.mark.parametrize(
    "line",
    [
        # a corrected single-bit ECC error and a replayed packet: no impact
        "nvidia-nvswitch0: SXid (PCI:0000:06:00.0): 11012, Data {0x00000000, 0x00000001}",
        "nvidia-nvswitch0: SXid (PCI:0000:06:00.0): 20001, Data {0x00000000}",
        # a number the catalog lacks, and a line whose own word says non-fatal
        "nvidia-nvswitch0: SXid (PCI:0000:06:00.0): 99999, Data {0x00000000}",
        "nvidia-nvswitch0: SXid (PCI:0000:06:00.0): 12028, Non-fatal, Link 04 egress non-posted PRIV error",
    ],
)
def test_sxid_look_alikes_stay_silent(line: str) -> None:
    assert _best(line) != "nvswitch_fatal_error"


def test_relocation_refusal_is_a_module_load_failure() -> None:
    line = "module: x86/modules: Skipping invalid relocation target, existing value is nonzero for type 1"
    assert KB.line_class(line).code == "error_module_load"
    assert explain_lines([line], KB).decisive_class == "error_module_load"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("Failed to enable SRIOV: Only 0 MSI-X interrupts available for SR-IOV.", "error_resource_exhausted"),
        ("ice 0000:3b:00.0: Not enough vectors to support 8 VFs", "error_resource_exhausted"),
    ],
)
def test_vf_vector_shortage_class(line: str, expected: str) -> None:
    assert KB.line_class(line).code == expected


def test_vectors_enabled_are_no_shortage() -> None:
    assert KB.line_class("ice 0000:3b:00.0: Enabling 4 VFs with 17 vectors and 16 queues per VF").code != "error_resource_exhausted"


def _hung_in_dmesg(line: str) -> bool:
    cause = KB.get("kernel_hung_task")
    return any(m.regex.search(line) for c, m in KB.matchers("kernel", "node_cmd")
               if c is cause and m.name == "dmesg.txt")


@pytest.mark.parametrize(
    "line",
    [
        # comm names cut to 15 characters, and an NVML thread of a monitoring agent
        "INFO: task NvmlTaskRunner:11290 blocked for more than 368 seconds.",
        "[ 5120.771002] INFO: task gpu-feature-dis:13672 blocked for more than 245 seconds.",
        "INFO: task nvidia-ctk:108319 blocked for more than 245 seconds.",
        # Linux 6.16+'s blocker lines
        "INFO: task nvidia-smi:49301 <writer> blocked on an rw-semaphore likely owned by task VLLM::EngineCor:46249 <writer>",
        "INFO: task nvidia-smi:82355 is blocked on a mutex likely owned by task text-embeddings:4875.",
    ],
)
def test_gpu_stack_hung_task(line: str) -> None:
    assert _hung_in_dmesg(line)


@pytest.mark.parametrize(
    "line",
    [
        "INFO: task kworker/u256:3:2811043 blocked for more than 122 seconds.",
        "INFO: task postgres:4410 <reader> blocked on an rw-semaphore likely owned by task nvidia-smi:4401 <writer>",
        "INFO: task nvidia-smi:82355 is blocked on something else",
        "INFO: task NvidiaWatcher:82 blocked for more than 30 seconds.",
    ],
)
def test_hung_task_look_alikes_stay_silent(line: str) -> None:
    assert not _hung_in_dmesg(line)
