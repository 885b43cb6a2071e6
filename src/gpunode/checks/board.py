"""Whether a node's board carries NVSwitches, and what a switch-polling line means without them.

Fabric Manager and DCGM's NVSwitch module both poll NVSwitches; on a board that has none
(PCIe cards) their complaints that no switch answers describe hardware the node lacks, not
a failure. The node's facts decide (``nvswitch_board``): NVSwitch device nodes or a GPU
registered in a fabric say the board has them, GPUs that are all PCIe cards say it has
none, and without either the facts say nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from gpunode.checks.context import NodeContext
from gpunode.decisive import severity
from gpunode.relazy import lazy_compile

#: GPU products built only as PCIe cards (nvidia-smi's product name or GFD's label, which
#: writes the same name with dashes): no NVSwitch baseboard carries them.
_PCIE_CARD = lazy_compile(
    r"(?i:\bPCIe?\b|\bNVL\b|\b(?:A2|A10G?|A16|A30|A40|L4|L20|L40S?|T4G?|P4|P40|M60|M40|M10|K80|K40m?|"
    r"GB10|Thor)\b|\bRTX\b|\bQuadro\b|\bGeForce\b|\bTITAN\b|\bGRID\b)")
#: GPU products of NVSwitch baseboards (HGX/DGX: SXM modules and the superchips).
_BASEBOARD_PART = lazy_compile(
    r"(?i:\bSXM\d?\b|\bHBM3e?\b|\b(?:H100 80GB|H200|H800|H20|B200|B300|GB200|GB300)\b)")
#: A GPU's fabric state where it is in no NVSwitch fabric (or the GPU predates the field).
_NO_FABRIC = (None, "N/A", "Not Supported")


def nvswitch_board(ctx: NodeContext) -> bool | None:
    """Whether the node's board has NVSwitches: True where the probe lists NVSwitch device
    nodes, a GPU reports a fabric registration or names a baseboard part; False where every
    GPU is a PCIe card; None where the facts say neither."""
    probe = ctx.probe
    if probe is not None and any(d.startswith("nvidia-nvswitch") for d in probe.host.device_nodes):
        return True
    gpus = ctx.smi_gpus
    if any(g.fabric_state not in _NO_FABRIC for g in gpus):
        return True
    label = ctx.gpu_product_label
    products = [g.product_name for g in gpus] or ([label] if label else [])
    if not products:
        return None
    if all(_PCIE_CARD.search(p) for p in products):
        return False
    return True if any(_BASEBOARD_PART.search(p) for p in products) else None


#: A line DCGM's NVSwitch module wrote: its module tag or its source under modules/nvswitch/
#: ("ERROR [..] [[NvSwitch]] Not attached to NvSwitches. Aborting [.../modules/nvswitch/
#: DcgmNvSwitchManager.cpp:967] [DcgmNs::DcgmNvSwitchManager::ReadNvSwitchStatusAllSwitches]",
#: NVIDIA/DCGM#159; "[[NvSwitch]] ReadNvSwitchStatusAllSwitches() returned Object is in an
#: undefined state [.../modules/nvswitch/DcgmModuleNvSwitch.cpp:388]", NVIDIA/DCGM#174 and
#: NVIDIA/dcgm-exporter#334). The module polls every few seconds whether or not the board
#: has switches; the host engine and its GPU metrics go on.
_SWITCH_MODULE = lazy_compile(r"\[\[NvSwitch\]\]|/modules/nvswitch/\w+\.cpp:\d+|\bDcgm\w*NvSwitch\w*::")


def switch_module_without_switches(ctx: NodeContext, line: str) -> bool:
    """``line`` is DCGM's NVSwitch module complaining on a board the facts show has no
    NVSwitch (module docstring): nothing for it to read, no failure. Where the board has
    switches, or the facts do not say, the line stands."""
    return bool(_SWITCH_MODULE.search(line)) and nvswitch_board(ctx) is False


#: GPUs without memory of their own: integrated GPUs that share the host's DRAM (DGX Spark's GB10,
#: Jetson's Orin and Xavier, Thor). NVML gives no device memory info for them: nvidia-smi prints
#: "Not Supported" as the GB10's Memory-Usage (NVIDIA/k8s-device-plugin#1482).
_UNIFIED_MEMORY_PART = lazy_compile(r"(?i:\b(?:GB10|Thor|Orin|Xavier|Tegra|Jetson)\b)")
#: NVML's answer that it has no memory info for the device (NVML_ERROR_NOT_SUPPORTED to a memory
#: query: nvmlDeviceGetMemoryInfo, _v2), in an agent's words (leptonai/gpud#1084: "failed to get
#: device memory info v2, falling back to v1", "error":"Not Supported").
_MEMORY_NOT_SUPPORTED = lazy_compile(
    r"(?i:\bmemory(?: info(?:rmation)?| usage)?\b[^\n]{0,120}?\bnot supported\b)")


def unified_memory_board(ctx: NodeContext) -> bool | None:
    """Whether every GPU of the node is an integrated part with no memory of its own (True),
    one of them is not (False), or the facts name no GPU (None)."""
    label = ctx.gpu_product_label
    products = [g.product_name for g in ctx.smi_gpus] or ([label] if label else [])
    if not products:
        return None
    return all(_UNIFIED_MEMORY_PART.search(p or "") for p in products)


def memory_reading_without_device_memory(ctx: NodeContext, line: str, others: Iterable[str]) -> bool:
    """``line`` (a running agent's last complaint) is NVML answering Not Supported to a memory
    query, or a line logged below error level in a log (``others``) that holds that answer, on a
    node whose GPUs have no memory of their own: a reading the device does not offer, not a
    failure (leptonai/gpud#1084: GPUd's memory check on a GB10 failing on the empty used percent
    that followed, fixed by treating Not Supported as unsupported). A discrete GPU, or facts that
    name none, keep the line."""
    if unified_memory_board(ctx) is not True:
        return False
    if _MEMORY_NOT_SUPPORTED.search(line):
        return True
    return severity(line) < 2 and any(_MEMORY_NOT_SUPPORTED.search(other) for other in others)
