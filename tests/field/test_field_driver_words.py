"""The driver's own vocabulary where it meets a reader: nvidia-smi's words for NVML's return code
in a GPU job's log, NVML's and DCGM's return codes that name the GPU or the driver
(src/gpunode/data/job_errors/driver.toml), and the module loader's and DKMS's words in the driver
container's log (src/gpunode/data/causes/layer1.toml).

- nvidia-smi prints NVML's error string after "Unable to determine the device handle for GPU
  <bus id>: "; GPU is lost is NVML_ERROR_GPU_IS_LOST (15), the GPU gone from the bus:
  https://github.com/JosephKJ/OWOD/issues/81 (a training job, then nvidia-smi),
  https://github.com/NVIDIA/k8s-device-plugin/issues/231 (the node's nvidia-smi -a).
  NVML's return codes: https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceEnumvs.html.
- DCGM's return codes and their texts: https://github.com/NVIDIA/DCGM/blob/master/dcgmlib/dcgm_structs.h.
- modprobe's "Required key not available" (ENOKEY): the kernel enforces module signatures and the
  module carries none it trusts (Secure Boot): https://en.opensuse.org/SDB:NVIDIA_drivers (the
  nvidia line); the same strerror for other modules, https://github.com/lwfinger/rtl8723au/issues/58,
  https://github.com/AdnanHodzic/displaylink-debian/issues/7.
- DKMS's "Consult /var/lib/dkms/nvidia/<version>/build/make.log": the NVIDIA module did not build
  for the kernel: https://github.com/NVIDIA/open-gpu-kernel-modules/issues/526,
  https://github.com/NVIDIA/open-gpu-kernel-modules/issues/558, https://github.com/pop-os/pop/issues/3811,
  https://github.com/Bumblebee-Project/Bumblebee/issues/811 (Debian's nvidia-current); another
  module's failed build (https://github.com/xanmod/linux/issues/46) is not the driver's.
"""

from __future__ import annotations

from typing import Any

import pytest
from case import Case, gpu_job_case, synthetic_case
from scoreboard import top_pair

from gpunode.job_errors import job_error

#: https://github.com/JosephKJ/OWOD/issues/81 and https://github.com/NVIDIA/k8s-device-plugin/issues/231
SMI_GPU_LOST = [
    "Unable to determine the device handle for GPU 0000:02:00.0: GPU is lost. Reboot the system to recover "
    "this GPU",
    "Unable to determine the device handle for GPU 0000:C1:00.0: GPU is lost.  Reboot the system to recover "
    "this GPU",
]

#: https://en.opensuse.org/SDB:NVIDIA_drivers
UNSIGNED = "modprobe: ERROR: could not insert 'nvidia': Required key not available"

#: open-gpu-kernel-modules#526 and #558, pop-os/pop#3811, Bumblebee#811
DKMS_FAILED = [
    "Error! Bad return status for module build on kernel: 6.4.1-zen1-1-zen (x86_64)\n"
    "Consult /var/lib/dkms/nvidia/390.157/build/make.log for more information.",
    "Error! Bad return status for module build on kernel: 6.5.2-arch1-1 (x86_64)\n"
    "Consult /var/lib/dkms/nvidia/390.157/build/make.log for more information.",
    "ERROR (dkms apport): kernel package linux-headers-6.17.9-76061709-generic is not supported\n"
    "Error! Bad return status for module build on kernel: 6.17.9-76061709-generic (x86_64)\n"
    "Consult /var/lib/dkms/nvidia/580.119.02/build/make.log for more information.",
    "Error! Bad return status for module build on kernel: 4.8.2-towo.1-siduction-amd64 (x86_64)\n"
    "Consult /var/lib/dkms/nvidia-current/367.44/build/make.log for more information.",
]

#: xanmod/linux#46: two other modules' failed builds on the same node
OTHER_DKMS = ("==> dkms install bbswitch/0.8 -k 5.6.2-xanmod1-1-xanmod\n"
              "Error! Bad return status for module build on kernel: 5.6.2-xanmod1-1-xanmod (x86_64)\n"
              "Consult /var/lib/dkms/bbswitch/0.8/build/make.log for more information.")


def _driver_log(text: str) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "log", "component": "driver", "container": "nvidia-driver-ctr", "previous": True,
         "text": text},
        {"kind": "pod-state", "component": "driver", "container": "nvidia-driver-ctr",
         "state": "CrashLoopBackOff"}]
    return synthetic_case("x-driver-words", evidence, cluster={"driver_mode": "operator"})


@pytest.mark.parametrize("line", SMI_GPU_LOST)
def test_nvidia_smi_s_gpu_lost_in_a_job_s_log_is_the_gpu_off_the_bus(line: str) -> None:
    found = job_error(line)
    assert found is not None and found.id == "nvml-gpu-is-lost"
    assert top_pair(gpu_job_case("x-smi-lost", line)) == ("gpu-hardware", "gpu_fallen_off_bus")


def test_nvidia_smi_s_unknown_error_is_shared_and_not_read_from_a_job_s_log() -> None:
    """NVML's Unknown Error (999) is several layers' answer: a job's line alone says nothing."""
    line = "Unable to determine the device handle for GPU0000:A1:00.0: Unknown Error"
    assert job_error(line) is None


@pytest.mark.parametrize(("line", "pair"), [
    ("pynvml.nvml.NVMLError_ResetRequired: GPU requires restart",
     ("gpu-hardware", "xid_154_recovery_action")),
    ("Error: unable to get GPU info: DCGM_ST_GPU_IS_LOST", ("gpu-hardware", "gpu_fallen_off_bus")),
    ("Error: The installed driver version is insufficient for this API",
     ("driver", "error_version_mismatch")),
])
def test_nvml_and_dcgm_codes_that_name_the_gpu_or_the_driver(line: str, pair: tuple[str, str]) -> None:
    assert top_pair(gpu_job_case("x-mgmt-code", line)) == pair


@pytest.mark.parametrize("line", [
    "Error: unable to establish a connection to the specified host: localhost\n"
    "Error: Unable to connect to host engine. Host engine connection invalid/disconnected.",
    "Not collecting CPU metrics; Error retrieving DCGM MIG hierarchy: This request is serviced by a "
    "module of DCGM that is not currently loaded",
    "pynvml.nvml.NVMLError_NotSupported: Not Supported",
])
def test_dcgm_and_nvml_codes_left_out_are_not_read(line: str) -> None:
    assert all(job_error(text) is None for text in line.splitlines())


def test_an_unsigned_nvidia_module_refused_by_the_loader_is_secure_boot() -> None:
    assert top_pair(_driver_log(UNSIGNED)) == ("driver", "secure_boot_enabled")


@pytest.mark.parametrize("text", DKMS_FAILED)
def test_dkms_s_failed_build_of_the_nvidia_module_is_the_kernel_s_mismatch(text: str) -> None:
    assert top_pair(_driver_log(text)) == ("driver", "driver_kernel_incompatible")


def test_another_module_s_failed_dkms_build_is_not_the_driver_s() -> None:
    top = top_pair(_driver_log(OTHER_DKMS))
    assert top is None or top[1] != "driver_kernel_incompatible", top


#: The resource manager's words for NV_ERR_INSUFFICIENT_POWER at adapter init
#: (NVIDIA/open-gpu-kernel-modules src/nvidia/arch/nvalloc/unix/src/osinit.c), as a node's
#: kernel log holds them with the adapter failure after them
UNPOWERED = ("[    5.118] NVRM: GPU 0000:13:00.0: GPU does not have the necessary power cables connected.\n"
             "[    5.119] NVRM: GPU 0000:13:00.0: RmInitAdapter failed! (0x24:0x1c:1447)\n"
             "[    5.119] NVRM: GPU 0000:13:00.0: rm_init_adapter failed, device minor number 0\n")
#: A healthy load: the taint notices, NVLink core, the module banners
LOADED = ("[    1.901] nvidia: loading out-of-tree module taints kernel.\n"
          "[    1.902] nvidia: module verification failed: signature and/or required key missing - "
          "tainting kernel\n"
          "[    1.950] nvidia-nvlink: Nvlink Core is being initialized, major device number 235\n"
          "[    1.960] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15  "
          "Tue Mar  5 22:23:56 UTC 2024\n"
          "[    2.100] nvidia-uvm: Loaded the UVM driver, major device number 511.\n")


def _dmesg(text: str) -> Case:
    return synthetic_case("x-driver-dmesg", [{"kind": "node-cmd", "name": "dmesg.txt", "text": text}])


def test_a_gpu_without_its_power_cables_is_the_hardware_s_not_the_driver_s() -> None:
    top = top_pair(_dmesg(UNPOWERED))
    assert top is not None and top[0] == "gpu-hardware", top


def test_a_healthy_module_load_stays_healthy() -> None:
    assert top_pair(_dmesg(LOADED)) is None
