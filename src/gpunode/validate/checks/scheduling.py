"""Scheduling: GPU nodes schedulable, the nvidia RuntimeClass, pending GPU pods, GPU taints."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from gpunode.bundle.kube import Node, Pod, Taint
from gpunode.checks.context import NodeContext
from gpunode.model import Evidence
from gpunode.relazy import lazy_compile
from gpunode.validate.context import ValidationContext, condition_status, quantity
from gpunode.validate.registry import (
    count,
    failed,
    named,
    node_validation,
    passed,
    unknown,
    validation,
    warned,
)
from gpunode.validation import CATEGORY, Outcome

CAT = CATEGORY.SCHEDULING
GPU = "nvidia.com/gpu"
RUNTIME_CLASS = "nvidia"
INSUFFICIENT = f"Insufficient {GPU}"
_DONE = ("Succeeded", "Failed")
_INSUFFICIENT_OTHER = lazy_compile(r"Insufficient ([A-Za-z0-9./_-]+)")


@validation(
    "sched.gpu-nodes-schedulable",
    CAT,
    "GPU nodes schedulable (not cordoned)",
    fix="kubectl uncordon NODE once its maintenance is finished.",
    needs=("cluster/nodes",),
)
def gpu_nodes_schedulable(ctx: ValidationContext) -> Outcome:
    """A cordoned GPU node keeps its GPUs from every new pod."""
    nodes = [n for name in ctx.gpu_nodes if (n := ctx.node(name)) is not None]
    if not nodes:
        return unknown("no GPU node in cluster/nodes.json")
    cordoned = [n.metadata.name for n in nodes if n.spec.unschedulable]
    if cordoned:
        ev = [Evidence(f"node/{n} spec.unschedulable", "true") for n in cordoned]
        return failed(f"cordoned: {named(cordoned)}", *ev, nodes=cordoned)
    return passed(f"{len(nodes)} GPU nodes schedulable")


@node_validation(
    "sched.runtimeclass",
    CAT,
    "nvidia RuntimeClass exists where nvidia is not the default runtime",
    fix=(
        "Re-enable the GPU Operator's RuntimeClass (operator.runtimeClass) or create RuntimeClass "
        "nvidia, handler nvidia."
    ),
)
def runtime_class(ctx: ValidationContext, node: NodeContext) -> Outcome | None:
    """Pods reach the nvidia runtime through the default runtime or RuntimeClass ``nvidia``."""
    if not ctx.facts.has("runtimeclasses"):
        return unknown("RuntimeClasses not collected (cluster/runtimeclasses.json)")
    config = node.containerd
    if config is not None and config.default_runtime == RUNTIME_CLASS:
        path = (
            node.obs.path_of("files", config.sources[0].lstrip("/"))
            if config.sources
            else "containerd config"
        )
        return passed("nvidia is the default runtime", Evidence(path, 'default_runtime_name = "nvidia"'))
    classes = {rc.metadata.name: rc for rc in ctx.facts.runtime_classes}
    found = classes.get(RUNTIME_CLASS)
    if found is not None:
        ev = Evidence(f"runtimeclass/{RUNTIME_CLASS}", f"handler {found.handler}")
        return passed(f"RuntimeClass nvidia (handler {found.handler})", ev)
    default = config.default_runtime if config else None
    if config is None and not _cdi_enabled(node):
        return unknown("no RuntimeClass nvidia; the node's default runtime was not observed")
    detail = f"default runtime {default or 'runc'}" if config else "ClusterPolicy cdi.enabled=true"
    return failed(
        f"no RuntimeClass nvidia and {detail}", Evidence("cluster/runtimeclasses.json", "no nvidia")
    )


def _cdi_enabled(node: NodeContext) -> bool:
    cdi = node.cluster_policy_spec.get("cdi")
    return isinstance(cdi, dict) and bool(cdi.get("enabled")) and not cdi.get("default")


@dataclass(frozen=True)
class GpuCapacity:
    """Free GPUs per schedulable GPU node, from allocatable minus running GPU pods."""

    free: dict[str, int]
    allocatable: dict[str, int]
    withheld: dict[str, int]
    cordoned: list[str]
    #: ``fits`` by GPUs wanted: asked for every pending pod, most of them wanting the same.
    _fits: dict[int, list[str]] = field(default_factory=dict, compare=False, repr=False)

    @property
    def advertising_none(self) -> list[str]:
        """Schedulable GPU nodes whose device plugin advertises no GPU at all."""
        return sorted(n for n, a in self.allocatable.items() if a == 0)

    @cached_property
    def total_free(self) -> int:
        return sum(self.free.values())

    def fits(self, want: int) -> list[str]:
        if want not in self._fits:
            self._fits[want] = sorted(n for n, f in self.free.items() if f >= want)
        return self._fits[want]


def gpu_request(pod: Pod) -> int:
    """GPUs a pod asks for: the containers' sum, or the largest init container."""
    main = sum(quantity(_gpus(c.resources.limits, c.resources.requests)) for c in pod.spec.containers)
    init = max(
        (quantity(_gpus(c.resources.limits, c.resources.requests)) for c in pod.spec.init_containers),
        default=0,
    )
    return max(main, init)


def _gpus(limits: dict[str, str], requests: dict[str, str]) -> str | None:
    return limits.get(GPU) or requests.get(GPU)


def gpu_capacity(ctx: ValidationContext) -> GpuCapacity:
    """Free GPUs on each Ready, uncordoned GPU node."""
    used: dict[str, int] = {}
    for pod in ctx.facts.workload_pods:
        if pod.spec.node_name and pod.status.phase not in _DONE:
            used[pod.spec.node_name] = used.get(pod.spec.node_name, 0) + gpu_request(pod)
    free, allocatable, withheld, cordoned = {}, {}, {}, []
    for name in ctx.gpu_nodes:
        node = ctx.node(name)
        if node is None:
            continue
        alloc = quantity(node.status.allocatable.get(GPU))
        withheld[name] = max(quantity(node.status.capacity.get(GPU)) - alloc, 0)
        if node.spec.unschedulable or condition_status(node, "Ready") != "True":
            cordoned.append(name)
            continue
        allocatable[name] = alloc
        free[name] = max(alloc - used.get(name, 0), 0)
    return GpuCapacity(free, allocatable, withheld, cordoned)


def pending_gpu_pods(ctx: ValidationContext) -> list[Pod]:
    """Pods not yet bound to a node (two checks ask; a large cluster has 100,000 pods)."""
    return ctx.memo("pending_pods", lambda: [p for p in ctx.facts.workload_pods
                                             if p.status.phase == "Pending" and not p.spec.node_name])


@validation(
    "sched.gpu-fragmentation",
    CAT,
    "No GPU pod Pending while free GPUs could hold it",
    fix="Pack GPU pods (scheduler MostAllocated scoring or bin-packing) or drain the stragglers off a node.",
    needs=("cluster/pods", "cluster/nodes"),
)
def gpu_fragmentation(ctx: ValidationContext) -> Outcome:
    """A pending GPU pod that fits on a node, or fits only in the free GPUs summed: fragmentation."""
    pending = [p for p in pending_gpu_pods(ctx) if gpu_request(p)]
    if not pending:
        return passed("no GPU pod Pending")
    cap = gpu_capacity(ctx)
    stuck: list[tuple[Pod, str]] = []
    for pod in pending:
        want = gpu_request(pod)
        fits = cap.fits(want)
        if fits:
            why = _scheduling_message(ctx, pod) or "no scheduler message"
            stuck.append(
                (pod, f"needs {want} GPUs; {fits[0]} has {cap.free[fits[0]]} free; scheduler: {why}")
            )
        elif cap.total_free >= want:
            spread = ", ".join(f"{n}={f}" for n, f in sorted(cap.free.items()) if f)
            stuck.append((pod, f"needs {want} GPUs; {cap.total_free} free but fragmented ({spread})"))
    if not stuck:
        return passed(f"{count(len(pending), 'GPU pod')} Pending, none fits in the free GPUs")
    evidence = [Evidence(f"pod {_pod_name(p)}", why) for p, why in stuck]
    return failed(f"{count(len(stuck), 'GPU pod')} Pending although free GPUs could hold them", *evidence[:8])


@validation(
    "sched.gpu-pending-explained",
    CAT,
    f"No pod Pending on {INSUFFICIENT}",
    fix="Add GPU capacity, return withheld GPUs (Xid, cordon), or lower the pod's GPU request.",
    needs=("cluster/pods", "cluster/nodes"),
)
def gpu_pending(ctx: ValidationContext) -> Outcome:
    """Each pod Pending on insufficient GPUs, with why: cluster full, fragmented, withheld or too big."""
    waiting = [
        (p, msg) for p in pending_gpu_pods(ctx) if INSUFFICIENT in (msg := _scheduling_message(ctx, p))
    ]
    if not waiting:
        return passed(f"no pod Pending on {INSUFFICIENT}")
    cap = gpu_capacity(ctx)
    explained = [(p, *_explain(cap, gpu_request(p), msg)) for p, msg in waiting]
    evidence = [Evidence(f"pod {_pod_name(p)}", why) for p, _, why in explained]
    summary = f"{count(len(waiting), 'pod')} Pending on {INSUFFICIENT}: {explained[0][2]}"
    if any(never for _, never, _ in explained):
        return failed(summary, *evidence[:8])
    return warned(summary, *evidence[:8])


def _explain(cap: GpuCapacity, want: int, message: str) -> tuple[bool, str]:
    """(can never schedule?, why) for a request of ``want`` GPUs."""
    biggest = max(cap.allocatable.values(), default=0)
    if want > biggest:
        return True, f"requests {want} GPUs; the largest schedulable node has {biggest}"
    fits = cap.fits(want)
    if fits:
        others = sorted({r for r in _INSUFFICIENT_OTHER.findall(message) if r != GPU})
        blocker = f"blocked by Insufficient {', '.join(others)}" if others else "scheduler retry pending"
        return False, f"requests {want}; {fits[0]} has {cap.free[fits[0]]} free GPUs, {blocker}"
    reasons = []
    if cap.total_free >= want:
        reasons.append(f"fragmented: {cap.total_free} GPUs free across nodes, none has {want}")
    withheld = {n: w for n, w in cap.withheld.items() if w}
    if withheld:
        reasons.append("withheld as unhealthy: " + ", ".join(f"{n}={w}" for n, w in withheld.items()))
    if cap.advertising_none:
        reasons.append(f"no GPU advertised on {named(cap.advertising_none)}")
    if cap.cordoned:
        reasons.append(f"unschedulable nodes: {named(cap.cordoned)}")
    if not reasons:
        reasons.append(f"cluster full: all {sum(cap.allocatable.values())} allocatable GPUs in use")
    return False, f"requests {want}; " + "; ".join(reasons)


def _scheduling_message(ctx: ValidationContext, pod: Pod) -> str:
    cond = next((c for c in pod.status.conditions if c.type == "PodScheduled"), None)
    messages = [cond.message] if cond and cond.status == "False" else []
    events = ctx.facts.events_for("Pod", pod.metadata.namespace, pod.metadata.name)
    messages += [e.message for e in events if e.reason == "FailedScheduling"]
    return " ".join(dict.fromkeys(m for m in messages if m))


def _pod_name(pod: Pod) -> str:
    return f"{pod.metadata.namespace}/{pod.metadata.name}"


@node_validation(
    "sched.gpu-taints-tolerated",
    CAT,
    "GPU node taints tolerated by the GPU stack's own pods",
    fix=(
        "Add the taint to the operator's daemonsets.tolerations (ClusterPolicy / NicClusterPolicy "
        "/ Helm values)."
    ),
)
def gpu_taints_tolerated(ctx: ValidationContext, node: NodeContext) -> Outcome | None:
    """Every stack DaemonSet selecting this node tolerates its NoSchedule/NoExecute taints."""
    if node.node is None:
        return unknown("node not in cluster/nodes.json")
    taints = _own_taints(node.node)
    if not taints:
        return passed("no GPU taints")
    blocked = [
        (c, hit) for c in sorted(ctx.facts.daemonsets) if (hit := node.untolerated_taint(c)) is not None
    ]
    if blocked:
        ev = [
            Evidence(
                f"daemonset {ds.metadata.namespace}/{ds.metadata.name}", f"does not tolerate {_taint(t)}"
            )
            for _, (ds, t) in blocked
        ]
        return failed(f"{named([c for c, _ in blocked])} do not tolerate {_taint(blocked[0][1][1])}", *ev)
    return passed(f"{', '.join(taints)} tolerated by the stack DaemonSets")


def _own_taints(node: Node) -> list[str]:
    """Taints an administrator put on the node (not the kubelet's condition taints)."""
    return [
        _taint(t)
        for t in node.spec.taints
        if t.effect in ("NoSchedule", "NoExecute") and not t.key.startswith("node.kubernetes.io/")
    ]


def _taint(t: Taint) -> str:
    return f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}"
