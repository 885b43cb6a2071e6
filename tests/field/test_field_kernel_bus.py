"""The kernel's PCIe AER reports about a GPU (checks/kernel_bus.py): an uncorrectable error
whose recovery reaches the GPU (the AER driver naming it by its bound driver) took the GPU
off its link, fatal at once, non-fatal where the GPU could not recover; corrected errors
and other devices' errors are no GPU failure."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import top_pair


def _case(text: str) -> Case:
    raw = {"id": "x-kernel-bus", "source": "https://example.org/x", "title": "t", "platform": "generic",
           "cluster": {"driver_mode": "host"},
           "evidence": [{"kind": "node-cmd", "name": "dmesg.txt", "text": text}],
           "expect": {"healthy": False}}
    return msgspec.convert(raw, Case)


def _healthy(text: str) -> Any:
    return top_pair(_case(text)) is None


#: wilicc/gpu-burn#1: a fatal Surprise Down on the Tesla's root port; the AER driver's
#: broadcast reaches the GPU, whose driver has no AER handler, and the GPU falls off the bus.
GPU_BURN_1 = (
    "[74889.542031] pcieport 0000:00:02.0: AER: Uncorrected (Fatal) error received: id=0010\n"
    "[74889.542044] pcieport 0000:00:02.0: PCIe Bus Error: severity=Uncorrected (Fatal), "
    "type=Transaction Layer, id=0010(Receiver ID)\n"
    "[74889.542125] pcieport 0000:00:02.0:   device [8086:6f04] error status/mask=00000020/00000000\n"
    "[74889.542184] pcieport 0000:00:02.0:    [ 5] Surprise Down Error    (First)\n"
    "[74889.542234] pcieport 0000:00:02.0: broadcast error_detected message\n"
    "[74889.542239] nvidia 0000:02:00.0: device has no AER-aware driver\n")

#: NVIDIA/open-gpu-kernel-modules#1229: a non-fatal Completion Timeout on an eGPU's link that
#: the GPU cannot recover from (nv_pci_driver registers no error handlers).
OPEN_GPU_1229 = (
    "pcieport 0000:00:01.2: AER: Uncorrectable (Non-Fatal) error received from 0000:63:00.0\n"
    "snd_hda_intel 0000:63:00.1: PCIe Bus Error: Uncorrectable (Non-Fatal), type=Transaction Layer\n"
    "nvidia 0000:63:00.0: AER: can't recover (no error_detected callback)\n"
    "pcieport 0000:62:00.0: AER: device recovery failed\n")

#: pop-os/pop#3363: corrected Data Link Layer errors on a root port: the link's own retries.
CORRECTED = (
    "Sep 19 16:18:02 bubz kernel: [68183.615790] pcieport 0000:00:03.1: AER: Correctable error message "
    "received from 0000:00:00.0\n"
    "Sep 19 16:18:02 bubz kernel: [68183.615810] pcieport 0000:00:03.1: PCIe Bus Error: "
    "severity=Correctable, type=Data Link Layer, (Transmitter ID)\n"
    "Sep 19 16:18:02 bubz kernel: [68183.615826] pcieport 0000:00:03.1:    [12] Timeout               \n")

#: minisforum-docs/MS-02-Ultra#10: an uncorrectable non-fatal error whose failed recovery
#: names a USB controller and a Thunderbolt bridge, no GPU.
OTHER_DEVICES = (
    "Sep 22 09:59:09 pve kernel: xhci_hcd 0000:97:00.0: AER: can't recover (no error_detected callback)\n"
    "Sep 22 09:59:09 pve kernel: pcieport 0000:80:1b.4: AER: device recovery failed\n"
    "Sep 22 09:59:09 pve kernel: pcieport 0000:80:1b.4: PCIe Bus Error: severity=Uncorrectable (Non-Fatal), "
    "type=Transaction Layer, (Receiver ID)\n"
    "Sep 22 09:59:09 pve kernel: thunderbolt 0000:84:00.0: AER: can't recover (no error_detected callback)\n")

#: DualCoder/vgpu_unlock#114: a fatal error on a root port whose lines, as pasted, name no
#: device below it: nothing says the GPU is the one off the link.
UNNAMED = ("pcieport 0000:00:01.1: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, "
           "(Receiver ID)\n"
           "pcieport 0000:00:01.1:  device [8086:6f03] error status/mask=00000020/00000000\n")


def test_a_fatal_error_whose_recovery_reaches_the_gpu_is_the_gpu_s() -> None:
    assert top_pair(_case(GPU_BURN_1)) == ("gpu-hardware", "error_device")


def test_a_non_fatal_error_the_gpu_cannot_recover_from_is_the_gpu_s() -> None:
    assert top_pair(_case(OPEN_GPU_1229)) == ("gpu-hardware", "error_device")


#: The same error where the GPU's driver recovers it: the kernel's lines then say so.
RECOVERED = (
    "pcieport 0000:00:01.2: AER: Uncorrectable (Non-Fatal) error received from 0000:63:00.0\n"
    "nvidia 0000:63:00.0: PCIe Bus Error: severity=Uncorrectable (Non-Fatal), type=Transaction Layer\n"
    "pcieport 0000:62:00.0: AER: device recovery successful\n")


def test_a_non_fatal_error_the_gpu_recovers_from_is_no_failure() -> None:
    assert _healthy(RECOVERED)


def test_corrected_errors_stay_healthy() -> None:
    assert _healthy(CORRECTED)


def test_other_devices_errors_are_not_the_gpu_stack_s() -> None:
    assert _healthy(OTHER_DEVICES)


def test_a_fatal_error_that_names_no_gpu_is_not_read() -> None:
    assert _healthy(UNNAMED)
