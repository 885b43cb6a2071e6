"""General error formats that no class read before (issue 20: explain gives back a decisive
line and its class in at least 95 % of failure cases): a C tool's "program: file: message",
the kernel's segfault report and its oops module list, a program given an option it does not
know, a Python exception's last line, CUDA's and nvidia-smi's words for no GPU, a structured
line whose error field holds DNS's refusal, VFIO's group that is not viable. Each line is a
public one (address beside it); each has a healthy look-alike that must stay quiet."""

from __future__ import annotations

import pytest

from gpunode.decisive import message_of, severity
from gpunode.explain import explain_lines
from gpunode.kb import load_kb

KB = load_kb()


@pytest.mark.parametrize(
    ("line", "cls"),
    [
        # NVIDIA/aicr#1553: the oops hit while nvidia_uvm was being unloaded ("-" after its taint flags)
        ("Modules linked in: ... nvidia_uvm(OE-) nvidia(OE) ...", "error_module_load"),
        # NVIDIA/gpu-operator#1503: gzip's own error, "program: file: message"
        ("gzip: /lib/modules/5.14.0-570.19.1.el9_6.aarch64+64k/vmlinuz: not in gzip format",
         "error_file_state"),
        # NVIDIA/nvidia-container-toolkit#1101: the kernel's report of the CLI it killed
        ("[  182.001204] nvidia-containe[5657]: segfault at 0 ip 000070190de67398 sp 00007ffc29492650 "
         "error 4 in libnvidia-container.so.1.17.7[a398,70190de61000+15000] likely on CPU 6 "
         "(core 12, socket 0)",
         "error_unclassified"),
        # NVIDIA/nvidia-container-runtime#26: a hook newer than the CLI passes an option it lacks
        ("nvidia-container-cli configure: unrecognized option '--display'", "error_config_invalid"),
        # cobra's words for the same (k8s-device-plugin's and the operator's commands are cobra)
        ("Error: unknown flag: --mig-strategy", "error_config_invalid"),
        # defilantech/LLMKube#1424: PyTorch's exception, the last line of its traceback
        ("RuntimeError: The NVIDIA driver on your system is too old (found version 12040).",
         "error_version_mismatch"),
        # kubevirt/kubevirt#9617: CUDA's words, lowercase as the sample program prints them
        ("no cuda-capable device is detected", "error_device"),
        # kubernetes-sigs/dra-driver-nvidia-gpu#1191: VFIO refuses a group not wholly bound to it
        ("vfio group X is not viable, please ensure all devices within the iommu group are bound to "
         "their vfio bus driver", "error_device"),
        # open-telemetry/opentelemetry-collector-contrib#26481: the JSON fields of a zap line
        ('{"kind": "receiver", "name": "kubeletstats", "data_type": "metrics", "error": "Get '
         '\\"https://<#####>:10250/stats/summary\\": dial tcp: lookup <#####> on 100.64.0.10:53: '
         'no such host"}',
         "error_unreachable"),
        # NVIDIA/gpu-operator#1947: nvidia-smi with a driver loaded that took no GPU
        ("No devices were found", "error_unclassified"),
        # NVIDIA/gpu-operator#1251: GNU make's report of the kernel module build that failed
        # (the leading \b of the error words never let "*** [" match before)
        ("make[1]: *** [Makefile:1910: /usr/src/nvidia-550.127.08/kernel] Error 2", "error_unclassified"),
        ("make: *** [Makefile:89: modules] Error 2", "error_unclassified"),
        # Project-HAMi/volcano-vgpu-device-plugin#138: HAMi-core's errno as a number (2: ENOENT)
        ("Fail to open shrreg /tmp/vgpu/<uuid>.cache: errno=2", "error_file_state"),
        # the same format with EACCES and ENOSPC
        ("Fail to open shrreg /tmp/vgpu/<uuid>.cache: errno=13", "error_permission_denied"),
        ("Fail to open shrreg /tmp/vgpu/<uuid>.cache: errno=28", "error_resource_exhausted"),
        # Docker's CLI relaying its daemon's answer (moby client/errors.go), here a network
        # plugin's (Mellanox/docker-sriov-plugin#15, #7)
        ("Error response from daemon: NetworkDriver.CreateNetwork: SRIOV is disabled [ ibo1 ].",
         "error_unclassified"),
        ("docker: Error response from daemon: NetworkDriver.CreateNetwork: Fail to find physical port",
         "error_not_found"),
        # CUDA's text for error 46 and 3 as a job's check prints them (jmbeach/jade-hpc-gpu#73,
        # AUTOMATIC1111/stable-diffusion-webui#2986; IBM's note on 'cudaSuccess (3 vs. 0)')
        ("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCTensorRandom.cu line=25 error=46 : all "
         "CUDA-capable devices are busy or unavailable", "error_device"),
        ("RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable", "error_device"),
        ("cudaSuccess (3 vs. 0) initialization error", "error_device"),
    ],
)
def test_general_error_formats_give_a_decisive_line_and_class(line: str, cls: str) -> None:
    assert severity(line) >= 1
    found = explain_lines([line], KB)
    assert found.decisive is not None and found.decisive_class == cls


@pytest.mark.parametrize(
    "line",
    [
        # an oops or warning trace whose modules are all loaded and live
        "Modules linked in: nvidia_uvm(OE) nvidia(OE) xt_conntrack nf_nat",
        # a C tool's report, not an error: a ratio or OK after the file
        "gzip: /var/log/app.log: 61.3% -- replaced with /var/log/app.log.gz",
        "sha256sum: /usr/bin/nvidia-smi: OK",
        "Kernel image is in gzip format",
        "segfault handler installed for the worker",
        "nvidia-container-cli: option '--display' accepted",
        "Found 8 CUDA-capable devices",
        "The NVIDIA driver on your system is recent enough (found version 12040).",
        "vfio-pci 0000:3b:00.0: enabling device (0000 -> 0003)",
        '{"kind": "receiver", "name": "kubeletstats", "data_type": "metrics", "error": ""}',
        "lookup gpu-node-1 on 10.96.0.10:53: 10.0.0.5",
        "No devices were found with pending page retirements",
        # make told to ignore a recipe's failure (a "-" recipe), and errno 0
        "make: [Makefile:42: clean] Error 1 (ignored)",
        "make: *** [Makefile:42: clean] Error 12 (ignored)",
        "shm_open done, errno=0",
        # Docker's pull that went well, and deviceQuery's answer on a GPU it could use
        "Status: Downloaded newer image for nvidia/cuda:12.4.1-base-ubuntu22.04",
        "deviceQuery, CUDA Driver = CUDART, CUDA Driver Version = 12.4, CUDA Runtime Version = 12.4, "
        "NumDevs = 1",
        "Result = PASS",
    ],
)
def test_healthy_look_alikes_stay_quiet(line: str) -> None:
    assert severity(line) == 0
    assert explain_lines([line], KB).decisive_class is None


@pytest.mark.parametrize(
    ("message", "cls"),
    [
        ("Modules linked in: nvidia_uvm(OE) nvidia(OE)", None),  # no module going away
        ("the kernel is too busy to answer", None),
        ("vfio group 12 is viable", None),
    ],
)
def test_class_patterns_need_their_whole_words(message: str, cls: str | None) -> None:
    assert KB.class_of(message_of(message)) == cls
