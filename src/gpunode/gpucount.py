"""What an operator counts: GPUs usable and lost, per node, per GPU class and for the fleet
(pure; diagnose fills the numbers, every reporter shows them the same way).

A node's GPUs (``NodeReport.gpus``) are the physical GPUs it should have (gpus.py). Of those,
*usable* are the ones a pod can get now: none while the node cannot run pods (its kubelet
failed) or while what hands GPUs to pods (the device plugin, or the DRA, HAMi or GKE plugin
deployed instead) failed, itself or blocked by a failure below it (a driver that does not
load); otherwise the GPUs its resources advertise as allocatable, counted as physical GPUs
(shared replicas divided out), at most the GPUs it should have: a GPU the device plugin
marked unhealthy (Xid 79, an uncorrectable ECC error) is lost, the node's other GPUs are not.
Under MIG the allocatable units are instances, not GPUs: an advertising plugin that works
counts every GPU usable. *Lost* = GPUs - usable. A node whose GPU count is unknown (its
driver failed before anything counted them) is said apart, never counted as zero GPUs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from itertools import repeat

from gpunode.gpus import GpuResources, gpu_resources
from gpunode.model import GpuClass, GpuCount, NodeReport, Status

#: What hands GPUs to pods on a node (one of them is deployed where GPUs are shared out).
ADVERTISERS = ("device-plugin", "dra-kubelet-plugin", "hami-device-plugin", "gke-device-plugin")
#: The components whose status ``usable_gpus`` reads.
READ_STATUSES = ("kubelet", *ADVERTISERS)
#: The class of a node whose GPU product no source names.
UNKNOWN_CLASS = "unknown GPU"


def usable_gpus(expected: int | None, labels: Mapping[str, str], allocatable: Mapping[str, str],
                statuses: Mapping[str, Status], read: GpuResources | None = None) -> int | None:
    """GPUs of the node a pod can get now (see the module); None when that cannot be told.
    ``read``: ``gpu_resources(labels, allocatable)``, where the caller has it."""
    if statuses.get("kubelet") == Status.FAILED:
        return 0
    states = [*map(statuses.get, ADVERTISERS, repeat(Status.NOT_DEPLOYED))]  # (in C)
    if Status.FAILED in states:
        return 0
    resources = read if read is not None else gpu_resources(labels, allocatable)
    if resources.mode.startswith("mig"):
        deployed = states.count(Status.NOT_DEPLOYED) < len(states)
        return expected if resources.advertised else (0 if deployed else None)
    if resources.physical is None:
        deployed = states.count(Status.NOT_DEPLOYED) < len(states)
        return 0 if deployed and expected else None
    return min(resources.physical, expected) if expected is not None else resources.physical


def count(nodes: Sequence[NodeReport]) -> GpuCount:
    """The fleet's GPUs: usable of counted, where they were lost, and per GPU class."""
    by_class: dict[str, list[NodeReport]] = defaultdict(list)
    for node in nodes:
        by_class[node.gpu_product or UNKNOWN_CLASS].append(node)
    classes = tuple(_class(name, members) for name, members in sorted(by_class.items()))
    whole = _class("", nodes)
    return GpuCount(gpus=whole.gpus, usable=whole.usable, lost=whole.lost, losing=whole.losing,
                    uncounted=whole.uncounted, classes=classes)


def _class(name: str, nodes: Sequence[NodeReport]) -> GpuClass:
    counted = [n for n in nodes if n.gpus is not None]
    gpus = sum(n.gpus or 0 for n in counted)
    usable = sum(_usable(n) for n in counted)
    losing = tuple(n.name for n in counted if _usable(n) < (n.gpus or 0))
    uncounted = tuple(n.name for n in nodes if n.gpus is None and n.gpus_usable == 0)
    return GpuClass(product=name, nodes=len(nodes), gpus=gpus, usable=usable, lost=gpus - usable,
                    losing=losing, uncounted=uncounted)


def _usable(node: NodeReport) -> int:
    """Usable GPUs of a counted node; where that is unknown, all of them (nothing says lost)."""
    gpus = node.gpus or 0
    return gpus if node.gpus_usable is None else min(node.gpus_usable, gpus)


def headline(gpus: GpuCount | GpuClass) -> str:
    """``61 of 64 GPUs usable; 3 lost on 2 nodes`` (and the nodes whose GPUs were not counted)."""
    if not gpus.gpus and not gpus.uncounted:
        return ""
    plural = "s" if gpus.gpus != 1 else ""
    parts = [f"{gpus.usable} of {gpus.gpus}{'+' if gpus.uncounted else ''} GPU{plural} usable"]
    if gpus.lost:
        parts.append(f"{gpus.lost} lost on {_nodes(len(gpus.losing))}")
    if gpus.uncounted:
        parts.append(f"{_nodes(len(gpus.uncounted))} failing with GPUs not counted "
                     f"({', '.join(gpus.uncounted[:3])}{', …' if len(gpus.uncounted) > 3 else ''})")
    return "; ".join(parts)


def class_lines(gpus: GpuCount) -> list[str]:
    """One line per GPU class, where the fleet has more than one named class (nodes whose
    product is unknown are in the headline's uncounted part)."""
    named = [c for c in gpus.classes if c.product != UNKNOWN_CLASS or c.gpus]
    if len(named) < 2:
        return []
    return [f"{c.product}: {headline(c)} ({_nodes(c.nodes)})" for c in named]


def node_cell(node: NodeReport) -> str:
    """A node's GPUs for a table cell: ``7/8`` usable of its GPUs, ``0/?`` when not counted."""
    if node.gpus is None:
        return "0/?" if node.gpus_usable == 0 else "?"
    return f"{_usable(node)}/{node.gpus}"


def nodes_cell(by_name: Mapping[str, NodeReport], names: Sequence[str]) -> str:
    """The GPUs of a fleet row's nodes: one node's ``node_cell``, several nodes summed;
    ``-`` for the cluster's own row."""
    found = [by_name[n] for n in names if n in by_name]
    if not found:
        return "-"
    if len(found) == 1:
        return node_cell(found[0])
    counted = [n for n in found if n.gpus is not None]
    unknown = "+" if len(counted) < len(found) else ""
    return f"{sum(_usable(n) for n in counted)}/{sum(n.gpus or 0 for n in counted)}{unknown}"


def _nodes(n: int) -> str:
    return f"{n} node{'s' if n != 1 else ''}"
