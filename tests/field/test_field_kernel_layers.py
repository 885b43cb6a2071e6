"""The kernel log names the layer: an NVRM adapter init failure ("RmInitAdapter failed")
with nothing else from the driver is the GPU's (its BARs, the BIOS's Above 4G decoding,
its seating), and a missing GPU while the driver serves the others; the same failure
after the driver's own words (the open module refusing a GeForce) is the driver's."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from case import Case
from scoreboard import top_pair

from gpunode.checks import kernel


def _case(*evidence: dict[str, Any]) -> Case:
    raw = {"id": "x-kernel-layers", "source": "https://example.org/x", "title": "t", "platform": "generic",
           "evidence": list(evidence), "expect": {"healthy": False}}
    return msgspec.convert(raw, Case)


def _dmesg(text: str) -> dict[str, Any]:
    return {"kind": "node-cmd", "name": "dmesg.txt", "text": text}


#: NVIDIA/open-gpu-kernel-modules#862 (an RTX 5090 with Resizable BAR and Above 4G off).
ADAPTER = ("Jul 01 22:55:07 gpu kernel: NVRM: GPU 0000:01:00.0: rm_init_adapter failed, "
           "device minor number 0\n"
           "Jul 01 22:55:07 gpu kernel: NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x22:0x56:884)\n")


def test_an_adapter_that_fails_to_initialise_is_the_gpu_s_fault() -> None:
    smi = {"kind": "node-cmd", "name": "nvidia-smi.txt", "text": "No devices were found\n"}
    case = _case(_dmesg(ADAPTER), smi)
    assert top_pair(case) == ("gpu-hardware", "error_device")


def test_one_adapter_failing_while_the_driver_serves_the_others_is_a_missing_gpu() -> None:
    # microsoft/pai#4344: nvidia-smi lists three of four GPUs; the kernel cannot init the fourth.
    case = _case(_dmesg("[   39.147720] NVRM: RmInitAdapter failed! (0x26:0xffff:1127)\n"
                        "[   39.148462] NVRM: rm_init_adapter failed for device bearing minor number 0\n"))
    assert top_pair(case) == ("gpu-hardware", "gpu_missing")


def test_the_driver_s_own_refusal_before_the_adapter_failure_keeps_it_the_driver_s() -> None:
    # NVIDIA/open-gpu-kernel-modules#230: the open module of that release drives data-center GPUs only.
    case = _case(_dmesg(
        "[    3.513141] NVRM: Open nvidia.ko is only ready for use on Data Center GPUs.\n"
        "[    3.513144] NVRM: To force use of Open nvidia.ko on other GPUs, see the\n"
        "[    3.824916] NVRM: GPU 0000:04:00.0: RmInitAdapter failed! (0x63:0x0:1905)\n"
        "[    3.827920] NVRM: GPU 0000:04:00.0: rm_init_adapter failed, device minor number 0\n"))
    assert top_pair(case) == ("driver", "open_kernel_modules_unsupported_gpu")


#: cupy/cupy#6310: 510.39.01 reloaded in place on a T4; the adapter fails at RM's firmware stage.
FIRMWARE_STAGE = ("[  238.521491] NVRM: GPU 0000:00:04.0: RmInitAdapter failed! (0x63:0x55:2344)\n"
                  "[  238.522786] NVRM: GPU 0000:00:04.0: rm_init_adapter failed, device minor number 0\n")


def test_an_adapter_failing_at_rm_s_firmware_stage_is_the_driver_s() -> None:
    assert top_pair(_case(_dmesg(FIRMWARE_STAGE))) == ("driver", "error_device")
    smi = {"kind": "node-cmd", "name": "nvidia-smi.txt", "text": "No devices were found\n"}
    # with nvidia-smi finding no device, the driver's own cause for that answer may be named
    assert top_pair(_case(_dmesg(FIRMWARE_STAGE), smi))[0] == "driver"  # type: ignore[index]


def test_an_adapter_failing_at_the_gpu_s_own_stage_stays_the_gpu_s() -> None:
    # look-alike: the same triple at a GPU bring-up stage (0x25, state load) names no firmware
    gpu_stage = FIRMWARE_STAGE.replace("(0x63:0x55:2344)", "(0x25:0xffff:1249)")
    assert top_pair(_case(_dmesg(gpu_stage)))[0] == "gpu-hardware"  # type: ignore[index]


def _smi(text: str) -> dict[str, Any]:
    return {"kind": "node-cmd", "name": "nvidia-smi.txt", "text": text}


def test_nvidia_smi_that_cannot_reach_the_driver_says_the_driver_is_not_loaded() -> None:
    # awslabs/amazon-eks-ami#1748: the kernel module did not load; nvidia-smi prints NVML's
    # Driver Not Loaded in its own words.
    case = _case(_smi("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
                      "Make sure that the latest NVIDIA driver is installed and running.\n"))
    assert top_pair(case) == ("driver", "driver_not_loaded")


def test_nvidia_smi_s_nvml_error_is_read_for_its_class() -> None:
    # Azure/AKS#4870: an unlicensed GRID driver on A10 VMs; NVML answers Unknown Error.
    assert top_pair(_case(_smi("Failed to initialize NVML: Unknown Error\n"))) == ("driver", "error_device")


def test_a_workload_that_finds_no_nvidia_device_node_names_the_driver() -> None:
    # k8sp/sextant#397: docker cannot add /dev/nvidia0 to a GPU pod; the driver never created it.
    event = {"kind": "event", "object": {"kind": "Pod", "name": "gpu-worker", "namespace": "default"},
             "type": "Warning", "reason": "Failed",
             "message": 'Failed to start container with docker id aa5a0319488f with error: Error response '
                        'from daemon: {"message":"linux runtime spec devices: error gathering device '
                        'information while adding custom device \\"/dev/nvidia0\\": lstat /dev/nvidia0: '
                        'no such file or directory"}'}
    assert top_pair(_case(event)) == ("driver", "error_device")


def test_a_driver_that_probed_no_gpu_did_not_load() -> None:
    """beclab/Olares#3963: on Ubuntu 26.04's 7.0 kernel nova_core binds the GPU first, and
    nvidia.ko says only that it probed nothing; its init then fails, so the module is not loaded."""
    text = ("[  201.910514] NVRM: GPU 0000:01:00.0 is already bound to NovaCore.\n"
            "[  201.913648] NVRM: No NVIDIA devices probed.\n")
    assert top_pair(_case(_dmesg(text))) == ("driver", "error_module_load")


#: NVIDIA/aicr#1858: one H100 of an AKS ND96isr H100 v5 node refused as unsupported (as pasted).
_REFUSED = ("NVRM: The NVIDIA GPU 000a:00:00.0 (PCI ID: 10de:{device}) installed in this system\n"
            "      is not supported by the NVIDIA 580.126.09 driver release.\n"
            "NVRM: The NVIDIA probe routine failed for 1 device(s).\n")


def test_a_gpu_refused_as_unsupported_beside_served_gpus_of_its_id_is_missing() -> None:
    """The driver serves H100s (PCI id 2330) on this node, so its refusal of one more 2330 as
    unsupported is spurious: that GPU is at fault. A refused id the driver serves nowhere here
    is a GPU its release does not know, the driver's matter."""
    assert top_pair(_case(_dmesg(_REFUSED.format(device="2330")))) == ("gpu-hardware", "gpu_missing")
    assert top_pair(_case(_dmesg(_REFUSED.format(device="2bb4"))))[0] == "driver"


#: NVIDIA/open-gpu-kernel-modules#116: the 515 open module prints ``NVRM`` and the function's
#: name with no colon between; its GSP-RM init failure is the driver's word, as with the colon.
GSP_RM_NO_COLON = ("[    3.596579] NVRM kgspInitRm_IMPL: missing NVDEC0 engine, cannot initialize GSP-RM\n"
                   "[    3.596583] NVRM RmInitAdapter: Cannot initialize GSP firmware RM\n"
                   "[    3.596745] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x63:0x56:1689)\n"
                   "[    3.597360] NVRM: GPU 0000:01:00.0: rm_init_adapter failed, device minor number 0\n")


@pytest.mark.parametrize("text", [
    GSP_RM_NO_COLON,
    # NVIDIA/open-gpu-kernel-modules#789 (550, an RTX 3090): GSP-RM init fails, then the adapter.
    "[  903.609564] NVRM: RmInitAdapter: Cannot initialize GSP firmware RM\n"
    "[  903.610907] NVRM: GPU 0000:98:00.0: RmInitAdapter failed! (0x62:0x65:1792)\n"
    "[  903.611884] NVRM: GPU 0000:98:00.0: rm_init_adapter failed, device minor number 0\n",
    # NVIDIA/open-gpu-kernel-modules#965 (580, an RTX 3080 on arm64): the FWSEC preparation fails.
    "[   10.842114] NVRM: s_prepareForFwsec_TU102: failed to prepare interface data for FWSEC "
    "cmd 0x15: 0x25\n"
    "[   10.842171] NVRM: RmInitAdapter: Cannot initialize GSP firmware RM\n"
    "[   10.843941] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x62:0x25:2015)\n"
    "[   10.845693] NVRM: GPU 0000:01:00.0: rm_init_adapter failed, device minor number 0\n",
])
def test_a_gsp_rm_init_failure_before_the_adapter_failure_is_the_driver_s(text: str) -> None:
    case = _case(_dmesg(text), _smi("No devices were found\n"))
    assert top_pair(case)[0] == "driver"


def test_the_prefix_without_colon_is_the_driver_s_only_before_a_function_name() -> None:
    # open-gpu-kernel-modules discussion #490: the 515 open module's "NVRM RmInitAdapter: ..."
    assert kernel._NVRM.search("NVRM RmInitAdapter: Failed to load gsp_log_*.bin, no GSP-RM logs "
                               "will be printed (non-fatal)")
    assert kernel._NVRM.search("NVRM version: NVIDIA UNIX x86_64 Kernel Module  515.43.04") is None


def test_a_version_line_before_an_adapter_failure_leaves_it_the_gpu_s() -> None:
    # look-alike: "NVRM version:" is no driver word; the adapter failure alone stays the GPU's.
    case = _case(_dmesg("[    3.1] NVRM version: NVIDIA UNIX x86_64 Kernel Module  515.43.04\n" + ADAPTER),
                 _smi("No devices were found\n"))
    assert top_pair(case) == ("gpu-hardware", "error_device")


@pytest.mark.parametrize("line", [
    # open-gpu-kernel-modules discussion #490 (515, the colon-less prefix) and a 535 node's form
    "[    4.2] NVRM RmInitAdapter: Failed to load gsp_log_*.bin, no GSP-RM logs will be printed "
    "(non-fatal)\n",
    "[    4.2] NVRM: RmInitAdapter: Failed to load gsp_log_tu10x.bin, no GSP-RM logs will be printed "
    "(non-fatal)\n",
])
def test_a_driver_line_that_calls_itself_non_fatal_leaves_a_serving_node_healthy(line: str) -> None:
    # look-alike of the failures above: the driver's own "(non-fatal)" notice on a node whose
    # driver answers is no failure, whichever prefix form it has.
    smi = "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2 |\n"
    case = _case(_dmesg("[    3.1] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.104.05\n" + line),
                 _smi(smi))
    assert top_pair(case) is None


#: The kernel's firmware loader names the file the driver asked for; ENOENT (-2) for its GSP
#: image under nvidia/<driver version>/ is the firmware missing. Public lines:
#: https://github.com/NVIDIA/open-gpu-kernel-modules/issues/639 (550, gsp_ga10x.bin),
#: https://github.com/NVIDIA/open-gpu-kernel-modules/issues/263 (515, gsp.bin),
#: https://github.com/endlessm/eos-meta/pull/811 (555, gsp_tu10x.bin).
_SERVING = ("[    3.1] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  550.76  Release Build\n",
            "| NVIDIA-SMI 550.76   Driver Version: 550.76   CUDA Version: 12.4 |\n")


@pytest.mark.parametrize("line", [
    "[   12.036183] nvidia 0000:01:00.0: Direct firmware load for nvidia/550.76/gsp_ga10x.bin failed "
    "with error -2\n",
    "[ 1637.847759] nvidia 0000:01:00.0: Direct firmware load for nvidia/515.43.04/gsp.bin failed with "
    "error -2\n",
    "nvidia 0000:01:00.0: Direct firmware load for nvidia/555.58.02/gsp_tu10x.bin failed with error -2\n",
])
def test_the_firmware_loader_not_finding_the_driver_s_gsp_image_is_gsp_firmware_missing(line: str) -> None:
    case = _case(_dmesg(_SERVING[0] + line), _smi(_SERVING[1]))
    assert top_pair(case) == ("driver", "gsp_firmware_missing")


@pytest.mark.parametrize("line", [
    # the GSP-RM log image is optional: the driver goes on "(non-fatal)" without it
    "[   12.1] nvidia 0000:01:00.0: Direct firmware load for nvidia/550.76/gsp_log_ga10x.bin failed "
    "with error -2\n",
    # another driver's firmware under the chip's name (nouveau on a Tegra X1,
    # https://github.com/denysvitali/linux-on-pixel-c/issues/2): no driver version, no GSP image
    "[    4.366069] nouveau 57000000.gpu: Direct firmware load for nvidia/gm20b/gr/gpccs_inst.bin "
    "failed with error -2\n",
])
def test_a_firmware_file_that_is_not_the_driver_s_gsp_image_leaves_a_serving_node_healthy(line: str) -> None:
    assert top_pair(_case(_dmesg(_SERVING[0] + line), _smi(_SERVING[1]))) is None


#: Scotchman0/NVIDIA_Drivers README: an Ubuntu-built driver on a passed-through GTX 1650 under
#: ESXi oopses inside the adapter's init; NVIDIA's own .run build of the driver cures it.
OOPS_IN_INIT = ("[   13.732645] NVRM: GPU 0000:0b:00.0: RmInitAdapter failed! (0x26:0x56:1474)\n"
                "[   13.732697] BUG: unable to handle page fault for address: 0000000000004628\n"
                "[   13.732784] NVRM: GPU 0000:0b:00.0: rm_init_adapter failed, device minor number 0\n")


def test_an_oops_inside_the_adapter_failure_is_the_driver_s() -> None:
    assert top_pair(_case(_dmesg(OOPS_IN_INIT))) == ("driver", "error_device")


def test_an_oops_far_from_the_adapter_failure_leaves_it_the_gpu_s() -> None:
    far = ("[    2.100000] BUG: unable to handle page fault for address: 0000000000004628\n"
           + "".join(f"[    3.{n:06d}] usb 1-{n}: new high-speed USB device number {n} using xhci_hcd\n"
                     for n in range(6))
           + "[   13.732645] NVRM: GPU 0000:0b:00.0: RmInitAdapter failed! (0x26:0x56:1474)\n"
             "[   13.732784] NVRM: GPU 0000:0b:00.0: rm_init_adapter failed, device minor number 0\n")
    assert top_pair(_case(_dmesg(far)))[0] == "gpu-hardware"  # type: ignore[index]
