"""Layer 2 checks: the container toolkit's runtime configuration, RDMA plugin."""

from __future__ import annotations

from collections.abc import Iterator

from gpunode.checks.base import check, ok, problem
from gpunode.checks.context import NodeContext
from gpunode.model import Evidence, Finding, Status

_NVIDIA_HANDLER = "nvidia"


@check("container-toolkit")
def runtime_patched(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The containerd config the node uses must carry the nvidia runtime handler."""
    config = ctx.containerd
    if config is None:
        return
    path = f"nodes/{ctx.name}/files{config.sources[0] if config.sources else ''}"
    if _NVIDIA_HANDLER not in config.runtimes:
        handlers = ", ".join(sorted(config.runtimes)) or "none"
        ev = Evidence(path, f"runtimes: {handlers}; no '{_NVIDIA_HANDLER}' runtime")
        yield problem(component, "containerd_not_patched", ev, specificity=30)
        return
    default = config.default_runtime or "runc"
    ev = Evidence(path, f"runtimes.nvidia present (config v{config.version}), default {default}")
    yield ok(component, f"containerd patched (v{config.version}, default runtime {default})", ev)


@check("container-toolkit")
def toolkit_validated(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The validator writes toolkit-ready once a container got the GPUs through the runtime."""
    rel = "run/nvidia/validations/toolkit-ready"
    if rel in ctx.obs.files:
        yield ok(component, "validated (toolkit-ready)", Evidence(ctx.obs.path_of("files", rel), "present"))


@check("rdma-device-plugin", needs=("node",))
def rdma_resources(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A running RDMA plugin must advertise its rdma/* resources with a non-zero count."""
    if ctx.node is None or not ctx.stack_pods(component):
        return
    allocatable = ctx.node.status.allocatable
    resources = {k: v for k, v in allocatable.items() if k.startswith("rdma/")}
    where = f"node/{ctx.name} status.allocatable"
    if not resources:
        yield problem(component, "rdma_resources_missing", Evidence(where, "no rdma/* resource"))
    elif all(v == "0" for v in resources.values()):
        shown = ", ".join(f"{k}={v}" for k, v in sorted(resources.items()))
        yield problem(component, "rdma_resources_zero", Evidence(where, shown))
    else:
        shown = ", ".join(f"{k}={v}" for k, v in sorted(resources.items()))
        yield ok(component, shown, Evidence(where, shown))


@check("container-toolkit")
def default_runtime_without_cdi(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """Without CDI and without runtimeClassName, operands only get GPUs if nvidia is the default."""
    config = ctx.containerd
    if config is None or _NVIDIA_HANDLER not in config.runtimes or config.default_runtime == _NVIDIA_HANDLER:
        return
    if _cdi_enabled(ctx) is not False:
        return
    plain = [
        sp.pod.metadata.name
        for comp in ("device-plugin", "gfd", "dcgm-exporter")
        for sp in ctx.stack_pods(comp)
        if not sp.pod.spec.runtime_class_name
    ]
    if plain:
        source = config.sources[0] if config.sources else ""
        ev = Evidence(
            f"nodes/{ctx.name}/files{source}",
            f"default_runtime_name = {config.default_runtime or 'runc'}; pods without runtimeClassName: "
            + ", ".join(plain[:3]),
        )
        yield problem(component, "nvidia_not_default_runtime", ev, status=Status.DEGRADED, specificity=20)


def _cdi_enabled(ctx: NodeContext) -> bool | None:
    cdi = ctx.cluster_policy_spec.get("cdi")
    if isinstance(cdi, dict) and "enabled" in cdi:
        return bool(cdi["enabled"])
    return None
