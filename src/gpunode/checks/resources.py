"""Layer 3 checks: GPUs advertised to Kubernetes, GFD labels, CSI registration."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from operator import attrgetter, methodcaller

from gpunode.checks import operator
from gpunode.checks.base import check, ok, pods_here, problem, unknown
from gpunode.checks.context import NodeContext
from gpunode.gpus import MIG_PREFIX, gfd_labels_as_gpu, physical_gpus_labelled, quantity
from gpunode.model import Evidence, Finding, Status
from gpunode.relazy import lazy_compile

GPU = "nvidia.com/gpu"
#: The kubelet's words for a device plugin it registers or watches.
_PLUGIN_WORDS = lazy_compile(r"(?i:device[ -]?plugin)")
GFD_LABELS = ("nvidia.com/gpu.product", "nvidia.com/gpu.count", "nvidia.com/gpu.memory")
#: GFD's CUDA version labeler writes its labels as one map from one NVML query
#: (k8s-device-plugin internal/lm/nvml.go newVersionLabeler): the driver's and CUDA's
#: versions in the form every GFD writes, and, since the "-version" form was added, that form
#: beside them. A node carrying part of the map was not labelled by the GFD running now.
GFD_CUDA_LABELS = ("nvidia.com/cuda.driver.major", "nvidia.com/cuda.driver.minor",
                   "nvidia.com/cuda.driver.rev", "nvidia.com/cuda.runtime.major",
                   "nvidia.com/cuda.runtime.minor")
GFD_CUDA_VERSION_LABELS = ("nvidia.com/cuda.driver-version.major", "nvidia.com/cuda.driver-version.minor",
                           "nvidia.com/cuda.driver-version.revision", "nvidia.com/cuda.driver-version.full",
                           "nvidia.com/cuda.runtime-version.major", "nvidia.com/cuda.runtime-version.minor",
                           "nvidia.com/cuda.runtime-version.full")


@check("device-plugin", needs=("node",))
def gpus_allocatable(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """Allocatable GPU devices (nvidia.com/gpu, .shared, mig-*) should equal what the node
    advertises for its GPUs: whole GPUs, MIG instances or shared replicas (gpus.py)."""
    if ctx.node is None or not ctx.node_reporting:
        return
    if not ctx.stack_pods(component) and ctx.replaced_by(component) is not None:
        return  # another plugin advertises the GPUs here and is judged by its own checks
    status = ctx.node.status
    if not status.allocatable:  # a source without the field (must-gather), not a zero
        yield unknown(
            component,
            "the node's allocatable resources are not in the source",
            Evidence(f"node/{ctx.name} status.allocatable", "absent"),
        )
        return
    allocatable = ctx.allocatable_resources.advertised  # type: ignore[union-attr]  # (node is there)
    expected = ctx.expected_units
    where = f"node/{ctx.name} status.allocatable"
    shown = _shown(status.allocatable, status.capacity)
    running = "Running" in map(_PHASE, ctx.stack_pods(component))  # (in C: no comprehension a node)
    if not running and not allocatable and not _host_plugin_advertises_none(ctx, component):
        return  # a plugin that is absent or not started is judged by the pod check
    if not allocatable:
        yield problem(component, "device_plugin_zero_gpus", Evidence(where, shown), specificity=30)
    elif expected and allocatable < expected:
        mode = ctx.gpu_resources.describe if ctx.gpu_resources else "whole"
        ev = Evidence(where, f"{shown}; node should advertise {expected} ({mode})")
        yield problem(component, "gpus_unhealthy", ev, status=Status.DEGRADED)
    else:
        yield ok(component, f"{allocatable} GPUs allocatable", Evidence(where, shown))


#: Readers in C for the node pass (a comprehension is a function of its own a node).
_PHASE = attrgetter("pod.status.phase")
_GPU_RESOURCE = methodcaller("startswith", (GPU, MIG_PREFIX))


def _host_plugin_advertises_none(ctx: NodeContext, component: str) -> bool:
    """The platform runs the device plugin on the host (Bottlerocket's systemd service, no
    pod), the node has GPUs (nvidia-smi or GFD counted them), and it advertises none: the
    plugin runs but its resource never reached the kubelet."""
    if component not in ctx.platform.provides or ctx.stack_pods(component) or not ctx.expected_gpus:
        return False
    return _zero_listed(ctx) or _kubelet_saw_plugin(ctx)


def _zero_listed(ctx: NodeContext) -> bool:
    """The node lists nvidia.com/gpu and counts 0 of it: the resource was registered once."""
    status = ctx.node.status if ctx.node is not None else None
    values = [] if status is None else [status.capacity.get(GPU), status.allocatable.get(GPU)]
    return any(v is not None and v.strip() == "0" for v in values)


def _kubelet_saw_plugin(ctx: NodeContext) -> bool:
    """The kubelet's journal speaks of a device plugin: one runs on the host (absent GPUs on a
    node whose journal is silent about plugins may be a source that leaves them out)."""
    split = ctx.text_lines("cmd", "journal-kubelet.txt")
    return split is not None and _PLUGIN_WORDS.search(split[1]) is not None


def _shown(allocatable: dict[str, str], capacity: dict[str, str]) -> str:
    """Every GPU resource as allocatable/capacity, for evidence."""
    names = sorted(filter(_GPU_RESOURCE, {*allocatable, *capacity}))  # (in C)
    if not names:
        return f"{GPU}=absent"
    return ", ".join(
        f"{k}={allocatable.get(k, 'absent')} capacity={capacity.get(k, 'absent')}" for k in names
    )


@check("gfd", needs=("node",), may_find=pods_here("gfd"))
def gfd_labels(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A running GFD labels product, count and memory; a count must match the GPUs."""
    if ctx.node is None or not ctx.stack_pods(component):
        return
    labels = gfd_labels_as_gpu(ctx.node.metadata.labels)
    where = f"node/{ctx.name} metadata.labels"
    missing = [k for k in GFD_LABELS if k not in labels] + _cuda_labels_missing(ctx.node.metadata.labels)
    if missing:
        yield problem(
            component,
            "gfd_labels_missing",
            Evidence(where, f"missing {', '.join(missing)}"),
            status=Status.DEGRADED,
        )
        return
    count = quantity(labels.get("nvidia.com/gpu.count"))
    physical = physical_gpus_labelled(labels)
    smi = ctx.nvidia_smi
    if smi is not None and physical is not None and smi.attached_gpus > physical:
        ev = Evidence(where, f"nvidia.com/gpu.count={physical}, nvidia-smi sees {smi.attached_gpus}")
        yield problem(component, "gfd_labels_stale", ev, status=Status.DEGRADED)
        return
    yield ok(component, f"{labels['nvidia.com/gpu.product']} x{count}", Evidence(where, f"gpu.count={count}"))


def _cuda_labels_missing(labels: Mapping[str, str]) -> list[str]:
    """The CUDA version labels a GFD that labelled this node leaves out: none is expected where
    GFD wrote no NVML label (no gpu.product: judged by GFD_LABELS), all of the first form, and
    the "-version" form too once any of it is here (a newer GFD writes both together)."""
    if "nvidia.com/gpu.product" not in labels:
        return []
    wanted: tuple[str, ...] = GFD_CUDA_LABELS
    if any(k in labels for k in GFD_CUDA_VERSION_LABELS):
        wanted += GFD_CUDA_VERSION_LABELS
    return [k for k in wanted if k not in labels]


@check("csi-node", needs=("cluster/csinodes",), may_find=pods_here("csi-node"))
def csi_registered(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A CSI node plugin on this node must appear in the node's CSINode drivers."""
    if not ctx.stack_pods(component):
        return
    csinode = ctx.facts.csi_nodes.get(ctx.name)
    drivers = [d.name for d in (csinode.spec.drivers or ())] if csinode else []
    where = f"csinode/{ctx.name} spec.drivers"
    if not drivers:
        yield problem(component, "csi_not_registered", Evidence(where, "no drivers registered"))
    else:
        yield ok(component, f"registered: {', '.join(drivers)}", Evidence(where, ", ".join(drivers)))


def _no_nfd_worker(ctx: NodeContext, component: str, labels: Mapping[str, str]) -> Iterator[Finding]:
    """No NFD worker here: a problem only where the GPU Operator therefore skips the node."""
    if not ctx.facts.cluster_policies or operator.operator_sees_gpu(labels):
        return
    if any(ctx.stack_pods(c) for c in operator.OPERANDS if c != "validator"):
        return  # the operator did deploy here: the labels it reads were there
    where = f"node/{ctx.name} metadata.labels"
    shown = f"no {operator.GPU_PRESENT}=true, no NVIDIA PCI label; no NFD worker pod on the node"
    blocked = ctx.untolerated_taint(component)
    if blocked is not None:  # deployed, and kept off this node by a taint it does not tolerate
        ds, taint = blocked
        ds_name = f"{ds.metadata.namespace}/{ds.metadata.name}"
        said = f"{taint.key}={taint.value}:{taint.effect} not tolerated by daemonset {ds_name}"
        ev = Evidence(f"node/{ctx.name} spec.taints", f"{said}; {shown}")
        yield problem(component, "nfd_worker_untolerated_taint", ev, namespace=ds.metadata.namespace,
                      daemonset=ds.metadata.name,
                      specificity=ctx.kb.get("nfd_worker_untolerated_taint").specificity)
        return
    yield problem(component, "nfd_not_deployed", Evidence(where, shown), specificity=40)


@check("nfd", needs=("node",))
def nfd_labels(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A running NFD worker labels this GPU node with the NVIDIA PCI vendor; the GPU
    Operator deploys nothing on a GPU node without that label."""
    if ctx.node is None:
        return
    labels = ctx.node.metadata.labels
    if not ctx.stack_pods(component):
        yield from _no_nfd_worker(ctx, component, labels)
        return
    where = f"node/{ctx.name} metadata.labels"
    pci = [k for k in labels if k.startswith("feature.node.kubernetes.io/pci-") and "10de" in k]
    if operator.nfd_label_unread(labels, bool(ctx.facts.cluster_policies)):
        ev = Evidence(where, _vendor_label_evidence(pci, labels))
        yield problem(component, "nfd_pci_label_missing", ev, status=Status.DEGRADED)
    elif pci:
        yield ok(component, f"labelled {pci[0]}", Evidence(where, f"{pci[0]}={labels[pci[0]]}"))


def _vendor_label_evidence(pci: list[str], labels: Mapping[str, str]) -> str:
    """What the node has instead of the vendor label the GPU Operator reads."""
    if operator.classed_form_passed_over(labels):
        classed = next(k for k in operator.NVIDIA_PCI_LABELS[1:] if labels.get(k) == "true")
        return (f"{classed}=true without {operator.NVIDIA_PCI_LABELS[0]} or {operator.GPU_PRESENT}: "
                "the operator in use does not read the class+vendor form")
    if pci:
        return f"{pci[0]} present, none of {', '.join(operator.NVIDIA_PCI_LABELS)}"
    return "feature.node.kubernetes.io/* present, no pci-10de label"
