"""The CUDA toolkit version a container image names in its reference.

NVIDIA's CUDA images are tagged by the toolkit they carry, first in the tag
(``nvidia/cuda:7.0-cudnn3-devel``, ``nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04``:
https://nvidia.github.io/container-wiki/toolkit/container-images.html), and images built
for one toolkit say it in their tag as ``cuda<version>`` (``pytorch/pytorch:2.1.0-cuda12.1-
cudnn8-runtime``, ``paddlepaddle/paddle:2.4.2-gpu-cuda11.7-cudnn8.4-trt8.4``). Anything else
(NGC's year.month tags, ``latest``) names no CUDA version and gives None.
"""

from __future__ import annotations

from collections.abc import Iterable

from gpunode.relazy import lazy_compile

#: NVIDIA's CUDA image repositories (Docker Hub's, NGC's, their per-architecture and GL
#: variants), whose tag starts with the toolkit's version.
_CUDA_REPO = lazy_compile(r"(?:^|/)nvidia/cuda(?:gl)?(?:-[a-z0-9]+)?$")
_LEADING = lazy_compile(r"^(?P<major>\d{1,2})\.(?P<minor>\d{1,2})(?:\.\d+)?(?:-|$)")
#: ``cuda12.1``, ``cuda-11.8``, ``cuda_10.2`` inside any image's tag.
_IN_TAG = lazy_compile(r"(?:^|[-_.])cuda[-_]?(?P<major>\d{1,2})\.(?P<minor>\d{1,2})(?:\.\d+)?(?=$|[-_])")


def image_cuda(image: str) -> tuple[int, int] | None:
    """The (major, minor) CUDA version ``image`` names in its tag, or None."""
    ref = image.strip().split("@", 1)[0]
    repo, sep, tag = ref.rpartition(":")
    if not sep or "/" in tag:
        return None  # no tag (or the colon was a registry's port)
    said = _LEADING.match(tag) if _CUDA_REPO.search(repo.lower()) else _IN_TAG.search(tag.lower())
    return None if said is None else (int(said["major"]), int(said["minor"]))


#: A wheel's CUDA build in its local version, as frameworks print their own version
#: (PyTorch's torch.__version__ "2.1.0+cu121", torchvision's "0.16.0+cu121", the
#: download.pytorch.org/whl/cu118 wheels: https://pytorch.org/get-started/previous-versions/);
#: two digits are one-digit majors ("+cu92" is 9.2), three are two-digit ones ("+cu102" is 10.2).
_WHEEL_CUDA = lazy_compile(r"\b\d+\.\d+(?:\.\d+)*\+cu(?P<digits>\d{2,3})\b")
#: The runtime's version a job prints beside the driver's: PaddlePaddle's "Runtime API Version:
#: 10.2" (gpu_context.cc), deviceQuery's "CUDA Driver Version / Runtime Version 11.4 / 12.1".
_RUNTIME_SAID = lazy_compile(r"\bRuntime API Version: (?P<a>\d{1,2}\.\d{1,2})\b"
                             r"|\bCUDA Driver Version / Runtime Version\s+\d{1,2}\.\d{1,2}\s*/\s*"
                             r"(?P<b>\d{1,2}\.\d{1,2})\b")


def _from_digits(digits: str) -> tuple[int, int]:
    return (int(digits[:-1]), int(digits[-1]))


def stated_cuda(lines: Iterable[str]) -> tuple[int, int] | None:
    """The (major, minor) CUDA version a job's own lines say it was built with or runs: a
    framework wheel's ``+cuXYZ`` local version, or the runtime version it printed; None where
    none is said."""
    for line in lines:
        if "+cu" in line and (wheel := _WHEEL_CUDA.search(line)) is not None:
            return _from_digits(wheel["digits"])
        if "Runtime" in line and (said := _RUNTIME_SAID.search(line)) is not None:
            major, minor = (said["a"] or said["b"]).split(".")
            return int(major), int(minor)
    return None
