"""The NVIDIA module's own report that its probe routine was not called for the GPUs, in the
words of the releases that name the drivers that take them first ("NVRM: nouveau, rivafb,
nvidiafb or rivatv / NVRM: was loaded and obtained ownership of the NVIDIA device(s)"): the
driver's nouveau_loaded (layer1.toml).

Sources: NVIDIA/open-gpu-kernel-modules kernel-open/nvidia/nv.c (nvidia_init_module: the
block printed when fewer devices were probed than the PCI bus holds, "another driver was
loaded" in current releases); the GPU Operator's troubleshooting guide (the nouveau driver
holding the GPU, blacklisted to fix). Look-alikes: the current releases' text, which names no
driver (vfio-pci for a VM's passthrough takes GPUs the same way), and a kernel log of a
module that probed its GPUs stay off nouveau."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

OLD = """\
[188549.976351] NVRM: The NVIDIA probe routine was not called for 3 device(s).
[188549.977053] NVRM: This can occur when a driver such as:
NVRM: nouveau, rivafb, nvidiafb or rivatv
NVRM: was loaded and obtained ownership of the NVIDIA device(s).
[188549.978961] NVRM: Try unloading the conflicting kernel module (and/or
NVRM: reconfigure your kernel without the conflicting
NVRM: driver(s)), then try loading the NVIDIA kernel module
NVRM: again.
"""
CURRENT = """\
[   12.101001] NVRM: The NVIDIA probe routine was not called for 1 device(s).
[   12.101002] NVRM: This can occur when another driver was loaded and
NVRM: obtained ownership of the NVIDIA device(s).
"""
PROBED = """\
[    5.201001] nvidia: loading out-of-tree module taints kernel.
[    5.301001] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024
"""
FAILED_SMI = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure "
              "that the latest NVIDIA driver is installed and running")


def _node(case_id: str, dmesg: str, smi: str | None = None) -> Any:
    evidence: list[dict[str, Any]] = [{"kind": "node-cmd", "name": "dmesg.txt", "text": dmesg}]
    if smi is not None:
        evidence.append({"kind": "node-cmd", "name": "nvidia-smi.txt", "text": smi + "\n"})
    return synthetic_case(case_id, evidence, cluster={"driver_mode": "host"})


def test_the_old_text_naming_nouveau_is_nouveau_loaded() -> None:
    assert top_pair(_node("x-probe-old", OLD, FAILED_SMI)) == ("driver", "nouveau_loaded")


def test_the_current_text_and_a_probed_module_are_not_nouveau() -> None:
    assert top_pair(_node("x-probe-current", CURRENT, FAILED_SMI)) != ("driver", "nouveau_loaded")
    assert top_pair(_node("x-probe-ok", PROBED)) is None
