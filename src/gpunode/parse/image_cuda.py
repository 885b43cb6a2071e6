"""The CUDA toolkit version a container image names in its reference.

NVIDIA's CUDA images are tagged by the toolkit they carry, first in the tag
(``nvidia/cuda:7.0-cudnn3-devel``, ``nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04``:
https://nvidia.github.io/container-wiki/toolkit/container-images.html), and images built
for one toolkit say it in their tag as ``cuda<version>`` (``pytorch/pytorch:2.1.0-cuda12.1-
cudnn8-runtime``, ``paddlepaddle/paddle:2.4.2-gpu-cuda11.7-cudnn8.4-trt8.4``). Anything else
(NGC's year.month tags, ``latest``) names no CUDA version and gives None.
"""

from __future__ import annotations

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
