"""GPU pods Pending on "Insufficient nvidia.com/gpu" while a node's GPUs look free.

The scheduler counts a node's GPU resource as allocatable minus the requests of the pods
bound there that have not ended, Terminating ones included: a pod stuck Terminating (its
containers cannot be stopped: a hung driver call, a runtime that does not answer, a
finalizer) keeps its GPUs allocated although nothing runs on them. So when a pending GPU
pod's FailedScheduling event says ``Insufficient <resource>`` and a node's allocatable
minus the requests of its running pods would fit it, but not once the long-Terminating
pods' requests are counted, those pods hold the GPUs: a stale allocation the kubelet
should have released. A node that is simply full, a pod asking for more than any node
has, or a resource no node advertises is no finding (healthy look-alikes in the field
corpus); unhealthy GPUs the device plugin withdrew are judged by ``gpus_allocatable``.

The kubelet may hold the GPUs themselves, too: a kubelet whose built-in cAdvisor collects
accelerator metrics (before DisableAcceleratorUsageMetrics) opens NVML and keeps a handle
on every GPU (``gpus_held_by_kubelet_nvml``), so a GPU's unbind from the nvidia driver (to
hand it to vfio-pci for a VM) waits on it for ever.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timedelta

from gpunode.bundle.kube import Pod
from gpunode.checks.base import LINE, MESSAGE, SOURCE, check, in_fleet, problem, reads
from gpunode.checks.context import NodeContext
from gpunode.checks.pods import collection_time
from gpunode.facts import ClusterFacts
from gpunode.gpus import quantity
from gpunode.model import Evidence, Finding, Status
from gpunode.relazy import lazy_compile

#: How long a pod may stay Terminating before the GPUs it holds are a stale allocation
#: (the default grace period is 30 s; a GPU job's cleanup rarely takes minutes).
STUCK_TERMINATING = timedelta(minutes=10)
_ENDED = frozenset({"Succeeded", "Failed"})


def _pending_workloads(facts: ClusterFacts) -> list[Pod] | None:
    """The fleet's GPU workload pods that no node runs (``workloads_by_node``'s ``""``)."""
    return facts.workloads_by_node.get("")


@check("kubelet", needs=("node",), may_find=in_fleet(_pending_workloads))
def gpus_held_by_terminating_pods(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A pending GPU pod the scheduler refused for ``Insufficient <resource>`` would fit on
    this node but for pods stuck Terminating here (module docstring)."""
    node, facts = ctx.node, ctx.facts
    pending = facts.workloads_by_node.get("", [])
    if node is None or not pending:
        return
    now = collection_time(facts.manifest.collected_at)
    live = [p for p in facts.workloads_by_node.get(ctx.name, []) if p.status.phase not in _ENDED]
    stuck = [p for p in live if _stuck(p, now)]
    if not stuck:  # nothing held here: no pending pod's events need reading (most nodes)
        return
    for pod in pending:
        for resource, need in _refused_for(ctx, pod):
            allocatable = quantity(node.status.allocatable.get(resource, "0"))
            used, held = _requested(live, resource), _requested(stuck, resource)
            if held and allocatable - used < need <= allocatable - used + held:
                yield _held(ctx, component, pod, resource=resource, counts=(allocatable, used, held),
                            stuck=stuck)
                return


def _refused_for(ctx: NodeContext, pod: Pod) -> list[tuple[str, int]]:
    """The GPU resources ``pod`` asks for that a FailedScheduling event calls insufficient."""
    meta = pod.metadata
    said = " ".join(ev.message for ev in ctx.facts.events_for("Pod", meta.namespace, meta.name)
                    if ev.reason == "FailedScheduling")
    return [(r, n) for r, n in _per_resource(pod).items() if n and f"Insufficient {r}" in said]


def _per_resource(pod: Pod) -> dict[str, int]:
    out: dict[str, int] = {}
    for container in pod.spec.containers:
        wanted = container.resources.requests or container.resources.limits
        for name, value in wanted.items():
            if name.startswith("nvidia.com/"):
                out[name] = out.get(name, 0) + quantity(value)
    return out


def _requested(pods: list[Pod], resource: str) -> int:
    """What ``pods`` request of ``resource``."""
    return sum(_per_resource(p).get(resource, 0) for p in pods)


def _stuck(pod: Pod, now: datetime | None) -> bool:
    """Terminating for longer than ``STUCK_TERMINATING`` before collection."""
    since = collection_time(pod.metadata.deletion_timestamp)
    return since is not None and now is not None and now - since > STUCK_TERMINATING


def _held(ctx: NodeContext, component: str, pod: Pod, *, resource: str, counts: tuple[int, int, int],
          stuck: list[Pod]) -> Finding:
    allocatable, used, held = counts
    names = ", ".join(f"{p.metadata.namespace}/{p.metadata.name}" for p in stuck)
    excerpt = (f"{pod.metadata.namespace}/{pod.metadata.name} Pending: Insufficient {resource}; "
               f"{resource} allocatable {allocatable}, requested {used} of which {held} by pods "
               f"Terminating for over {int(STUCK_TERMINATING.total_seconds() // 60)} min ({names})")
    known = ctx.kb.get("gpus_held_by_terminating_pods")
    return problem(component, "gpus_held_by_terminating_pods", Evidence(f"node/{ctx.name}", excerpt),
                   status=Status.DEGRADED, specificity=known.specificity)


#: The driver's words when a GPU is unbound (for vfio-pci, a reset, a removal) while a process
#: still has it open: the kernel then waits for the usage count to drop (nv-pci.c,
#: NVIDIA/open-gpu-kernel-modules#1374; an unbind that hangs on it, bryansteiner/
#: gpu-passthrough-tutorial#39, ipaqmaster/vfio#13 where nvidia-persistenced held it).
_REMOVAL_WAITS = lazy_compile(r"\bNVRM: Attempting to remove device \S{1,40} with non-zero usage count\b")
#: cAdvisor's accelerator manager inside the kubelet, once it opened NVML and took a handle on
#: each GPU (google/cadvisor accelerators/nvidia.go: "NVML initialized. Number of nvidia
#: devices: %v", then DeviceHandleByIndex for every one, kept until the kubelet exits).
_CADVISOR_NVML = lazy_compile(r"\bnvidia\.go:\d+\] NVML initialized\. Number of nvidia devices: [1-9]", re.I)


@check("kubelet", may_find=reads("cmd/journal-kubelet.txt"))
def gpus_held_by_kubelet_nvml(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The kernel waits to remove a GPU still in use, and the kubelet's journal shows its
    cAdvisor holding NVML handles on the GPUs (module docstring): the kubelet is what holds
    it. Either alone is no finding: cAdvisor's NVML on a node that never unbinds a GPU is
    its metrics, and an unbind waiting on some other holder is not the kubelet's."""
    dmesg = ctx.text_lines("cmd", "dmesg.txt")
    journal = ctx.text_lines("cmd", "journal-kubelet.txt")
    if dmesg is None or journal is None or "non-zero usage count" not in dmesg[1]:
        return
    removal = _last(dmesg[0], _REMOVAL_WAITS)
    opened = _last(journal[0], _CADVISOR_NVML)
    if removal is None or opened is None:
        return
    kernel_ev = Evidence(f"{ctx.obs.path_of('cmd', 'dmesg.txt')}:{removal[0] + 1}", removal[1])
    kubelet_ev = Evidence(f"{ctx.obs.path_of('cmd', 'journal-kubelet.txt')}:{opened[0] + 1}", opened[1])
    quoted = {LINE: removal[1], SOURCE: kernel_ev.source, MESSAGE: removal[1]}
    yield problem(component, "error_device", kernel_ev, kubelet_ev, status=Status.DEGRADED,
                  specificity=60, ctx=quoted)


def _last(lines: list[str], pattern: re.Pattern[str]) -> tuple[int, str] | None:
    """The last line ``pattern`` finds, with its index."""
    for index in range(len(lines) - 1, -1, -1):
        if pattern.search(lines[index]):
            return index, lines[index].strip()
    return None
