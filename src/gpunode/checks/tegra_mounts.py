"""What a Tegra (Jetson) node's NVIDIA runtime puts into a container from the host.

In CSV mode (L4T's toolkit) the runtime bind-mounts the host files that the lists in
/etc/nvidia-container-runtime/host-files-for-container.d/ name: on JetPack 4 (L4T r32, its 4.9
kernel) those are l4t.csv, cuda.csv, cudnn.csv, tensorrt.csv and visionworks.csv, so the L4T
images (l4t-base and the images built on it) carry no CUDA, cuDNN or TensorRT of their own and
a container started without the NVIDIA runtime has none of them (dusty-nv/jetson-containers#222:
"on JetPack 4, the CUDA/cuDNN/TensorRT libraries get mounted into container by --runtime
nvidia from the host device"; #179: the CSV lists, "CUDA gets mounted in (when --runtime
nvidia is used)"; #159: libcublas.so.10 missing under docker run --gpus=all without it).
From JetPack 5 (the 5.10 and later -tegra kernels) the images carry CUDA themselves and only
l4t.csv's driver files are mounted, so a CUDA library missing there is the image's.
Kept apart from the checks that register themselves, so importing it registers nothing.
"""

from __future__ import annotations

import re

from gpunode.checks.context import NodeContext
from gpunode.relazy import lazy_compile

#: L4T kernels carry the -tegra suffix in their release ("4.9.253-tegra", "5.10.120-tegra").
TEGRA_KERNEL = lazy_compile(r"-tegra\b")
#: The GPU's product name as GFD labels it or nvidia-smi names it on a Jetson: the Tegra SoCs'
#: own names (Tegra X1/X2, Xavier, Orin, Thor) or the nvgpu driver's.
TEGRA_PRODUCT = lazy_compile(r"\b(?:Jetson|Tegra|Xavier|Orin|Thor)\b|\(nvgpu\)", re.IGNORECASE)
_PRODUCT_LABEL = "nvidia.com/gpu.product"
#: JetPack 4's kernel (L4T r32): 4.9.x-tegra. Later releases (5.10, 5.15) carry CUDA in the image.
_JETPACK4_KERNEL = lazy_compile(r"^4\.9\.\d+-tegra\b")
#: The loader not finding a library the JetPack 4 lists mount (cuda.csv, cudnn.csv,
#: tensorrt.csv, visionworks.csv, l4t.csv's libnvrm/libnvos/libnvdla/libnvbuf), by its soname:
#: "OSError: libcurand.so.10: cannot open shared object file", "libnvparsers.so.5: cannot open
#: shared object file".
_MOUNTED_LIBRARY_MISSING = lazy_compile(
    r"\blib(?:cu(?:dart|blas(?:Lt)?|rand|fft\w*|sparse|solver|pti|dnn\w*)|npp\w+|nvrtc\w*|nvToolsExt"
    r"|nvinfer\w*|nvparsers|nvonnxparser\w*|nvcaffe_parser|visionworks\w*|nvrm\w*|nvos|nvdla\w*"
    r"|nvbuf\w*)\.so(?:\.\d+)*: cannot open shared object file")


def is_tegra(ctx: NodeContext) -> bool:
    """The node's own record says Tegra: an L4T kernel, or a GPU product named as a Tegra SoC."""
    node = ctx.node
    if node is None:
        return False
    if TEGRA_KERNEL.search(node.status.node_info.kernel_version):
        return True
    return bool(TEGRA_PRODUCT.search(node.metadata.labels.get(_PRODUCT_LABEL, "")))


def mounts_cuda(ctx: NodeContext) -> bool:
    """Whether the node's NVIDIA runtime may be what puts CUDA, cuDNN and TensorRT into its
    containers: a Tegra node whose kernel is not a later L4T's (JetPack 4's 4.9-tegra, or a
    kernel that does not say which release)."""
    if not is_tegra(ctx) or ctx.node is None:
        return False
    kernel = ctx.node.status.node_info.kernel_version
    return not TEGRA_KERNEL.search(kernel) or bool(_JETPACK4_KERNEL.match(kernel))


def says_mounted_library_missing(line: str) -> bool:
    """The loader's words for a library of the JetPack 4 mount lists it could not find."""
    return "shared object" in line and _MOUNTED_LIBRARY_MISSING.search(line) is not None
