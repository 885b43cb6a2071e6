"""NVRC, the NVIDIA init of the Kata Containers GPU guest, in the guest's kernel console: a line
of its own that reads as a failure, or that met a value it does not know and went on with a
guess (an H100's CC-mode register 0x1 read as unknown and assumed off, after which nvidia.ko
cannot attach the GPU: kata-containers/kata-containers#11622, fixed in NVIDIA/nvrc#19), is the
sandbox runtime's guest setup: the container runtime's, below the driver that failed after it.
NVRC's routine lines, and a guess by another program, say nothing against the runtime."""

from __future__ import annotations

from typing import Any

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

ROUTINE = """\
[    3.853993] NVRC::cpu_vendor[1]: cpu vendor: amd
[    3.855603] NVRC::get_devices[1]: GPUs found: ["0000:02:00.0"]
[    3.856292] NVRC[1]: cold-plug mode detected, starting GPU setup
[    3.858251] NVRC::query_cc_mode[1]: Register value at 0x1182cc: 0x1
"""
GUESS = ("[    3.858953] NVRC::query_cc_mode[1]: CC mode for BDF 0000:02:00.0 (via BAR0): "
         "unknown value 0x1, assuming off\n")
ATTACH = "[    7.755679] NVRM: osInitNvMapping: *** Cannot attach gpu\n"


def _node(dmesg: str) -> Case:
    evidence: list[dict[str, Any]] = [{"kind": "node-cmd", "name": "dmesg.txt", "text": dmesg}]
    return synthetic_case("x-nvrc", evidence, healthy=False,
                          cluster={"gpu_node": {"gpu": "NVIDIA H100 PCIe", "gpus": 1}})


def test_nvrc_guessing_over_an_unknown_value_is_the_runtime_s_configuration() -> None:
    assert top_pair(_node(ROUTINE + GUESS + ATTACH)) == ("container-runtime", "error_config_invalid")


@pytest.mark.parametrize("dmesg", [
    ROUTINE,
    ROUTINE + "[    3.860050] NVRC::query_cc_mode[1]: CC mode for BDF 0000:02:00.0 (via BAR0): on (0x1)\n",
    # another program's guess in the same log is not NVRC's
    "[    2.100000] acpi: unknown value 0x3 for _OSC, assuming off\n",
])
def test_routine_nvrc_lines_and_other_guesses_say_nothing_against_the_runtime(dmesg: str) -> None:
    top = top_pair(_node(dmesg))
    assert top is None or top[0] != "container-runtime", top
