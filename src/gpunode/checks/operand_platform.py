"""An NVML operand that finds no GPU platform in its container, on a node whose driver
answers: the layer that injects the driver into containers left it out.

NVIDIA's device plugin and GFD pick their resource manager by the platform they detect in
their own container (k8s-device-plugin's internal/resource factory: strategy ``auto``
resolves to ``nvml`` where libnvidia-ml loads, ``tegra`` on a Tegra system, and is returned
unresolved otherwise: "failed to create resource manager: unsupported strategy auto"; the
plugin manager's older words are "Incompatible platform detected" / "Incompatible strategy
detected auto" and "platform detection failed"). The library comes from the host, put in by
the NVIDIA runtime's hook, its CDI spec or the toolkit's NRI plugin. Where the pod asks for
the NVIDIA runtime (a RuntimeClass, or nvidia as the default) and ``nvidia-smi`` answers on
the node with its GPUs, neither the default runtime nor the driver is why: the injection
is, the container toolkit's (rwlove/home-ops#14313: the GPU Operator's NRI injection turned
on where the toolkit DaemonSet that runs it is opted out). The line's class is "not found"
(the library it looked for). A pod that asks no runtime is ``nvidia_not_default_runtime``'s
(checks.signatures); a node whose platform installs driver and runtime is the driver's
(checks.driver.operand_finds_no_host_nvml).
"""

from __future__ import annotations

from collections.abc import Iterator

from gpunode.bundle.kube import Pod
from gpunode.checks.base import check
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import line_finding
from gpunode.checks.runtime_class import runtime_requested
from gpunode.decisive import Decisive
from gpunode.model import Finding, Status
from gpunode.relazy import lazy_compile

#: The plugin's words for "neither NVML nor Tegra in my container".
NO_PLATFORM = lazy_compile(
    r"\bunsupported strategy auto\b|\bIncompatible (?:platform|strategy) detected\b|"
    r"\bplatform detection failed\b")
#: Operands that pick their manager by the detected platform (NVIDIA's plugin code).
_OPERANDS = ("device-plugin", "gfd")
_LAST = 20


def _failing(pod: Pod) -> bool:
    statuses = pod.status.container_statuses
    return pod.status.phase != "Running" or any(cs.restart_count or not cs.ready for cs in statuses)


def _driver_answers(ctx: NodeContext) -> bool:
    smi = ctx.nvidia_smi
    return smi is not None and bool(smi.gpus) and bool(smi.driver_version)


@check("container-toolkit")
def operand_finds_no_platform(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A failing device plugin or GFD that asks for the NVIDIA runtime and finds no GPU
    platform in its container, while the node's driver answers nvidia-smi."""
    if component in ctx.platform.provides or not _driver_answers(ctx):
        return
    for operand in _OPERANDS:
        if not runtime_requested(ctx, operand):
            continue
        for sp in ctx.stack_pods(operand):
            if not _failing(sp.pod):
                continue
            for log in ctx.logs_of(sp.pod):
                start = max(len(log.lines) - _LAST, 0)
                for index in range(len(log.lines) - 1, start - 1, -1):
                    line = log.lines[index].strip()
                    if not NO_PLATFORM.search(line):
                        continue
                    found = Decisive(index + 1, line, 2)
                    yield line_finding(ctx.kb, component, Status.FAILED, found, f"{log.path}:{index + 1}",
                                       verb=f"left the driver out of {operand}'s container",
                                       line_class="error_not_found", explains=operand, seen_in=operand)
                    return
