"""Lines that state a failure by their form, without an error word, are quoted by ``explain``.

Where a pasted text has no line that reads as an error, ``explain`` still answers with the
line whose form says something failed (``gpunode.decisive.stated_line``). The reading changes no
severity: a diagnosis never takes these lines as errors on their own.

An IOMMU's fault event on a device is the device's DMA refused by the IOMMU (class
error_device): AMD-Vi's "Event logged [IO_PAGE_FAULT ...]" (https://github.com/pop-os/pop/issues/853,
https://github.com/ggml-org/llama.cpp/issues/21908, the split form of
https://github.com/pcengines/apu2-documentation/issues/240) and Intel VT-d's "DMAR: [DMA Read]
Request device [..] fault addr" (https://github.com/opencomputeproject/OpenNetworkLinux/pull/897,
https://github.com/thesofproject/sof-test/issues/744). The same prefixes in the IOMMU's start-up
lines and its rate-limit note are no failure.

A device plugin's enumeration that found no device says the plugin has nothing to advertise,
whatever level it logged it at (class error_not_found where no catalogued cause names it):
https://github.com/NVIDIA/k8s-device-plugin/issues/414,
https://github.com/AliyunContainerService/gpushare-device-plugin/issues/49,
https://github.com/Mellanox/k8s-rdma-shared-dev-plugin/issues/44 (and
https://github.com/hustcat/k8s-rdma-device-plugin/issues/19, klog at info). A device that was
found (https://github.com/Mellanox/k8s-rdma-shared-dev-plugin/issues/192's discovery lines), or a
rescan that found no new one, is no failure.

The dynamic loader's fatal line, "<program>: error while loading shared libraries: <library>:
<why>", says the program never started, whatever the reason it gives after the library or where
a paste cuts it: https://github.com/NVIDIA/libnvidia-container/issues/2,
https://github.com/DFHack/dfhack/issues/164 ("wrong ELF class: ELFCLASS64", no error word),
https://github.com/libbpf/bpftool/issues/132, https://github.com/mentebinaria/readpe/issues/130.
The words quoted in advice, or in a line about something else, are no failure.

A JVM exception named by its fully qualified class, then its message, is a thrown failure though
the line that reports it is a warning (Spark's "WARN TaskSetManager: Lost task ...: <exception>"):
https://github.com/NVIDIA/cudf-spark/issues/11183, https://github.com/NVIDIA/cudf-spark/issues/5242,
https://github.com/NVIDIA/cudf-spark-jni/issues/1468. A class named in passing, or a stack frame,
is no failure."""

from __future__ import annotations

import pytest

from gpunode.decisive import severity, stated_line
from gpunode.explain import explain_lines
from gpunode.kb import load_kb

_IOMMU_FAULTS = [
    # pop-os/pop#853 (an NVMe disk)
    "[   10.919607] nvme 0000:01:00.0: AMD-Vi: Event logged [IO_PAGE_FAULT domain=0x0000 "
    "address=0xfc189000 flags=0x0000]",
    # ggml-org/llama.cpp#21908 (an NVIDIA GPU)
    "[ 7460.483919] nvidia 0000:81:00.0: AMD-Vi: Event logged [IO_PAGE_FAULT domain=0x001c "
    "address=0xd0826240 flags=0x0020]",
    # pcengines/apu2-documentation#240 (older kernels print the event over two lines)
    "kernel: [  221.565929] IO_PAGE_FAULT device=05:00.0 domain=0x0012 address=0x00000000ff6101b0 "
    "flags=0x0070]",
    # opencomputeproject/OpenNetworkLinux#897
    "[10672.868940] DMAR: [DMA Write] Request device [00:12.0] fault addr 0 [fault reason 05] "
    "PTE Write access is not set",
    # thesofproject/sof-test#744
    "[    0.960486] kernel: DMAR: [DMA Read NO_PASID] Request device [0x00:0x02.0] fault addr "
    "0x7c346000 [fault reason 0x06] PTE Read access is not set",
]

_IOMMU_HEALTHY = [
    "[    0.512345] pci 0000:00:00.2: AMD-Vi: Found IOMMU cap 0x40",
    "[    0.512400] AMD-Vi: Interrupt remapping enabled",
    "[    0.101234] DMAR: IOMMU enabled",
    "[    0.201234] DMAR: DRHD base: 0x000000fed90000 flags: 0x0",
    "[   10.919601] amd_iommu_report_page_fault: 96 callbacks suppressed",
]


@pytest.mark.parametrize("line", _IOMMU_FAULTS)
def test_an_iommu_fault_event_is_the_decisive_line_of_the_device_class(line: str) -> None:
    found = explain_lines(["[    0.1] Linux version 6.8.0", line, "[ 12.0] usb 1-1: new device"], load_kb())
    assert found.decisive is not None and found.decisive.text == line
    assert found.decisive_class == "error_device"


@pytest.mark.parametrize("line", _IOMMU_FAULTS)
def test_an_iommu_fault_event_changes_no_severity(line: str) -> None:
    assert severity(line) == 0


@pytest.mark.parametrize("line", _IOMMU_HEALTHY)
def test_the_iommu_start_up_lines_are_no_failure(line: str) -> None:
    found = explain_lines([line], load_kb())
    assert found.decisive is None and found.decisive_class is None


_NONE_FOUND = [
    # NVIDIA/k8s-device-plugin#414
    "2023/06/12 09:21:25 No devices found. Waiting indefinitely.",
    # AliyunContainerService/gpushare-device-plugin#49 (title)
    "No Devices found. Waiting indefinitely.",
    # Mellanox/k8s-rdma-shared-dev-plugin#44
    "2023/09/02 06:23:37 Warning: no Rdma Devices were found for resource hpc_shared_devices_e",
    # hustcat/k8s-rdma-device-plugin#19 (klog at info)
    "I0520 10:03:24.137327   30847 main.go:39] No devices found.",
]

_SOME_FOUND = [
    # Mellanox/k8s-rdma-shared-dev-plugin#192
    "2025/07/26 20:29:31 DiscoverHostDevices(): device found: 0000:16:00.0\t02          \t"
    "Mellanox Technolo...",
    "I0520 10:03:24.137327   30847 main.go:45] No new devices found, rescanning in 30s",
    "2023/06/12 09:21:25 Found 8 devices.",
]


@pytest.mark.parametrize("line", _NONE_FOUND)
def test_an_enumeration_that_found_no_device_is_the_decisive_line(line: str) -> None:
    found = explain_lines(["2023/06/12 09:21:24 Starting plugin", line], load_kb())
    assert found.decisive is not None and found.decisive.text == line
    assert found.decisive_class is not None


def test_an_uncatalogued_enumeration_that_found_none_is_not_found() -> None:
    found = explain_lines([_NONE_FOUND[-1]], load_kb())
    assert found.decisive_class == "error_not_found"


@pytest.mark.parametrize("line", _SOME_FOUND)
def test_a_device_found_or_no_new_device_is_no_failure(line: str) -> None:
    found = explain_lines([line], load_kb())
    assert found.decisive is None and found.decisive_class is None


_LOADER_FATAL = [
    # DFHack/dfhack#164: the library is there, of the wrong class
    "hack/dfhack-run: error while loading shared libraries: libz.so.1: wrong ELF class: ELFCLASS64",
    # the same line as a paste that cuts it after the library's first letters
    "/usr/local/bin/nvidia-container-cli: error while loading shared libraries: libe",
    # NVIDIA/libnvidia-container#2, libbpf/bpftool#132, mentebinaria/readpe#130
    "nvidia-container-cli: error while loading shared libraries: libnvidia-container.so.1: cannot open "
    "shared object file: No such file or directory",
    "bpftool: error while loading shared libraries: libLLVM-17.so: cannot open shared object file: No "
    "such file or directory",
    "peres: error while loading shared libraries: libpe.so.1: cannot open shared object file: No such "
    "file or directory.",
]

_LOADER_ASIDE = [
    'If you see "error while loading shared libraries", run ldconfig',
    "ldconfig: rebuilt the cache after an error while loading shared libraries",
]


@pytest.mark.parametrize("line", _LOADER_FATAL)
def test_the_loaders_fatal_line_is_the_decisive_line(line: str) -> None:
    found = explain_lines(["+ exec nvidia-container-cli info", line], load_kb())
    assert found.decisive is not None and found.decisive.text == line
    assert found.decisive_class is not None


@pytest.mark.parametrize("line", _LOADER_FATAL[:2])
def test_the_loaders_fatal_line_without_an_error_word_changes_no_severity(line: str) -> None:
    assert severity(line) == 0


@pytest.mark.parametrize("line", _LOADER_ASIDE)
def test_the_loaders_words_in_advice_are_no_failure(line: str) -> None:
    found = explain_lines([line], load_kb())
    assert found.decisive is None and found.decisive_class is None


_JVM_EXCEPTIONS = [
    # NVIDIA/cudf-spark#11183, #5242, NVIDIA/cudf-spark-jni#1468
    "ai.rapids.cudf.CudfException: parallel_for failed: cudaErrorInvalidDevice: invalid device ordinal",
    "ai.rapids.cudf.CudfException: RMM failure at: /home/jenkins/agent/workspace/cpp/build/_deps/rmm-src/"
    "include/rmm/mr/device/cuda_async_memory_resource.hpp:67: cudaMallocAsync not supported",
    "ai.rapids.cudf.CudaFatalException: CUDA error at: /home/jenkins/agent/workspace/target/"
    "libcudf-install/include/rmm/device_uvector.hpp:318: cudaErrorIllegalAddress an illegal memory access",
]

_JVM_ASIDE = [
    "22/04/13 14:39:05 INFO Registered handler for java.lang.IllegalStateException",
    "  at ai.rapids.cudf.Rmm.initialize(Rmm.java:119)",
]


@pytest.mark.parametrize("line", _JVM_EXCEPTIONS)
def test_a_jvm_exception_line_states_a_failure(line: str) -> None:
    found = stated_line(["22/09/19 07:13:29 INFO Executor: Running task", line])
    assert found is not None and found.line == line


def test_a_jvm_exception_in_a_warning_is_the_decisive_line() -> None:
    line = ("22/09/19 07:13:29 WARN TaskSetManager: Lost task 1.0 in stage 5.0 (TID 15) (10.0.0.5 "
            "executor 0): org.openucx.jucx.UcxException: No resources are available to initiate the "
            "operation")
    found = explain_lines([line], load_kb())
    assert found.decisive is not None and found.decisive.text == line
    assert found.decisive_class is not None


@pytest.mark.parametrize("line", _JVM_ASIDE)
def test_a_jvm_class_named_in_passing_is_no_failure(line: str) -> None:
    found = explain_lines([line], load_kb())
    assert found.decisive is None and found.decisive_class is None


_STATED_ELSEWHERE = [
    # the audit record of a core dump, kernel form (borgbase/vorta#455's shape, a stack binary in
    # exe=) and auditd/journal form (systemd/systemd#8895); checks/crashes.py reads both
    'audit: type=1701 audit(1638380233.899:35): auid=4294967295 uid=0 gid=0 ses=4294967295 pid=6460 '
    'comm="nvc:[driver]" exe="/usr/bin/nvidia-container-cli" sig=11 res=1',
    'audit[1530]: ANOM_ABEND auid=1000 uid=1000 gid=1000 ses=2 pid=1530 comm="gnome-shell" '
    'exe="/usr/bin/gnome-shell" sig=5 res=1',
    # gVisor's nvproxy refusing a call (google/gvisor#9846, #10272 forms; checks/runsc_log.py)
    "W0710 21:04:41.244107  1128432 frontend.go:497] [  24:  24] nvproxy: unknown control command "
    "0x20803801 (paramsSize=1928)",
    "W0301 10:00:00.000000       1 frontend.go:300] nvproxy: unknown frontend ioctl 0x4b (cmd=0xc020464b)",
]

_NOT_STATED = [
    # seccomp's old record of a denied call (sig=0) is no crash (NVIDIA/nvidia-docker#1456)
    'audit: type=1701 audit(1600000000.000:1): auid=4294967295 uid=0 gid=0 ses=4294967295 pid=99 '
    'comm="ldconfig" exe="/sbin/ldconfig.real" sig=0 arch=c000003e syscall=2 compat=0 ip=0x7f code=0x0',
    "I0710 21:04:41.244107  1128432 frontend.go:497] nvproxy: control command 0x20803801 done",
]


@pytest.mark.parametrize("line", _STATED_ELSEWHERE)
def test_a_crash_record_or_a_refused_sandbox_call_is_the_decisive_line(line: str) -> None:
    found = explain_lines([line], load_kb())
    assert found.decisive is not None and found.decisive.text == line
    assert found.decisive_class is not None
    assert severity(line) == 0  # a stated failure for explain, no new severity word


@pytest.mark.parametrize("line", _NOT_STATED)
def test_a_denied_call_or_a_served_command_is_no_stated_failure(line: str) -> None:
    assert stated_line([line]) is None


#: A library that looked for a driver and found none, and FFmpeg's NVENC loader stating the
#: driver release it needs (class not found / version mismatch): PyTorch's c10/cuda initialization
#: (dmlc/gluon-nlp#1512 as a warning, kubeflow/notebooks#68, kcosta42/VQGAN-CLIP-Docker#1 raised);
#: the Vulkan loader's error before VK_ERROR_INCOMPATIBLE_DRIVER (NixOS/nixpkgs#529876, the
#: nvidia/container-images vulkan report); FFmpeg's libavcodec/nvenc.c (livepeer/go-livepeer#1106,
#: truecharts#1409's Tdarr, a Synology NVENC report). The Vulkan loader's line is also a GPU job's
#: words for the container's driver files (data/job_errors/graphics_video.toml), whose class,
#: the file state, explain quotes.
_FOUND_NONE_OR_NEEDS = [
    ("/usr/local/lib/python3.6/site-packages/torch/cuda/__init__.py:52: UserWarning: CUDA "
     "initialization: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU "
     "and installed a driver from http://www.nvidia.com/Download/index.aspx", "error_not_found"),
    ("ERROR: [Loader Message] Code 0 : vkCreateInstance: Found no drivers!", "error_file_state"),
    ("Found no drivers!", "error_file_state"),
    ("The minimum required Nvidia driver for nvenc is 520.56.06 or newer", "error_version_mismatch"),
    ("Minimum required Nvidia driver is 570.0 or newer", "error_version_mismatch"),
]

_FOUND_NOTHING_WRONG = [
    "INFO: found no errors in 3 files",
    "apt: found no updates",
    "The minimum required version is 3",
    "Driver 570.133.20 is newer than the minimum required driver",
]


@pytest.mark.parametrize(("line", "cls"), _FOUND_NONE_OR_NEEDS)
def test_a_library_that_found_no_driver_or_needs_a_newer_one_is_decisive(line: str, cls: str) -> None:
    found = explain_lines([line], load_kb())
    assert found.decisive is not None and found.decisive.text == line
    assert found.decisive_class == cls


@pytest.mark.parametrize("line", _FOUND_NOTHING_WRONG)
def test_found_nothing_wrong_or_a_requirement_met_is_no_stated_failure(line: str) -> None:
    assert stated_line([line]) is None
