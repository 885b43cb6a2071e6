"""A WSL2 kernel too old to give the VM its GPU.

Under WSL2 the GPU driver is the Windows host's: the Linux kernel of the WSL VM exposes it
through its paravirtualised ``/dev/dxg`` and the host places libcuda under /usr/lib/wsl/lib.
CUDA in WSL2 needs a WSL kernel of 5.10.43.3 or newer (Microsoft's "Enable NVIDIA CUDA on WSL"
page, learn.microsoft.com/windows/ai/directml/gpu-cuda-in-wsl: check ``wsl cat /proc/version``,
update with ``wsl --update``); on an older one a CUDA program finds no driver at all
(vllm-project/vllm#6184: "Found no NVIDIA driver on your system." on 5.10.16.3-microsoft-
standard-WSL2, fixed by updating the WSL kernel to 5.15.153.1). A workload's words that no
driver was found on a node whose kernelVersion is such a kernel are the kernel's, classed by
the line. A WSL2 kernel at or above the floor, a version that does not read as WSL's
(4 numbers and "-microsoft-standard"), or a line that says a driver answered, say nothing.
"""

from __future__ import annotations

from typing import Final

from gpunode.relazy import lazy_compile

#: The first WSL2 kernel that serves CUDA (Microsoft's CUDA-on-WSL page).
WSL_GPU_KERNEL: Final = (5, 10, 43, 3)
#: WSL2's kernel release as kernelVersion gives it: "5.10.16.3-microsoft-standard-WSL2",
#: older "4.19.104-microsoft-standard".
_WSL_RELEASE = lazy_compile(r"^(?P<release>\d+(?:\.\d+){1,3})-microsoft-standard\b")


def wsl_kernel_release(kernel_version: str) -> tuple[int, ...] | None:
    """The release numbers of a WSL2 kernel, None for any other kernel."""
    found = _WSL_RELEASE.match(kernel_version.strip())
    return tuple(int(part) for part in found["release"].split(".")) if found else None


def too_old_for_gpu(kernel_version: str) -> bool:
    """Whether the node's kernel is a WSL2 kernel older than the first one that serves CUDA."""
    release = wsl_kernel_release(kernel_version)
    return release is not None and release < WSL_GPU_KERNEL
