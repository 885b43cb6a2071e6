"""A Mellanox adapter's firmware reporting that its PCIe slot supplies too little power.

The mlx5 driver reads the adapter's power status from its MPEIN register on a PCIe event and
logs it (drivers/net/ethernet/mellanox/mlx5/core/events.c, ``mlx5_pcie_event``): "Detected
insufficient power on the PCIe slot (%uW)." when the firmware found the slot's power below
what the card needs, beside its informational "PCIe slot advertised sufficient power" and
"PCIe slot power capability was not advertised". The adapter then throttles or shuts its
ports down; node health agents raise the line as a hardware fault that needs the power
supply or the slot inspected (leptonai/gpud#348, its kernel-log matcher in PR #467; NVIDIA
NVSentinel's syslog monitor classes it a fatal NIC driver error). The catalogue has no NIC
hardware component: MOFED, the driver stack whose kernel lines report the adapter's health
(mlx5_health_compromised), carries it, in the device-error class.

On NVIDIA's DGX Spark (GB10), whose ConnectX-7 sits behind slots that advertise no power
limit, the driver prints the line at every boot while the links run at full rate (NVIDIA's
staff on its developer forum call it benign there): on a node whose GPUs are GB10 it says
nothing.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpunode.checks.base import check, kernel_log_holds
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import dmesg_device_finding
from gpunode.model import Finding, Status
from gpunode.relazy import lazy_compile

_LITERAL = "insufficient power on the PCIe slot"
#: mlx5_core's own line, the adapter's bus address before it.
_INSUFFICIENT = lazy_compile(
    r"\bmlx5_core [0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]: .{0,80}"
    r"\bDetected insufficient power on the PCIe slot\b")
#: The GPU of NVIDIA's DGX Spark, where the line is the slot's missing advertisement.
_BENIGN_ON = lazy_compile(r"\bGB10\b")

_may_hold = kernel_log_holds(_LITERAL)


def _gb10(ctx: NodeContext) -> bool:
    """The node's GPUs are GB10s, by GFD's product label or nvidia-smi's product names."""
    names = [ctx.gpu_product_label.replace("-", " "), *(g.product_name for g in ctx.smi_gpus)]
    return any(_BENIGN_ON.search(name) for name in names)


def insufficient_slot_power(line: str) -> bool:
    """Whether ``line`` is mlx5_core's report of a slot with too little power."""
    return _LITERAL in line and _INSUFFICIENT.search(line) is not None


@check("ofed", may_find=_may_hold)  # dmesg is one of the kernel's sources, not MOFED's need
def nic_slot_underpowered(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The first report of an adapter's slot with too little power (later ones repeat it), as
    MOFED's degraded device: the adapter throttles until the slot or supply is fixed."""
    split = ctx.text_lines("cmd", "dmesg.txt")
    if split is None:
        return
    lines = list(split[0])
    index = next((i for i, text in enumerate(lines) if insufficient_slot_power(text)), None)
    if index is None or _gb10(ctx):
        return
    yield dmesg_device_finding(ctx, component, lines, index, Status.DEGRADED,
                               verb="reports a NIC's PCIe slot short of power")
