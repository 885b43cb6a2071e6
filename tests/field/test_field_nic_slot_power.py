"""A Mellanox adapter's slot short of power (checks/nic_slot_power.py): mlx5_core's "Detected
insufficient power on the PCIe slot (27W)." (mlx5/core/events.c, mlx5_pcie_event) is the
adapter's hardware fault, raised on MOFED in the device-error class (leptonai/gpud#348). Its
informational siblings, another driver's line, and the same line on a DGX Spark (GB10), where
NVIDIA calls it benign, stay silent."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.checks.nic_slot_power import insufficient_slot_power

#: leptonai/gpud#348, as the maintainer quotes it from one of their GPU nodes.
SHORT = ("[Sun Dec  1 14:54:40 2024] ny2g1r12hh2 kernel: mlx5_core 0000:5c:00.0: mlx5_pcie_event:299:"
         "(pid 268269): Detected insufficient power on the PCIe slot (27W).\n")
#: Look-alikes: the same event's informational words.
SUFFICIENT = ("[   14.902113] mlx5_core 0000:5c:00.0: mlx5_pcie_event:299:(pid 0): PCIe slot advertised "
              "sufficient power (75W).\n"
              "[   14.902200] mlx5_core 0000:5c:00.1: mlx5_pcie_event:294:(pid 0): PCIe slot power "
              "capability was not advertised.\n")


def _case(text: str, **cluster: Any) -> Case:
    evidence = [{"kind": "node-cmd", "name": "dmesg.txt", "text": text}]
    return synthetic_case("x-nic-slot-power", evidence, healthy=False,
                          cluster={"driver_mode": "host", **cluster})


def test_a_nic_slot_short_of_power_is_mofed_s_device_error() -> None:
    assert top_pair(_case(SHORT)) == ("ofed", "error_device")


def test_the_event_s_informational_words_and_a_dgx_spark_stay_silent() -> None:
    assert top_pair(_case(SUFFICIENT)) is None
    assert top_pair(_case(SHORT, gpu_node={"gpu": "NVIDIA GB10", "gpus": 1})) is None
    assert not insufficient_slot_power("ice 0000:17:00.0: Detected insufficient power on the PCIe slot")
