"""The host's IOMMU refusing a GPU's DMA (checks/iommu_faults.py): an IOMMU fault event for a
GPU of the node (its bound driver nvidia, or its bus address among the node's GPUs) is the
kernel's device error, in AMD-Vi's and Intel VT-d's forms; the same events for an integrated
display controller or a NIC, and the IOMMU's boot notices, are no GPU stack's."""

from __future__ import annotations

import msgspec
from case import Case
from scoreboard import top_pair

from gpunode.checks.iommu_faults import gpu_fault
from gpunode.explain import explain_lines


def _case(text: str) -> Case:
    raw = {"id": "x-iommu-fault", "source": "https://example.org/x", "title": "t", "platform": "generic",
           "cluster": {"driver_mode": "host"},
           "evidence": [{"kind": "node-cmd", "name": "dmesg.txt", "text": text}],
           "expect": {"healthy": False}}
    return msgspec.convert(raw, Case)


#: NVIDIA/cuda-samples#48 (the field case's report): the p2p samples on an AMD host, the
#: nvidia driver bound to the faulting device.
CUDA_SAMPLES_48 = ("Sep 21 09:59:59 runtime kernel: nvidia 0000:07:00.0: AMD-Vi: Event logged "
                   "[IO_PAGE_FAULT domain=0x0003 address=0x80000040 flags=0x0020]\n")

#: Intel VT-d's form (Marvell-switching/sonic-marvell-binaries#84's line, "iommu=off" the other
#: fix named there; tbennun/mgbench#8: a multi-GPU benchmark faults this way once intel_iommu=on),
#: on a device the nvidia driver is bound to earlier in the log.
VTD = ("[    4.812345] nvidia 0000:06:00.0: enabling device (0000 -> 0003)\n"
       "[  815.089014] DMAR: [DMA Read] Request device [06:00.0] PASID ffffffff fault addr 1a5e12000 "
       "[fault reason 06] PTE Read access is not set\n"
       "[  827.262614] DMAR: DRHD: handling fault status reg 402\n")

#: Newer VT-d's NO_PASID form (tenstorrent/tt-umd#1814's line) on the GPU the driver names.
VTD_NO_PASID = ("[    5.100000] NVRM: GPU at PCI:0000:03:00: GPU-4a28de72-2645-de9a-eb35-a394cef3f4da\n"
                "[ 6611.206544] DMAR: [DMA Read NO_PASID] Request device [03:00.0] fault addr 0x100000 "
                "[fault reason 0x71] SM: Present bit in first-level paging entry is clear\n")

#: Older kernels' AMD-Vi form with the device inside the event (DIGImend/digimend-kernel-drivers#136's
#: line), on a GPU the driver names.
AMD_DEVICE_FIELD = ("[    1.000000] NVRM: GPU at PCI:0000:20:00: GPU-7277883e-ce1e-3b6e-6cc1-6d52e80cdb86\n"
                    "[    1.116842] AMD-Vi: Event logged [IO_PAGE_FAULT device=20:00.0 domain=0x0003 "
                    "address=0x000000f4001eef80 flags=0x0010]\n")

#: Look-alikes. thesofproject/sof-test#744 and #749: VT-d faults at boot for the integrated
#: display controller (00:02.0), filtered there as noise; the node's NVIDIA GPU is elsewhere.
IGPU = ("[    0.900000] nvidia 0000:01:00.0: enabling device (0000 -> 0003)\n"
        "[    0.960486] kernel: DMAR: [DMA Read NO_PASID] Request device [0x00:0x02.0] fault addr 0x7c346000 "
        "[fault reason 0x06] PTE Read access is not set\n")
#: Dasharo/dasharo-issues#1134: a Wi-Fi card's DMA faults (the bound driver ath10k_pci).
WIFI = ("[   40.182570] ath10k_pci 0000:01:00.0: AMD-Vi: Event logged [IO_PAGE_FAULT domain=0x000d "
        "address=0xcff49550 flags=0x0070]\n")
#: A healthy node's IOMMU notices at boot (intel/intel-gpu-i915-backports#192's log).
BOOT = ("<6>[    0.657924] pci 0000:07:00.0: Adding to iommu group 19\n"
        "<6>[    0.663017] AMD-Vi: Interrupt remapping enabled\n"
        "[    0.700000] nvidia 0000:07:00.0: enabling device (0000 -> 0003)\n")


def test_an_iommu_fault_on_a_gpu_is_the_kernel_s_device_error() -> None:
    for text in (CUDA_SAMPLES_48, VTD, VTD_NO_PASID, AMD_DEVICE_FIELD):
        assert top_pair(_case(text)) == ("kernel", "error_device"), text


def test_faults_of_other_devices_and_boot_notices_stay_quiet() -> None:
    for text in (IGPU, WIFI, BOOT):
        assert top_pair(_case(text)) is None, text


def test_the_device_is_read_from_each_form() -> None:
    gpus = {"07:00.0", "20:00"}
    assert gpu_fault(CUDA_SAMPLES_48.strip(), set())
    assert gpu_fault(AMD_DEVICE_FIELD.splitlines()[1], gpus)
    assert not gpu_fault(WIFI.strip(), gpus)
    assert not gpu_fault("DMAR: [DMA Read] Request device [00:02.0] PASID ffffffff fault addr 9c000000 "
                         "[fault reason 06] PTE Read access is not set", gpus)


def test_explain_gives_the_same_class_on_the_pasted_line() -> None:
    explanation = explain_lines(CUDA_SAMPLES_48.splitlines())
    assert explanation.decisive_class == "error_device"
