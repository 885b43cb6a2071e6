"""Versions shown in the stack view: what is actually running, per component."""

from __future__ import annotations

from collections.abc import Callable

from gpunode.checks.context import NodeContext
from gpunode.relazy import lazy_compile


def component_version(ctx: NodeContext, component: str) -> str | None:
    """The running version: host facts for host components, else the main image tag."""
    special = HOST_VERSIONS.get(component)
    if special is not None:
        return special(ctx)
    for sp in ctx.stack_pods(component):
        for container in sp.pod.spec.containers:
            tag = image_tag(container.image)
            if tag:
                return tag
    return None


def image_tag(image: str) -> str | None:
    """ "nvcr.io/nvidia/driver:570.133.20-ubuntu22.04" → "570.133.20-ubuntu22.04"."""
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else None


def _node_info(field: str) -> Callable[[NodeContext], str | None]:
    def read(ctx: NodeContext) -> str | None:
        node = ctx.node
        return getattr(node.status.node_info, field) or None if node else None

    return read


def _kernel(ctx: NodeContext) -> str | None:
    probe = ctx.probe
    return _KERNEL_VERSION(ctx) or (probe.host.kernel_release if probe else None)


def _driver(ctx: NodeContext) -> str | None:
    smi = ctx.nvidia_smi
    if smi is not None and smi.driver_version:
        return smi.driver_version
    probe = ctx.probe
    if probe is not None and probe.nvml.driver_version:
        return probe.nvml.driver_version
    node = ctx.node
    label = node.metadata.labels.get("nvidia.com/cuda.driver-version.full") if node else None
    if label:
        return label
    for sp in ctx.stack_pods("driver"):
        for container in sp.pod.spec.containers:
            tag = image_tag(container.image)
            if tag:
                return tag
    return None


_KERNEL_VERSION = _node_info("kernel_version")
#: Components whose version is read from the host, not from a pod's image.
HOST_VERSIONS: dict[str, Callable[[NodeContext], str | None]] = {
    "kernel": _kernel,
    "kubelet": _node_info("kubelet_version"),
    "container-runtime": _node_info("container_runtime_version"),
    "driver": _driver,
}


#: nvidia-smi's "Driver Version: 340.108" (table header) or "Driver Version : 340.108" (-q).
_SMI_DRIVER = lazy_compile(r"\bDriver Version\s*:\s*(\d+\.[\d.]+)")


def driver_branch(ctx: NodeContext) -> int | None:
    """The node's driver branch: the version nvidia-smi's pasted text prints (table header or
    -q), else the node's driver version as the version report reads it (checks.versions:
    nvidia-smi -q's XML, the probe's NVML, GFD's label, the driver container's tag); None when
    none was collected."""
    text = ctx.obs.cmd.get("nvidia-smi.txt")
    said = _SMI_DRIVER.search(text) if text else None
    version = said[1] if said is not None else HOST_VERSIONS["driver"](ctx)
    head = (version or "").split(".", 1)[0]
    return int(head) if head.isdigit() else None
