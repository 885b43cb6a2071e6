"""Installing and loading the NVIDIA kernel driver: nvidia-installer's words (the GPU Operator's
driver container runs it, and a host install keeps its log), the kernel module loader's, and the
module's own load-time lines. Each names the driver (or, for a GPU the PCI core could not give
the module, the GPU hardware); the lines every working driver prints stay silent, and so do the
resource manager's assertions whose status only says a call does not apply here."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from case import Case
from scoreboard import top_pair

from gpunode.explain import explain_lines


def _case(*evidence: dict[str, Any]) -> Case:
    raw = {"id": "x-driver-install", "source": "https://example.org/x", "title": "t", "platform": "generic",
           "evidence": list(evidence), "expect": {"healthy": False}}
    return msgspec.convert(raw, Case)


def _dmesg(text: str) -> dict[str, Any]:
    return {"kind": "node-cmd", "name": "dmesg.txt", "text": text}


def _driver_log(text: str) -> dict[str, Any]:
    """The driver container's log of its last (crashed) run."""
    return {"kind": "log", "component": "driver", "container": "nvidia-driver-ctr", "previous": True,
            "text": text}


# --- the kernel module's own lines -----------------------------------------------------------

#: A working driver's load, as NVIDIA/open-gpu-kernel-modules#514 pasted it (the GPU served
#: NVENC-less work; the bug was elsewhere), and a laptop's chipset notice under a driver that
#: works (NVIDIA/open-gpu-kernel-modules#421: "Things seem to work fine").
HEALTHY_LOAD = (
    "[   46.709608] nvidia: loading out-of-tree module taints kernel.\n"
    "[   46.716312] nvidia: module verification failed: signature and/or required key missing - "
    "tainting kernel\n"
    "[   46.783886] nvidia-nvlink: Nvlink Core is being initialized, major device number 234\n"
    "[   46.886820] NVRM: loading NVIDIA UNIX Open Kernel Module for aarch64  550.78  Release Build  "
    "(portage@localhost)  Mon May 13 22:21:32 CEST 2024\n"
    "[   46.953482] nvidia-uvm: Loaded the UVM driver, major device number 510.\n"
    "[   48.722406] nvidia-modeset: Loading NVIDIA UNIX Open Kernel Mode Setting Driver for aarch64\n"
    "[    1.924873] NVRM objClInitPcieChipset: *** Chipset Setup Function Error!\n"
)

#: NVIDIA/nvtrust#54: an H100 that nvidia-smi served after boot with this line in the kernel log
#: (its later loss was an FSP timeout, read by its own lines); and the same status in the
#: assertion form of nvassert.c's nvAssertOkFailedNoLog (NVIDIA/open-gpu-kernel-modules
#: src/nvidia/src/libraries/utils/nvassert.c).
NOT_SUPPORTED = (
    "[   87.352832] NVRM: nvCheckOkFailedNoLog: Check failed: Call not supported [NV_ERR_NOT_SUPPORTED] "
    "(0x00000056) returned from pEntry->pCallback(pGpu, pEntry->pCallbackParam) @ kernel_fifo.c:3021\n",
    "[   87.352840] NVRM: nvAssertOkFailedNoLog: Assertion failed: Call not supported [NV_ERR_NOT_SUPPORTED] "
    "(0x00000056) returned from pRmApi->Control(pRmApi, hClient, hSubdevice, cmd, &params, sizeof(params)) "
    "@ kern_bus_ctrl.c:123\n",
)


def test_a_working_driver_s_load_lines_stay_silent() -> None:
    assert top_pair(_case(_dmesg(HEALTHY_LOAD))) is None


@pytest.mark.parametrize("line", NOT_SUPPORTED)
def test_an_assertion_that_a_call_is_not_supported_here_is_routine(line: str) -> None:
    assert top_pair(_case(_dmesg(HEALTHY_LOAD + line))) is None


def test_an_assertion_that_the_gpu_is_lost_names_the_gpu() -> None:
    # NVIDIA/open-gpu-kernel-modules#688: a DGX Station A100 GPU that fell off the bus.
    line = ("Feb 17 08:00:34 abggdna-DGX-Station-A100 kernel: NVRM: nvAssertOkFailedNoLog: Assertion "
            "failed: GPU lost from the bus [NV_ERR_GPU_IS_LOST] (0x0000000F) returned from rmStatus @ "
            "kernel_ce_gv100.c:106\n")
    assert top_pair(_case(_dmesg(line))) == ("gpu-hardware", "error_device")


@pytest.mark.parametrize("line", [
    # NVIDIA/nvtrust#19: the unified-memory module's channel assertion in a confidential-computing
    # guest whose GPU work then failed.
    "[  210.501234] nvidia-uvm: uvm_channel.c:1334 write_ctrl_gpfifo[pid:510] Assert failed, condition "
    "status == NV_OK not true\n",
    # the NVLink core inside nvidia.ko failing to come up (kernel-open/nvidia/nvlink_linux.c)
    "[    3.104211] nvidia-nvlink: Failed to initialize driver : -12\n",
])
def test_the_driver_s_other_modules_failing_name_the_driver(line: str) -> None:
    assert top_pair(_case(_dmesg(line))) == ("driver", "error_unclassified")


def test_a_module_built_for_another_kernel_is_a_module_load_failure() -> None:
    # https://bugs.launchpad.net/ubuntu/+source/gcc-4.8/+bug/1750937 (a retpoline kernel refusing a
    # module its older gcc built; GoogleCloudPlatform/container-engine-accelerators#58 met it on
    # GKE's Ubuntu installer): the loader's vermagic check, Exec format error to modprobe.
    line = ("[    2.923582] nvidia: version magic '3.13.0-161-generic SMP mod_unload modversions ' should be "
            "'3.13.0-161-generic SMP mod_unload modversions retpoline '\n")
    assert top_pair(_case(_dmesg(line))) == ("driver", "error_module_load")


# --- nvidia-installer in the driver container ----------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    # Bumblebee-Project/Bumblebee#925: the installer finds no build tree for the running kernel.
    ("ERROR: Unable to find the kernel source tree for the currently running kernel.  Please make "
     "sure you have installed the\n       kernel source files for your kernel and that they are "
     "properly configured; on Red Hat Linux systems, for example, be\n",
     ("driver", "kernel_headers_missing")),
    # microsoft/WSL#4326: the path given has no kernel headers.
    ("ERROR: The kernel header file '/mnt/c/Windows/System32/lxss/tools/include/linux/kernel.h' does "
     "not exist.  The most likely reason for this is that the kernel source path "
     "'/mnt/c/Windows/System32/lxss/tools' is incorrect.\n",
     ("driver", "kernel_headers_missing")),
    # Bumblebee-Project/Bumblebee#657 (the installer's log) and
    # GoogleCloudPlatform/compute-gpu-installation#15 (kbuild's stop): compiler and kernel disagree.
    ("-> Performing CC sanity check with CC=\"/usr/bin/cc\".\n-> The CC version check failed:\n",
     ("driver", "gcc_mismatch")),
    ("*** Failed CC version check. Bailing out! ***\n", ("driver", "gcc_mismatch")),
    # NVIDIA/cuda-samples#286: a loaded nvidia-drm, then the installer's default answer, abort.
    ("WARNING: An NVIDIA kernel module 'nvidia-drm' appears to be already loaded in your kernel.  This "
     "may be because it is in use (for example, by an X server, a CUDA program, or the NVIDIA "
     "Persistence Daemon), but this may also happen if your kernel was configured without support for "
     "module unloading.\n"
     "-> Would you like to continue installation and skip the sanity checks? (Answer: Abort installation)\n"
     "ERROR: Installation has failed.  Please see the file '/var/log/nvidia-installer.log' for details.\n",
     ("driver", "host_driver_conflict")),
])
def test_the_installer_s_words_name_the_cause(text: str, expected: tuple[str, str]) -> None:
    assert top_pair(_case(_driver_log(text))) == expected


@pytest.mark.parametrize(("flavour", "expected"), [
    ("proprietary", "open_kernel_modules_required"),
    ("open", "open_kernel_modules_unsupported_gpu"),
])
def test_the_installer_s_word_that_the_flavour_does_not_fit_the_gpus(flavour: str, expected: str) -> None:
    # NVIDIA/nvidia-installer kernel.c: the flavour it was told to install does not drive the GPUs.
    text = (f"WARNING: The '{flavour}' kernel modules are incompatible with the GPU(s) detected on this "
            "system. They will be installed anyway, but are not expected to work.\n")
    assert top_pair(_case(_driver_log(text))) == ("driver", expected)


def test_the_driver_container_s_healthy_run_stays_silent() -> None:
    # NVIDIA/gpu-operator#8's opening steps, as every run prints them, ending in the wait.
    text = ("Resolving Linux kernel version...\nProceeding with Linux kernel version 4.15.0-66-generic\n"
            "Installing Linux kernel headers...\nCompiling NVIDIA driver kernel modules...\n"
            "Installing NVIDIA driver kernel modules...\n\nWARNING: The nvidia-drm module will not be "
            "installed. As a result, DRM-KMS\n         will not function with this installation of the "
            "NVIDIA driver.\n\nLoading NVIDIA driver kernel modules...\nDone, now waiting for signal\n")
    log = {"kind": "log", "component": "driver", "container": "nvidia-driver-ctr", "text": text}
    assert top_pair(_case(log)) is None


def test_explain_reads_the_routine_assertion_as_nothing_and_the_loader_s_refusal_as_a_load_failure() -> None:
    routine = explain_lines([NOT_SUPPORTED[0].strip()])
    assert not routine.matches and routine.decisive is None
    refused = explain_lines(["[    2.923582] nvidia: version magic '3.13.0-161-generic SMP mod_unload "
                             "modversions ' should be '3.13.0-161-generic SMP mod_unload modversions "
                             "retpoline '"])
    assert refused.decisive_class == "error_module_load"
