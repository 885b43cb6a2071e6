"""nouveau bound to the GPU, read from the kernel's own log: the lines its driver core prefixes
with the module and the device ("nouveau 0000:01:00.0: DRM: VRAM: 2048 MiB",
NixOS/nixpkgs#29514; "nouveau 0000:01:00.0: gr: init failed, -110",
clearlinux/distribution#867) and the bracketed form of older kernels ("nouveau  [   VBIOS]
[0000:01:00.0] BIT signature found", Bumblebee-Project/Bumblebee#628). Where the NVIDIA driver
cannot talk to the GPUs, that is the driver's nouveau_loaded; where nvidia-smi shows the GPUs
working, the lines do not make the node fail."""

from __future__ import annotations

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

NO_DRIVER = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that "
             "the latest NVIDIA driver is installed and running.\n")

DMESG = {
    "driver-core": "[    4.108211] nouveau 0000:3b:00.0: DRM: VRAM: 81920 MiB\n"
                   "[    4.210031] nouveau 0000:3b:00.0: gr: init failed, -110\n",
    "bracketed": "[ 8885.699359] nouveau  [   VBIOS][0000:01:00.0] BIT signature found\n",
}


def _node(name: str, dmesg: str, smi: str | None) -> Case:
    evidence = [{"kind": "node-cmd", "name": "dmesg.txt", "text": dmesg}]
    if smi is not None:
        evidence.append({"kind": "node-cmd", "name": "nvidia-smi.txt", "text": smi})
    return synthetic_case(f"nouveau-{name}", evidence, healthy=smi is None,
                          cluster={"driver_mode": "host"})


@pytest.mark.parametrize("name", sorted(DMESG))
def test_nouveau_bound_where_the_driver_cannot_talk_to_the_gpus(name: str) -> None:
    assert top_pair(_node(name, DMESG[name], NO_DRIVER)) == ("driver", "nouveau_loaded")


def test_nouveau_words_without_a_bound_device_are_not_read_so() -> None:
    dmesg = ("[    1.000000] Module nouveau is blacklisted\n"
             "[    2.000000] nvidia: loading out-of-tree module\n")
    assert top_pair(_node("blacklisted", dmesg, NO_DRIVER)) != ("driver", "nouveau_loaded")


def test_nouveau_lines_on_a_node_whose_gpus_work_stay_healthy() -> None:
    assert top_pair(_node("working", DMESG["driver-core"], None)) is None
