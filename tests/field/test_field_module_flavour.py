"""The flavour of nvidia.ko against the GPU's generation (gpunode.checks.module_flavour).

NVIDIA's driver installation guide ("Kernel Modules"): the proprietary flavour is required
for Maxwell, Pascal and Volta, the open modules are for Turing and newer only; NVIDIA's
announcement of the move to the open modules: Grace Hopper and Blackwell must use the open
modules. A misfit flavour on a node whose driver serves no GPU (RM's adapter init failing,
nvidia-smi finding no devices) is the driver's cause, not the GPU's. Look-alikes: the same
lines with a flavour that fits the GPU stay the GPU's or the driver's generic reading, and a
misfit on a node whose driver serves its GPU says nothing."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

ADAPTER = "NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x22:0x56:897)\n"
NO_DEVICES = "No devices were found\n"


def _case(gpu: str, flavour: str, *, dmesg: str | None = None, smi: str | None = None) -> Any:
    evidence: list[dict[str, Any]] = []
    if dmesg is not None:
        evidence.append({"kind": "node-cmd", "name": "dmesg.txt", "text": dmesg})
    if smi is not None:
        evidence.append({"kind": "node-cmd", "name": "nvidia-smi.txt", "text": smi})
    cluster = {"driver_mode": "host", "gpu_node": {"gpus": 1, "gpu": gpu, "kernel_module": flavour}}
    return synthetic_case("x-module-flavour", evidence, platform="ubuntu", healthy=False, cluster=cluster)


def test_proprietary_module_on_blackwell_needs_the_open_one() -> None:
    for gpu in ("NVIDIA B200", "NVIDIA RTX PRO 6000 Blackwell Server Edition", "NVIDIA GeForce RTX 5090"):
        assert top_pair(_case(gpu, "proprietary", dmesg=ADAPTER, smi=NO_DEVICES)) == (
            "driver", "open_kernel_modules_required")


def test_open_module_on_a_gpu_without_gsp_needs_the_proprietary_one() -> None:
    for gpu in ("Tesla P100-PCIE-16GB", "Tesla V100-SXM2-16GB", "Tesla P40"):
        assert top_pair(_case(gpu, "open", smi=NO_DEVICES)) == (
            "driver", "open_kernel_modules_unsupported_gpu")


def test_a_fitting_flavour_keeps_the_generic_reading() -> None:
    """The same adapter failure with the proprietary module on an H100, or the open one on a
    Blackwell: the GPU's own failure; a P100 on the proprietary module finding no devices."""
    assert top_pair(_case("NVIDIA H100 80GB HBM3", "proprietary", dmesg=ADAPTER, smi=NO_DEVICES)) == (
        "gpu-hardware", "error_device")
    assert top_pair(_case("NVIDIA B200", "open", dmesg=ADAPTER, smi=NO_DEVICES)) == (
        "gpu-hardware", "error_device")
    assert top_pair(_case("Tesla P100-PCIE-16GB", "proprietary", smi=NO_DEVICES))[1] != (  # type: ignore[index]
        "open_kernel_modules_unsupported_gpu")


def test_a_misfit_whose_gpu_is_served_says_nothing() -> None:
    """No line shows the GPU unserved: the flavour alone is no failure."""
    assert top_pair(_case("Tesla T4", "open")) is None
    pair = top_pair(_case("Tesla P100-PCIE-16GB", "open"))
    assert pair is None or pair[1] != "open_kernel_modules_unsupported_gpu"
