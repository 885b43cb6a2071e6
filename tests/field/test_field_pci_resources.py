"""The host kernel refusing a GPU's BAR (checks/pci_resources.py): "<driver> <bus>: BAR N: can't
reserve [mem ...]" (drivers/pci/pci.c, __pci_request_region) for a device the nvidia driver
binds, or vfio-pci binds on a node whose GPUs go to VMs, is the kernel's device error: the
host's boot framebuffer (efifb, simplefb/simpledrm) holds the region (harvester/pcidevices#81;
siderolabs/talos#14356; cosminmocan/vfio-single-amdgpu-passthrough#3). The kernel's boot
notices about bridge windows, and a refusal for another device, stay silent."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.checks.pci_resources import gpu_region_refused

#: siderolabs/talos#14356: simpledrm holds the boot GPU; vfio-pci cannot reserve its BAR 0.
TALOS = "vfio-pci 0000:c3:00.0: BAR 0: can't reserve [mem 0x2800000000-0x2fffffffff 64bit pref]\n"
#: cosminmocan/vfio-single-amdgpu-passthrough#3's line, with its timestamp.
SINGLE_GPU = ("[   44.702115] vfio-pci 0000:05:00.0: BAR 0: can't reserve "
              "[mem 0xd0000000-0xdfffffff 64bit pref]\n")
#: The same refusal where the nvidia driver binds the GPU.
NVIDIA = "[    3.101000] nvidia 0000:01:00.0: BAR 1: can’t reserve [mem 0xc0000000-0xcfffffff 64bit pref]\n"
#: Look-alikes: the kernel's boot-time bridge window notices (no driver, unused windows), and a
#: disk controller's refusal on a GPU node.
BOOT = ("[    0.412000] pci 0000:00:1c.0: BAR 13: failed to assign [io  size 0x1000]\n"
        "[    0.412100] pci 0000:00:1c.0: BAR 14: no space for [mem size 0x00200000]\n"
        "[    0.700000] pci 0000:01:00.0: BAR 1: assigned to efifb\n")
AHCI = "[    2.000000] ahci 0000:00:17.0: BAR 5: can't reserve [mem 0x92400000-0x924007ff]\n"
VM = {"kind": "node-labels", "labels": {"nvidia.com/gpu.workload.config": "vm-passthrough"}}


def _case(text: str, *extra: dict[str, Any]) -> Case:
    evidence = [*extra, {"kind": "node-cmd", "name": "dmesg.txt", "text": text}]
    return synthetic_case("x-pci-bar", evidence, healthy=False)


def test_vfio_bar_refused_on_a_vm_node_is_the_kernels() -> None:
    """siderolabs/talos#14356 and vfio-single-amdgpu-passthrough#3: vfio-pci cannot reserve
    the boot GPU's BAR on a node whose GPUs go to VMs."""
    for line in (TALOS, SINGLE_GPU):
        assert top_pair(_case(line, VM)) == ("kernel", "error_device")


def test_nvidia_bar_refused_is_the_kernels() -> None:
    """The nvidia driver's own refusal names the GPU without any other fact."""
    assert top_pair(_case(NVIDIA)) == ("kernel", "error_device")


def test_boot_notices_and_other_devices_stay_silent() -> None:
    """Bridge windows the kernel could not place at boot, efifb's assignment notice, a disk
    controller's refusal, and vfio-pci's on a node whose GPUs serve containers."""
    for text, extra in ((BOOT, VM), (AHCI, VM), (SINGLE_GPU, None)):
        case = _case(text, extra) if extra else _case(text)
        assert top_pair(case) is None or top_pair(case)[0] != "kernel"  # type: ignore[index]
    assert not gpu_region_refused(AHCI, set(), True)
    assert gpu_region_refused(SINGLE_GPU, {"05:00.0"}, False)
