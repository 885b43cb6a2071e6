"""CUDA in WSL2 needs a WSL kernel of 5.10.43.3 or newer (Microsoft's "Enable NVIDIA CUDA on
WSL" page); on an older one the Windows host's driver never reaches the VM and a job finds no
driver at all (vllm-project/vllm#6184 on 5.10.16.3-microsoft-standard-WSL2). A job's words that
no driver was found on such a node are the kernel's. Look-alikes: the same words on a current
WSL2 kernel or on a kernel that is not WSL's, and other words on the old WSL2 kernel."""

from __future__ import annotations

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.checks.wsl_kernel import too_old_for_gpu, wsl_kernel_release

NO_DRIVER = "Found no NVIDIA driver on your system."
TORCH = ("RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
         "installed a driver from http://www.nvidia.com/Download/index.aspx")


def _case(kernel: str, text: str) -> Case:
    return synthetic_case("x-wsl-kernel", [
        {"kind": "node-info", "fields": {"kernelVersion": kernel}},
        {"kind": "log", "object": {"kind": "Pod", "name": "vllm-server", "namespace": "default"},
         "text": text + "\n"},
    ], healthy=False, cluster={"driver_mode": "host"})


@pytest.mark.parametrize(("kernel", "text"), [
    ("5.10.16.3-microsoft-standard-WSL2", NO_DRIVER),
    ("4.19.128-microsoft-standard", NO_DRIVER),
    ("5.4.72-microsoft-standard-WSL2", TORCH),
])
def test_no_driver_on_an_old_wsl_kernel_is_the_kernels(kernel: str, text: str) -> None:
    top = top_pair(_case(kernel, text))
    assert top is not None and top[0] == "kernel"


@pytest.mark.parametrize("kernel", ["5.15.153.1-microsoft-standard-WSL2", "5.10.43.3-microsoft-standard-WSL2",
                                    "5.10.0-28-cloud-amd64"])
def test_the_same_words_elsewhere_are_not_the_kernels(kernel: str) -> None:
    top = top_pair(_case(kernel, NO_DRIVER))
    assert top is None or top[0] != "kernel"


def test_other_words_on_an_old_wsl_kernel_are_not_the_kernels() -> None:
    top = top_pair(_case("5.10.16.3-microsoft-standard-WSL2", "torch.OutOfMemoryError: CUDA out of memory."))
    assert top is None or top[0] != "kernel"


def test_release_reading() -> None:
    assert wsl_kernel_release("5.10.16.3-microsoft-standard-WSL2") == (5, 10, 16, 3)
    assert wsl_kernel_release("6.8.0-45-generic") is None
    assert too_old_for_gpu("5.10.16.3-microsoft-standard-WSL2")
    assert not too_old_for_gpu("5.10.102.1-microsoft-standard-WSL2")
    assert not too_old_for_gpu("")
