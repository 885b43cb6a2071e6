"""GPUs the node's cloud instance type carries against the GPUs its software counts.

A cloud instance type is a fixed machine: its documented size says how many whole GPUs it has
(data/instance_gpus.toml). The driver (nvidia-smi), GFD's count label and the device plugin's
whole-GPU capacity can each see only what the kernel and driver bring up, so a node whose
largest count of physical GPUs is below its size's has lost GPUs beneath the software: a GPU
that fell off the bus, a kernel that enumerates one of two (Azure/AKS#839, NC12s_v2 nodes
advertising 1), a probe the driver refused (NVIDIA/aicr#1858, an ND96isr_H100_v5 advertising 7).
A type the table does not list, a count that may be shared replicas or MIG instances, and a
node with no count at all say nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import cache
from importlib import resources as package_data

import msgspec

from gpunode.checks.base import check, problem
from gpunode.checks.context import NodeContext
from gpunode.datatoml import load_data_toml
from gpunode.gpus import INSTANCE_TYPE_LABELS
from gpunode.model import Evidence, Finding


class InstanceSize(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Instance types with the same number of whole GPUs (or the count in group ``n``)."""

    pattern: str
    gpus: int
    cloud: str


class InstanceSizes(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    size: tuple[InstanceSize, ...] = ()


@cache
def _sizes() -> tuple[tuple[re.Pattern[str], int, str], ...]:
    """The shipped table, compiled once."""
    text = package_data.files("gpunode").joinpath("data/instance_gpus.toml").read_text("utf-8")
    table = msgspec.convert(load_data_toml(text), InstanceSizes)
    return tuple((re.compile(s.pattern), s.gpus, s.cloud) for s in table.size)


@cache
def instance_gpus(kind: str) -> tuple[int, str] | None:
    """The whole GPUs instance type ``kind`` carries and its cloud, or None where not listed.

    Cached: a fleet has a handful of instance types, and every node asks."""
    for pattern, gpus, cloud in _sizes():
        found = pattern.match(kind)
        if found is not None:
            count = int(found.group("n")) if "n" in pattern.groupindex else gpus
            return (count, cloud) if count > 0 else None
    return None


def _instance_type(labels: Mapping[str, str]) -> str:
    for key in INSTANCE_TYPE_LABELS:  # (a loop: no generator a node)
        if labels.get(key):
            return labels[key]
    return ""


@check("gpu-hardware", needs=("node",))
def gpus_of_instance_type(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The node counts fewer physical GPUs than its cloud instance type has."""
    if ctx.node is None:
        return
    kind = _instance_type(ctx.node.metadata.labels)
    size = instance_gpus(kind) if kind else None
    seen = ctx.expected_gpus
    if size is None or not seen or seen >= size[0]:
        return
    gpus, cloud = size
    where = f"node/{ctx.name} metadata.labels"
    said = f"instance type {kind} has {gpus} GPUs ({cloud} sizes); the node counts {seen}"
    yield problem(component, "gpu_missing", Evidence(where, said))
