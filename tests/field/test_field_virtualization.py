"""A virtualised GPU node's words (data/job_errors/virtualization.toml, checks/vm_kernel.py).

An NVIDIA vGPU guest's licensing client failing to lease a licence ("Failed to acquire license
from <server> (Info: <product> - Error: <why>)", the FastAPI-DLS FAQ at
GreenDamTan/fastapi-dls_mirror) and nvidia-smi -q's "License Status : Unlicensed (Restricted)"
(NVML's restricted state, the vGPU licensing guide) name the guest's driver install; the guest
driver and the host's vGPU manager of branches that do not overlap ("Incompatible Guest/Host
drivers ... Disabling vGPU.", "NVRM_RPC: SetGuestSystemInfo: The host version (x.y) is too old.",
open-gpu-kernel-modules src/nvidia/src/kernel/vgpu/rpc.c) are the driver's version mismatch.
The host kernel's VFIO refusing a group without interrupt remapping (drivers/vfio/
vfio_iommu_type1.c; NixOS/nixpkgs#6264 on the allow_unsafe_interrupts workaround) is the
kernel's; the PCI core giving up on a GPU after a reset or power-up ("not ready 65535ms after
resume; giving up", "Unable to change power state from D3cold to D0, device inaccessible",
bryansteiner/gpu-passthrough-tutorial#39) is the GPU's. What a healthy VM prints stays silent.
"""

from __future__ import annotations

from typing import Any

from case import Case, gpu_job_case, synthetic_case
from scoreboard import top_pair

from gpunode.checks.vm_kernel import gpu_not_back
from gpunode.decisive import decisive_line
from gpunode.job_errors import job_error
from gpunode.kb import load_kb

#: The FastAPI-DLS FAQ's heading line (a client token older than its hour), with a server.
DLS_FAQ = ("nvidia-gridd: Failed to acquire license from 10.0.0.5 (Info: NVIDIA RTX Virtual "
           "Workstation - Error: The allowed time to process response has expired)")
#: NVIDIA's cloud licence service refusing a product the licence pool does not hold.
NO_POOL = ("Tue Jan 21 19:54:14 2025:<1>:Failed to acquire license from api.cls.licensing.nvidia.com "
           "(Info: NVIDIA RTX Virtual Workstation - Error: No pool features found for : NVIDIA RTX "
           "Virtual Workstation)")
RESTRICTED = ("    vGPU Software Licensed Product\n"
              "        Product Name                      : NVIDIA Virtual Compute Server\n"
              "        License Status                    : Unlicensed (Restricted)\n")
#: A licensed guest: gridd's progress and nvidia-smi -q's licence section.
LICENSED = ("nvidia-gridd: Started (16224)\n"
            "nvidia-gridd: Service provider detection complete.\n"
            "nvidia-gridd: Acquiring license. (Info: license.nvidia.space; NVIDIA Virtual Compute Server)\n"
            "nvidia-gridd: License acquired successfully. (Info: license.nvidia.space, NVIDIA Virtual "
            "Compute Server; Expiry: 2023-1-29 22:3:0 GMT)\n"
            "    vGPU Software Licensed Product\n"
            "        License Status                    : Licensed (Expiry: 2023-1-14 12:59:52 GMT)\n"
            "        License Status                    : Unlicensed (Unrestricted)\n")
HOST_MGR = ("nvidia-vgpu-mgr[2121698]: error: vmiop_log: (0x0): Incompatible Guest/Host drivers: Guest "
            "VGX version is newer than the maximum version supported by the Host. Disabling vGPU.")
GUEST_TOO_NEW = ("[    5.100000] NVRM: NVRM_RPC: SetGuestSystemInfo: The host version (17.0) is too old.\n"
                 "[    5.100001] NVRM: NVRM_RPC: SetGuestSystemInfo: Minimum required host version "
                 "is 18.0.\n")
GUEST_RETRY = ("[    5.100000] NVRM: NVRM_RPC: SetGuestSystemInfo: Guest VGX version (18.0) is newer than "
               "the host VGX version (17.0)\n"
               "[    5.100001] NVRM: NVRM_RPC: SetGuestSystemInfo: Retrying with the VGX version "
               "requested by the host.\n")
IRQ_REMAP = ('[  120.000000] vfio_iommu_type1_attach_group: No interrupt remapping support.  Use the module '
             'param "allow_unsafe_interrupts" to enable VFIO IOMMU support on this platform\n')
#: bryansteiner/gpu-passthrough-tutorial#39: the GPU never came back from D3cold.
RESUME = ("[   26.485239] nvidia 0000:01:00.0: not ready 8191ms after resume; waiting\n"
          "[   87.412701] nvidia 0000:01:00.0: not ready 65535ms after resume; giving up\n"
          "[   87.412759] nvidia 0000:01:00.0: Unable to change power state from D3cold to D0, "
          "device inaccessible\n")
VFIO_FLR = "[  300.000000] vfio-pci 0000:41:00.0: not ready 65535ms after FLR; giving up\n"
#: Progress the PCI core prints on a device that does come back, and a NIC's own failure.
PROGRESS = ("[  498.270899] vfio-pci 0000:00:02.0: not ready 1023ms after FLR; waiting\n"
            "[  499.000000] vfio-pci 0000:00:02.0: ready 1500ms after FLR\n"
            "[  500.000000] ixgbe 0000:05:00.0: not ready 65535ms after FLR; giving up\n")
#: What a healthy passthrough host and WSL2 VM print.
ROUTINE = ("[    1.000000] VFIO - User Level meta-driver version: 0.3\n"
           "[    5.300000] vfio-pci 0000:41:00.0: vfio_ecap_init: hiding ecap 0x19@0x900\n"
           "[    5.300001] vfio_pci: add [10de:2236[ffffffff:ffffffff]] class 0x000000/00000000\n"
           "[    0.412345] misc dxg: dxgk: dxgkio_query_adapter_info: Ioctl failed: -22\n")
VM = {"kind": "node-labels", "labels": {"nvidia.com/gpu.workload.config": "vm-passthrough"}}


def _dmesg(text: str, *extra: dict[str, Any]) -> Case:
    return synthetic_case("x-vm-kernel", [*extra, {"kind": "node-cmd", "name": "dmesg.txt", "text": text}],
                          healthy=False)


def test_licence_lease_failures_name_the_driver() -> None:
    """gridd's failure to lease, in the FAQ's and the cloud service's words, and nvidia-smi's
    restricted state, read in a job's log to the driver's device class (as CUDA's not-licensed
    error is)."""
    for line in (DLS_FAQ, NO_POOL):
        found = job_error(line)
        assert found is not None and found.id == "vgpu-license-acquire-failed"
        assert top_pair(gpu_job_case("x-gridd", line + "\n")) == ("driver", "error_device")
    assert top_pair(gpu_job_case("x-smi", RESTRICTED)) == ("driver", "error_device")


def test_guest_host_branches_apart_are_the_drivers_version_mismatch() -> None:
    """The host's vGPU manager's words in a log, the guest driver's in its kernel log."""
    assert top_pair(gpu_job_case("x-mgr", HOST_MGR + "\n")) == ("driver", "error_version_mismatch")
    assert top_pair(_dmesg(GUEST_TOO_NEW)) == ("driver", "error_version_mismatch")


def test_vfio_without_interrupt_remapping_is_the_kernels() -> None:
    assert top_pair(_dmesg(IRQ_REMAP)) == ("kernel", "error_permission_denied")


def test_explain_reads_the_kernel_lines_to_their_class() -> None:
    """The lines alone, as explain reads a case's decisive lines: their class."""
    kb = load_kb()
    for line, code in ((IRQ_REMAP, "error_permission_denied"), (RESUME.splitlines()[1], "error_device"),
                       (RESUME.splitlines()[2], "error_device")):
        found = decisive_line([line.strip()])
        cls = kb.line_class(found.message) if found is not None else None
        assert cls is not None and cls.code == code, line


def test_gpu_not_back_on_its_bus_is_the_gpus() -> None:
    """bryansteiner/gpu-passthrough-tutorial#39's lines; vfio-pci's where the node's GPUs go to VMs."""
    assert top_pair(_dmesg(RESUME)) == ("gpu-hardware", "error_device")
    assert top_pair(_dmesg(VFIO_FLR, VM)) == ("gpu-hardware", "error_device")
    assert gpu_not_back(VFIO_FLR, {"41:00.0"}, False)


def test_what_a_healthy_vm_prints_stays_silent() -> None:
    """A licensed guest, the handshake settling on the host's version, the PCI core's progress,
    a NIC's reset failure, vfio-pci's on a node whose GPUs serve containers, routine lines."""
    assert top_pair(gpu_job_case("x-licensed", LICENSED)) is None
    for case in (_dmesg(GUEST_RETRY), _dmesg(PROGRESS, VM), _dmesg(VFIO_FLR), _dmesg(ROUTINE, VM)):
        assert top_pair(case) is None
    assert not gpu_not_back(PROGRESS, set(), True)
