"""GPU nodes a selection left out, and whether they look sick (pure; one place for
``diagnose``, ``stack``, ``validate`` and the live collector).

A selector is the user's choice of nodes, but the labels it names are often set by the
very stack it should check: a driver failure removes GFD's ``nvidia.com/gpu.product``, so
``-l nvidia.com/gpu.product=…`` drops the broken node and reports a healthy fleet. So every
command that chose nodes by ``-l`` or by name says how many GPU nodes it left out and which
of them look sick from what the cluster lists show cheaply: the node's Ready condition, GFD's
product label where other GPU nodes carry one, GPUs advertised as 0, and its GPU-stack pods
that fail. Those signs are a hint to widen the selection, never a verdict.

Pods are read through :class:`PodLike`, which both the collector's slim pods and the
bundle loader's pods satisfy.
"""

from __future__ import annotations

import sys
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from gpunode.gpus import GPU, MIG_PREFIX, has_gpu_evidence
from gpunode.model import LeftOutNode, Report, Selection

if TYPE_CHECKING:
    from gpunode.bundle.kube import Node
    from gpunode.facts import ClusterFacts

#: The label GFD sets on every GPU node it has read (gone after a driver failure).
PRODUCT_LABEL = "nvidia.com/gpu.product"
#: Waiting reasons of a container on its way to start (not a sign).
_STARTING = frozenset({"", "ContainerCreating", "PodInitializing"})
#: Failing pods named per node before "… and N more".
_PODS_NAMED = 3
#: Sick nodes named in the stderr line before "… and N more".
_NODES_NAMED = 5


class _Waiting(Protocol):
    @property
    def reason(self) -> str: ...


class _Terminated(Protocol):
    @property
    def reason(self) -> str: ...

    @property
    def exit_code(self) -> int: ...


class _State(Protocol):
    @property
    def waiting(self) -> _Waiting | None: ...

    @property
    def terminated(self) -> _Terminated | None: ...


class _ContainerStatus(Protocol):
    @property
    def ready(self) -> bool: ...

    @property
    def state(self) -> _State: ...


class _PodStatus(Protocol):
    @property
    def phase(self) -> str: ...

    @property
    def container_statuses(self) -> Sequence[_ContainerStatus]: ...

    @property
    def init_container_statuses(self) -> Sequence[_ContainerStatus]: ...


class _Meta(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def namespace(self) -> str: ...


class PodLike(Protocol):
    """What the signs read of a pod (collect.slim.Pod and bundle.kube.Pod both have it)."""

    @property
    def metadata(self) -> _Meta: ...

    @property
    def status(self) -> _PodStatus: ...


#: node -> component -> its pods on that node
StackByNode = Mapping[str, Mapping[str, Sequence[PodLike]]]


def pod_trouble(pod: PodLike) -> str | None:
    """The state that makes a stack pod look failing, as ``kubectl get pods`` words it
    (CrashLoopBackOff, Init:Error, Failed, Pending, not ready); None while it looks fine."""
    status = pod.status
    if status.phase == "Failed":
        return "Failed"
    for init in status.init_container_statuses:
        said = _container_trouble(init)
        if said:
            return f"Init:{said}"
    for container in status.container_statuses:
        said = _container_trouble(container)
        if said:
            return said
    if status.phase == "Pending" and not status.container_statuses and not status.init_container_statuses:
        return "Pending"
    if status.phase == "Running" and any(not c.ready for c in status.container_statuses):
        return "Running, not ready"
    return None


def _container_trouble(container: _ContainerStatus) -> str | None:
    state = container.state
    if state.waiting is not None and state.waiting.reason not in _STARTING:
        return state.waiting.reason
    if state.terminated is not None and state.terminated.exit_code != 0:
        return state.terminated.reason or f"exit {state.terminated.exit_code}"
    return None


def node_signs(node: Node, pods: Mapping[str, Sequence[PodLike]], gfd_in_use: bool) -> tuple[str, ...]:
    """What makes a GPU node look sick from the lists; empty when nothing does."""
    signs = []
    ready = next((c for c in node.status.conditions if c.type == "Ready"), None)
    if ready is not None and ready.status != "True":
        why = ", ".join(w for w in (f"Ready={ready.status}" if ready.status != "False" else "",
                                    ready.reason) if w)
        signs.append(f"NotReady ({why})" if why else "NotReady")
    if gfd_in_use and PRODUCT_LABEL not in node.metadata.labels:
        signs.append(f"no {PRODUCT_LABEL} label (other GPU nodes have GFD's labels)")
    signs.extend(_gpus_short(node))
    failing = [(f"{p.metadata.namespace}/{p.metadata.name}", said)
               for component in sorted(pods) for p in pods[component] if (said := pod_trouble(p))]
    signs.extend(f"pod {name} {said}" for name, said in failing[:_PODS_NAMED])
    if len(failing) > _PODS_NAMED:
        signs.append(f"{len(failing) - _PODS_NAMED} more failing stack pods")
    return tuple(signs)


def _gpus_short(node: Node) -> list[str]:
    """GPU resources the node advertises fewer of than it has (the device plugin marked GPUs
    unhealthy), or none at all (a plugin that registered and sees no GPU)."""
    capacity, allocatable = node.status.capacity, node.status.allocatable
    keys = sorted(k for k in {**capacity, **allocatable} if k.startswith((GPU, MIG_PREFIX)))
    counts = {k: (_count(allocatable.get(k, capacity.get(k, "0"))), _count(capacity.get(k, "0")))
              for k in keys}
    if keys and not any(free for free, _ in counts.values()):
        return [f"advertises 0 {k}" + (f" of {total}" if total else "") for k, (_, total) in counts.items()]
    return [f"advertises {free} of {total} {k}" for k, (free, total) in counts.items() if free < total]


def _count(quantity: str) -> int:
    return int(quantity) if quantity.isdigit() else 0


def left_out(nodes: Iterable[Node], stack: StackByNode, chosen: Collection[str], *,
             gfd_in_use: bool = False) -> tuple[LeftOutNode, ...]:
    """The GPU nodes among ``nodes`` that are not ``chosen``, each with its signs of sickness,
    sick ones first (then by name). GFD counts as in use where a GPU node among ``nodes``
    carries its product label, or where the caller saw one elsewhere (``gfd_in_use``)."""
    gpu = [n for n in nodes if _gpu_node(n, stack)]
    gfd_in_use = gfd_in_use or any(PRODUCT_LABEL in n.metadata.labels for n in gpu)
    found = [LeftOutNode(n.metadata.name, node_signs(n, stack.get(n.metadata.name, {}), gfd_in_use))
             for n in gpu if n.metadata.name not in chosen]
    return tuple(sorted(found, key=lambda n: (not n.signs, n.name)))


def _gpu_node(node: Node, stack: StackByNode) -> bool:
    resources = {**node.status.capacity, **node.status.allocatable}
    return has_gpu_evidence(node.metadata.labels, resources, list(stack.get(node.metadata.name, {})), ())


def selection_of(facts: ClusterFacts, wanted: Sequence[str], names: Sequence[str],
                 selector: str | None) -> Selection | None:
    """How a command chose its nodes and the GPU nodes that choice left out: those of the
    bundle not ``wanted`` (``[]``: every node) and those the collector's own selector kept out
    of the bundle (the manifest's ``left_out``). None when nothing was chosen or left out."""
    recorded = tuple(n for n in facts.manifest.left_out if n.name not in facts.nodes)
    if not wanted and not recorded:
        return None
    here: tuple[LeftOutNode, ...] = ()
    if wanted:
        stack = {node: {c: [sp.pod for sp in pods] for c, pods in by_component.items()}
                 for node, by_component in facts.pods_by_node.items()}
        here = left_out(facts.nodes.values(), stack, set(wanted))
    every = sorted((*here, *recorded), key=lambda n: (not n.signs, n.name))
    return Selection(selector=selector or facts.manifest.node_selector or None, names=tuple(names),
                     left_out=tuple(every))


def warning_lines(selection: Selection | None, reported: int | None = None) -> list[str]:
    """The stderr lines: how many GPU nodes the selection left out (of how many, when the
    ``reported`` GPU nodes are known), and which look sick (a ``warning:``; a ``note:`` when
    none does)."""
    if selection is None or not selection.left_out:
        return []
    chose = _chosen_by(selection)
    count = len(selection.left_out)
    sick = [n for n in selection.left_out if n.signs]
    of = f" of {count + reported}" if reported is not None else ""
    head = f"{count}{of} GPU node{'s' if count + (reported or 0) != 1 else ''} left out by {chose}"
    if not sick:
        return [f"note: {head}; none looks sick from the lists (Ready, GFD labels, stack pods)"]
    lines = [f"warning: {head}; {len(sick)} {'looks' if len(sick) == 1 else 'look'} sick (widen the "
             f"selection to diagnose {'it' if len(sick) == 1 else 'them'}):"]
    lines += [f"  {n.name}: {'; '.join(n.signs)}" for n in sick[:_NODES_NAMED]]
    if len(sick) > _NODES_NAMED:
        lines.append(f"  … and {len(sick) - _NODES_NAMED} more")
    return lines


def _chosen_by(selection: Selection) -> str:
    parts = []
    if selection.selector is not None:
        parts.append(f"--selector {selection.selector!r}")
    if selection.names:
        parts.append("the node names given")
    return " and ".join(parts) or "the selection"


def print_warnings(selection: Selection | None, reported: int | None = None) -> None:
    """``warning_lines`` on stderr (node names and pod states come from the API: no terminal
    sequences)."""
    from gpunode.safety import strip_controls

    for line in warning_lines(selection, reported):
        print(strip_controls(line), file=sys.stderr)


def warn_first(report: Report) -> None:
    """What could not be seen, on stderr before the report: a verdict reads differently then."""
    from gpunode.safety import strip_controls

    for warning in report.source.warnings:
        print(f"warning: {strip_controls(warning)}", file=sys.stderr)
    print_warnings(report.selection, len(report.nodes))
    if not report.nodes and not report.not_gpu_nodes:
        print(f"warning: {strip_controls(report.source.location)}: no GPU node found "
              "(no GPU node in cluster/nodes.json and no nodes/ directory)", file=sys.stderr)
