"""PyTorch's out of memory on a whole GPU that another process mostly holds
(checks.foreign_memory): the process left behind on the node is the container runtime's,
with the line's resource-exhausted class. A program that fills the card itself, and the same
numbers on a node that shares its GPUs, stay silent.

Sources: PyTorch c10/cuda/CUDACachingAllocator.cpp (both forms of the message);
LISTatSNU/FastMRI_challenge#238 (a zombie process on the node); NVIDIA/k8s-device-plugin#323
(time-slicing: the neighbours' memory)."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case, gpu_job_case
from scoreboard import top_pair

from gpunode.checks.foreign_memory import foreign_memory_index

OLD_HELD = ("RuntimeError: CUDA out of memory. Tried to allocate 216.00 MiB (GPU 0; 7.92 GiB total "
            "capacity; 69.17 MiB already allocated; 24.56 MiB free; 86.00 MiB reserved in total by PyTorch)")
OLD_OWN = ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; "
           "4.00 GiB total capacity; 2.30 GiB already allocated; 51.56 MiB free; 2.50 GiB reserved in "
           "total by PyTorch)")
NEW_HELD = ["torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.16 GiB.",
            "GPU 0 has a total capacity of 79.15 GiB of which 12.06 MiB is free.",
            "Process 6324 has 70.06 GiB memory in use.",
            "Including non-PyTorch memory, this process has 9.05 GiB memory in use."]
NEW_OWN = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 472.00 MiB. GPU 0 has a total "
           "capacity of 23.70 GiB of which 114.56 MiB is free. Including non-PyTorch memory, this process "
           "has 23.58 GiB memory in use. Of the allocated memory 18.26 GiB is allocated by PyTorch.")


def test_shape() -> None:
    assert foreign_memory_index(["epoch 1", OLD_HELD]) == 1
    assert foreign_memory_index(NEW_HELD) == 1
    assert foreign_memory_index([OLD_OWN]) is None
    assert foreign_memory_index([NEW_OWN]) is None
    assert foreign_memory_index(["RuntimeError: CUDA out of memory."]) is None


def test_memory_held_by_a_leftover_process() -> None:
    assert top_pair(gpu_job_case("x-held", OLD_HELD)) == ("container-runtime", "error_resource_exhausted")
    assert top_pair(gpu_job_case("x-held-new", "\n".join(NEW_HELD))) == (
        "container-runtime", "error_resource_exhausted")


def test_a_program_that_fills_the_card_itself_is_its_own() -> None:
    assert top_pair(gpu_job_case("x-own", OLD_OWN)) is None
    assert top_pair(gpu_job_case("x-own-new", NEW_OWN)) is None


def test_shared_gpus_hold_the_neighbours_memory() -> None:
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "job-0", "namespace": "default", "container": "main",
         "resources": {"limits": {"nvidia.com/gpu": "1"}}, "state": "Error", "exit_code": 1},
        {"kind": "log", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
         "container": "main", "text": OLD_HELD + "\n"}]
    raw = {"id": "x-shared", "source": "https://example.org/x", "title": "t", "platform": "generic",
           "scenario": "falcon-ai-time-slicing", "evidence": evidence, "expect": {"healthy": True}}
    assert top_pair(msgspec.convert(raw, Case)) is None
