"""Layer 0 checks: kubelet, container runtime, kernel and the GPUs themselves."""

from __future__ import annotations

from collections.abc import Iterator

from gpunode.checks.base import check, ok, problem, unknown
from gpunode.checks.context import NodeContext
from gpunode.model import Evidence, Finding, Status
from gpunode.parse.nvidia_smi import GpuInfo

_PRESSURE = ("MemoryPressure", "DiskPressure", "PIDPressure")


@check("kubelet", needs=("node",))
def kubelet_ready(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """Node Ready condition: Unknown means the kubelet stopped reporting."""
    assert ctx.node is not None
    ready = next((c for c in ctx.node.status.conditions if c.type == "Ready"), None)
    where = f"node/{ctx.name} status.conditions[Ready]"
    if ready is None:
        yield unknown(component, "node has no Ready condition")
    elif ready.status == "True":
        version = ctx.node.status.node_info.kubelet_version
        yield ok(component, f"Ready, kubelet {version}", Evidence(where, ready.reason))
    elif ready.status == "Unknown":
        ev = Evidence(where, f"{ready.reason}: {ready.message}")
        yield problem(component, "node_not_ready", ev)
    for cond in ctx.node.status.conditions:
        if cond.type in _PRESSURE and cond.status == "True":
            ev = Evidence(f"node/{ctx.name} status.conditions[{cond.type}]", cond.message)
            yield problem(component, "node_pressure", ev, status=Status.DEGRADED)


def runtime_down_message(ctx: NodeContext) -> str | None:
    """The kubelet's Ready=False message when it says the container runtime is down."""
    node = ctx.node
    ready = next((c for c in node.status.conditions if c.type == "Ready"), None) if node else None
    if ready is not None and ready.status == "False" and "runtime" in ready.message:
        return ready.message
    return None


@check("container-runtime", needs=("node",))
def runtime_status(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """Ready=False with a runtime message means the runtime, not the kubelet, is down."""
    assert ctx.node is not None
    ready = next((c for c in ctx.node.status.conditions if c.type == "Ready"), None)
    runtime = ctx.node.status.node_info.container_runtime_version
    where = f"node/{ctx.name} status.conditions[Ready]"
    down = runtime_down_message(ctx)
    if down is not None:
        yield problem(component, "container_runtime_down", Evidence(where, down))
    elif ready is not None and ready.status == "True" and runtime:
        ev = Evidence(f"node/{ctx.name} status.nodeInfo.containerRuntimeVersion", runtime)
        yield ok(component, runtime, ev)


@check("kernel", needs=("node",))
def kernel_reported(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The kernel runs if the node reports; its fitness is judged by the driver."""
    assert ctx.node is not None
    version = ctx.node.status.node_info.kernel_version
    if version and ctx.node_reporting:
        ev = Evidence(f"node/{ctx.name} status.nodeInfo.kernelVersion", version)
        yield ok(component, version, ev)


@check("gpu-hardware", needs=("cmd/nvidia-smi-q.xml",))
def gpus_present(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """nvidia-smi sees as many GPUs as the node should have, none with pending ECC repair."""
    smi = ctx.nvidia_smi
    path = ctx.obs.path_of("cmd", "nvidia-smi-q.xml")
    if smi is None:
        error = ctx.parse_errors.get("cmd/nvidia-smi-q.xml", "")
        yield unknown(component, "nvidia-smi output could not be parsed", Evidence(path, error))
        return
    expected = ctx.expected_gpus or smi.attached_gpus
    if smi.attached_gpus < expected:
        ev = Evidence(path, f"attached_gpus={smi.attached_gpus}, node should have {expected}")
        yield problem(component, "gpu_missing", ev)
    for gpu in smi.gpus:
        yield from _gpu_memory(component, path, gpu)
    if smi.attached_gpus < expected:
        return
    seen = Evidence(path, f"attached_gpus={smi.attached_gpus}")
    ambiguous = ctx.gpu_count_ambiguous
    if ambiguous:  # shared replicas or missing GPUs: never a verdict without the config
        capacity = ctx.node.status.capacity.get("nvidia.com/gpu", "") if ctx.node else ""
        yield unknown(component, ambiguous, seen, Evidence(f"node/{ctx.name} status.capacity",
                                                           f"nvidia.com/gpu={capacity}"))
        return
    product = smi.gpus[0].product_name if smi.gpus else "GPU"
    yield ok(component, f"{smi.attached_gpus}x {product}", seen)


def _gpu_memory(component: str, path: str, gpu: GpuInfo) -> Iterator[Finding]:
    bus = gpu.pci_bus_id
    if gpu.ecc_volatile_dbe:
        ev = Evidence(path, f"GPU {bus}: volatile uncorrectable ECC errors = {gpu.ecc_volatile_dbe}")
        yield problem(component, "uncorrectable_ecc", ev)
    if gpu.remapped_rows_failure:
        ev = Evidence(path, f"GPU {bus}: row remapping failure occurred")
        yield problem(component, "row_remap_failure", ev)
    elif gpu.remapped_rows_pending:
        ev = Evidence(path, f"GPU {bus}: remapped rows pending (reset required)")
        yield problem(component, "uncorrectable_ecc", ev, status=Status.DEGRADED)


@check("gpu-hardware", needs=("cmd/nvidia-smi-q.xml",))
def mig_mode_settled(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A MIG mode change takes effect only after a GPU reset; until then it is pending."""
    smi = ctx.nvidia_smi
    if smi is None:
        return
    path = ctx.obs.path_of("cmd", "nvidia-smi-q.xml")
    for gpu in smi.gpus:
        current, pending = gpu.mig_mode_current, gpu.mig_mode_pending
        if current and pending and current != pending and "N/A" not in (current, pending):
            ev = Evidence(path, f"GPU {gpu.pci_bus_id}: MIG mode {current}, pending {pending}")
            yield problem(component, "mig_mode_change_pending", ev, status=Status.DEGRADED)


@check("container-runtime", needs=("node",))
def config_version_fits_runtime(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """containerd 1.x cannot read a version 3 config (containerd 2.x writes/expects v3)."""
    config = ctx.containerd
    node = ctx.node
    if config is None or node is None or config.version is None:
        return
    runtime = node.status.node_info.container_runtime_version
    if runtime.startswith("containerd://1.") and config.version >= 3:
        source = config.sources[0] if config.sources else "/etc/containerd/config.toml"
        ev = Evidence(f"nodes/{ctx.name}/files{source}", f"version = {config.version} with {runtime}")
        yield problem(component, "containerd_config_version_mismatch", ev)
