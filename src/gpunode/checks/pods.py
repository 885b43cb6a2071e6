"""Generic pod checks: the state of a component's pods on the node.

These apply to every pod-run component and name generic causes (crash loop,
image pull, stuck in init). Signatures in logs and events refine them later.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from itertools import repeat
from operator import attrgetter
from typing import cast

from gpunode.bundle.kube import ContainerStatus, DaemonSet, Pod, StateTerminated, Taint
from gpunode.catalog import Component
from gpunode.checks import operator
from gpunode.checks.base import (
    ALL_POD_COMPONENTS,
    EXPLAINS,
    LINE,
    MESSAGE,
    SOURCE,
    VERB,
    check,
    not_deployed,
    ok,
    problem,
    unknown,
)
from gpunode.checks.context import NodeContext
from gpunode.checks.placement import Awaited, Unmet, setter, unmet
from gpunode.decisive import clipped
from gpunode.facts import ClusterFacts, StackPod
from gpunode.model import Evidence, Finding, Status
from gpunode.relazy import lazy_compile
from gpunode.startup_taints import left_startup_taint, startup_taint_owner

RESTART_WARNING = 5
CONTROL_PLANE_TAINTS = frozenset({"node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master"})
_PULL_REASONS = {"ImagePullBackOff", "ErrImagePull", "InvalidImageName", "ErrImageNeverPull"}
_CREATE_REASONS = {"CreateContainerConfigError", "CreateContainerError", "RunContainerError"}


@check(ALL_POD_COMPONENTS, needs=("cluster/pods",))
def pod_state(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """Judge each pod of the component on this node, or its absence."""
    pods = ctx.stack_pods(component)
    if not pods:
        absent = absent_shared(ctx, component)
        if absent is not None:
            yield absent
        return
    if not ctx.node_reporting:
        yield unknown(component, "pod status is stale: the node is not reporting")
        return
    now, read = None, False  # (when the facts were collected: read at a pod that is not plainly running)
    for sp in pods:
        pod = sp.pod
        if ready := plainly_running(pod):  # (most pods of most nodes: judge_pod's ok, built here)
            yield running_ok(pod, component, ready)
            continue
        if not read:
            now, read = collection_time(ctx.facts.manifest.collected_at), True
        finding = judge_pod(pod, component, now)
        idle = _deliberately_idle(ctx, sp.pod) if finding.cause == "init_blocked" else None
        yield ok(component, idle, pod="true") if idle else finding


# Init containers that hold their pod back on purpose, saying so in their log.
_IDLE_LINES = {
    "NVIDIA GPU driver is already pre-installed on the node": "driver pre-installed on the host; "
    "the operator's driver pod idles by design",
}


def _deliberately_idle(ctx: NodeContext, pod: Pod) -> str | None:
    """The summary of an init container that waits on purpose (k8s-driver-manager on a
    node whose driver is installed on the host), or None."""
    for log in ctx.logs_of(pod):
        for marker, summary in _IDLE_LINES.items():
            if not log.previous and any(marker in line for line in log.lines[-50:]):
                return summary
    return None


def _absent(ctx: NodeContext, component: str) -> Finding | None:
    """What no pod of the component here means; None where its own checks judge it."""
    entry = ctx.facts.catalog.by_id[component]
    targeting = ctx.daemonsets_targeting(component)
    # No DaemonSet of the component in the cluster (most of the catalog on a node): none
    # waits for a label here, is kept off by a taint or selects a label the admin should set.
    deployed = bool(ctx.facts.daemonsets.get(component))
    found: Finding | None
    if targeting and not ctx.facts.pods_seen_in(targeting[0].metadata.namespace):
        ds = targeting[0]
        found = unknown(component, f"pods of {ds.metadata.namespace} were not listed",
                        Evidence("manifest.json scoped", f"no pod list for {ds.metadata.namespace}"))
    elif not targeting and not ctx.pods_complete:
        found = None if entry.host_alternative else unknown(
            component, "no pod found, but pods were listed only in some namespaces",
            Evidence("manifest.json scoped", "cluster/pods.json is not cluster-wide"))
    elif (instead := ctx.replaced_by(component)) is not None:
        found = not_deployed(component, _replaced(instead))
    elif (skipped := _operator_skip(ctx, entry)) is not None:
        found = not_deployed(component, skipped)
    elif deployed and not targeting and (waits := _awaits_labels(ctx, component)) is not None:
        found = waits
    elif (not_gpu := _operator_not_gpu(ctx, entry)) is not None:
        found = not_deployed(component, not_gpu)
    elif targeting:
        ds = targeting[0]
        ev = Evidence(
            f"daemonset {ds.metadata.namespace}/{ds.metadata.name}",
            f"desired={ds.status.desired_number_scheduled} ready={ds.status.number_ready}; "
            f"no pod on {ctx.name}",
        )
        found = problem(
            component, "pod_missing", ev, namespace=ds.metadata.namespace, daemonset=ds.metadata.name
        )
    elif deployed and (blocked := ctx.untolerated_taint(component)) is not None:
        found = _taint_blocks(ctx, component, *blocked)
    else:
        found = (_unlabelled(ctx, entry) if deployed else None) or _untargeted(ctx, entry)
    return found


def absent_shared(ctx: NodeContext, component: str) -> Finding | None:
    """``_absent``, read once per distinct ``absence_key`` of the nodes and shared (a pool's
    thousands of nodes have a handful): most of a node's components have no pod there, and
    their reading is the same on every node alike in what it reads. A component whose
    reading may read more (not in ``shareable_components``) is read on its node. The
    readings of one key are one table (``facts.shared[absence_key]``), found once per node,
    so a component's is looked up by its id alone."""
    table: dict[str, Finding | None]
    shareable: frozenset[str]
    known = ctx.memo.get(_ABSENT)  # (no cast() call: asked for most components of every node)
    _, shareable, table = _absence(ctx) if known is None else known  # type: ignore[misc]
    if component not in shareable:
        return _absent(ctx, component)
    found = table.get(component, _UNREAD)
    if found is _UNREAD:
        found = table[component] = _absent(ctx, component)
    return found  # type: ignore[return-value]  # (only _absent's readings are kept in the table)


_ABSENT, _SHAREABLE = "absent", "absent-shareable"
_UNREAD = object()
#: A node's ``absence_key``, the facts' ``shareable_components`` and the readings shared by
#: the nodes of that key (component id -> ``_absent``'s reading), kept in ``ctx.memo``.
_Absence = tuple[tuple[object, ...], frozenset[str], dict[str, Finding | None]]
#: Node labels that ``_absent`` reads of a component with no DaemonSet (``_operator_skip``:
#: the operator's operands switch, its workload config and each operand's state label).
ABSENT_LABELS = (operator.OPERANDS_LABEL, operator.WORKLOAD_CONFIG,
                 *(label for label, _ in operator.OPERANDS.values()))


def absence_key(ctx: NodeContext) -> tuple[object, ...]:
    """What ``_absent`` reads of a node for a component in ``shareable_components``: whether
    the node object is there, the labels in ``ABSENT_LABELS``, whether NFD's NVIDIA PCI label
    is set (``_operator_not_gpu``), the platform (what it provides, its title:
    ``_untargeted``) and whether pods were listed cluster-wide. The rest it reads is the
    cluster's (catalog, ClusterPolicy), the same for every node of these facts, which hold
    the shared readings."""
    known = ctx.memo.get(_ABSENT)
    return (_absence(ctx) if known is None else cast("_Absence", known))[0]


def _absence(ctx: NodeContext) -> _Absence:
    """``absence_key``, ``shareable_components`` and the key's shared readings, once per node."""
    node = ctx.node
    labels = node.metadata.labels if node is not None else None
    read = None if labels is None else (
        tuple(map(labels.get, ABSENT_LABELS)), operator.has_nvidia_pci_label(labels))
    platform = ctx.platform
    key = (_ABSENT, read, platform.provides, platform.title, ctx.pods_complete)
    shared = ctx.facts.shared
    table: dict[str, Finding | None] | None = shared.get(key)  # type: ignore[assignment]  # (no cast() call)
    if table is None:
        table = shared[key] = {}
    known = ctx.memo[_ABSENT] = (key, shareable_components(ctx.facts), table)
    return known


def shareable_components(facts: ClusterFacts) -> frozenset[str]:
    """The components whose ``_absent`` reading depends on no more than ``absence_key`` and
    the cluster: no DaemonSet of theirs in the cluster (none targets a node, waits for a
    label or is kept off by a taint), none that another component replaces (``replaced_by``
    names the replacing pod, ``_meant_for_another`` reads the replacer's selector against
    the node's labels), none required (its absence is ``component_missing``, whose evidence
    names the node). Once per facts."""
    known = facts.shared.get(_SHAREABLE)
    if known is None:
        catalog = facts.catalog
        known = facts.shared[_SHAREABLE] = frozenset(
            c.id for c in catalog.components
            if not c.required and not facts.daemonsets.get(c.id) and not catalog.replacers(c.id))
    return known  # type: ignore[return-value]  # (no cast() call: asked for every node)


def _admin_label_unset(ctx: NodeContext, component: str) -> tuple[DaemonSet, Unmet] | None:
    """The component's DaemonSet that misses this node only for a label absent here that no
    known component sets (the one an install guide has the admin put on GPU nodes, as HAMi's
    gpu=on), or None."""
    node = ctx.node
    if node is None:
        return None
    for ds in ctx.facts.daemonsets.get(component, ()):
        missing = unmet(ds.spec.template.spec, node.metadata.labels)
        if len(missing) == 1 and missing[0].has is None and \
                setter(ctx.facts.catalog, missing[0].key, node.metadata.labels) is None:
            return ds, missing[0]
    return None


def _gpus_unserved(ctx: NodeContext, entry: Component) -> bool:
    """No pod of the component, of one it replaces or of one that replaces those runs here:
    nothing on this GPU node hands its GPUs to pods."""
    catalog = ctx.facts.catalog
    family = {entry.id, *entry.replaces}
    family |= {c.id for target in entry.replaces for c in catalog.replacers(target)}
    return not any(ctx.stack_pods(c) for c in family)


def _unlabelled(ctx: NodeContext, entry: Component) -> Finding | None:
    """A plugin that hands GPUs to pods (catalog ``advertises``) deployed by a DaemonSet that
    selects a label this node lacks and no component sets, on a GPU node where no plugin
    serves the GPUs: the missing label is why the node offers none (HAMi's device plugin
    selects gpu=on, which its install guide has the admin set; Project-HAMi/HAMi#2280). A
    node served by another plugin was left out on purpose and stays not deployed."""
    if not entry.advertises or not entry.replaces or not _gpus_unserved(ctx, entry):
        return None
    found = _admin_label_unset(ctx, entry.id)
    if found is None:
        return None
    ds, label = found
    meta = ds.metadata
    said = f"daemonset {meta.namespace}/{meta.name} selects {label.wanted}; no such label on {ctx.name}"
    ev = Evidence(f"node/{ctx.name} metadata.labels", said)
    return problem(entry.id, "selector_label_missing", ev, namespace=meta.namespace, daemonset=meta.name,
                   label=label.key, setter="the cluster admin")


def _meant_for_another(ctx: NodeContext, component: str) -> str | None:
    """Why a replaceable component (NVIDIA's device plugin) has no pod on a node whose GPUs
    the cluster meant for a plugin that replaces it, kept off only by an admin's label
    (``_unlabelled`` judges that plugin): its absence is no fault of its own."""
    for alt in ctx.facts.catalog.replacers(component):
        if alt.advertises and (found := _admin_label_unset(ctx, alt.id)) is not None:
            ds, label = found
            return (f"left to {alt.id} (daemonset {ds.metadata.namespace}/{ds.metadata.name}), "
                    f"which selects {label.wanted}")
    return None


def _replaced(instead: StackPod) -> str:
    """Why a component has no pod here: another one does its job (catalog ``replaces``)."""
    meta = instead.pod.metadata
    return f"replaced by {instead.component} (pod {meta.namespace}/{meta.name})"


def _taint_blocks(ctx: NodeContext, component: str, ds: DaemonSet, taint: Taint) -> Finding:
    if taint.key in CONTROL_PLANE_TAINTS:  # usual on control planes: not scheduled there by design
        return not_deployed(component, f"{ds.metadata.name} does not tolerate {taint.key} (control plane)")
    owner = startup_taint_owner(taint.key)
    if owner is not None and ctx.node is not None and owner != component and left_startup_taint(
            ctx.node, owner, [sp.pod for sp in ctx.stack_pods(owner)]) is not None:
        # the startup taint its owner, ready here, never lifted: the owner's (checks/startup_taint.py)
        return unknown(component, f"kept off by {taint.key}, the startup taint {owner} has not lifted",
                       Evidence(f"node/{ctx.name} spec.taints", f"{taint.key}:{taint.effect}"))
    ev = Evidence(
        f"node/{ctx.name} spec.taints",
        f"{taint.key}={taint.value}:{taint.effect} not tolerated by daemonset "
        f"{ds.metadata.namespace}/{ds.metadata.name}",
    )
    return problem(
        component, "taint_not_tolerated", ev, namespace=ds.metadata.namespace, daemonset=ds.metadata.name
    )


def _untargeted(ctx: NodeContext, entry: Component) -> Finding | None:
    """No DaemonSet of ours targets the node: the platform's part, the host's, or missing."""
    component = entry.id
    if (meant := _meant_for_another(ctx, component)) is not None:
        return not_deployed(component, meant)
    if component in ctx.platform.provides:
        title = ctx.platform.title
        return unknown(component, f"installed by the platform ({title}), not by a pod gpunode knows")
    if entry.host_alternative:
        return None  # judged from host evidence by the component's own checks
    if entry.required:
        return problem(
            component, "component_missing", Evidence("cluster/pods.json", f"no {component} pod on {ctx.name}")
        )
    return not_deployed(component, "no pods and no DaemonSet for this node")


def awaits_labels(ctx: NodeContext, component: str) -> Awaited | None:
    """Why the component has no pod here when that is another component's doing: its
    DaemonSet selects labels that NFD, GFD or the GPU Operator is expected to set on this
    node and has not (checks/placement.py). None when it has a pod, a DaemonSet that
    targets the node, or is deliberately not deployed here."""
    if ctx.stack_pods(component) or ctx.daemonsets_targeting(component):
        return None
    waits = ctx.awaited_labels(component)
    if waits is None or waits.setter == component or waits.setter not in ctx.labels_expected_from:
        return None
    if _operator_skip(ctx, ctx.facts.catalog.by_id[component]) is not None:
        return None
    return waits


#: Setters of labels that are node components: they answer for the pods waiting on them.
_NODE_SETTERS = ("nfd", "gfd")


def _labels_not_set(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """Stack components without a pod here because their DaemonSets select labels this
    component (NFD, GFD) should have set on the node: its failure, wherever its own pod
    runs (nfd-master on another node), and the reason theirs are missing (``explains``)."""
    if ctx.node is None or component not in ctx.labels_expected_from:
        return
    waiting: dict[str, Awaited] = {}
    for entry in ctx.facts.catalog.node_components():
        if entry.kind == "pod" and entry.id != component and ctx.facts.daemonsets.get(entry.id):
            waits = awaits_labels(ctx, entry.id)
            if waits is not None and waits.setter == component:
                waiting[entry.id] = waits
    if not waiting:
        return
    evidence = [Evidence(f"node/{ctx.name} metadata.labels", f"{w.evidence}; no such label on {ctx.name}")
                for w in waiting.values()]
    labels = sorted({u.key for w in waiting.values() for u in w.unmet})
    # NFD that labels the node but not with the NVIDIA vendor label says why the labels that
    # follow from it (the operator's gpu.present, gpu.deploy.*) never came
    node_labels = ctx.node.metadata.labels
    missed = component == "nfd" and operator.nfd_label_unread(node_labels, bool(ctx.facts.cluster_policies))
    yield problem(component, "nfd_pci_label_missing" if missed else "node_labels_missing", *evidence,
                  specificity=35, explains=",".join(waiting), label=labels[0], waiting=", ".join(waiting))


@check("nfd", needs=("node", "cluster/pods", "cluster/daemonsets"))
def nfd_labels_awaited(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """NFD has not labelled this GPU node, and stack DaemonSets wait for its labels."""
    yield from _labels_not_set(ctx, component)


@check("gfd", needs=("node", "cluster/pods", "cluster/daemonsets"))
def gfd_labels_awaited(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """GFD has not labelled this GPU node, and stack DaemonSets wait for its labels."""
    yield from _labels_not_set(ctx, component)


def _awaits_labels(ctx: NodeContext, component: str) -> Finding | None:
    """No pod because the component's DaemonSet selects labels another component should
    have set here (``awaits_labels``): that component is why, and says so on its side."""
    waits = awaits_labels(ctx, component)
    if waits is None:
        return None
    ds = waits.daemonset.metadata
    ev = Evidence(f"node/{ctx.name} metadata.labels", f"{waits.evidence}; no such label on {ctx.name}")
    return problem(component, "selector_label_missing", ev, namespace=ds.namespace, daemonset=ds.name,
                   label=waits.unmet[0].key, setter=waits.setter)


def _operator_not_gpu(ctx: NodeContext, entry: Component) -> str | None:
    """The GPU Operator deploys its operands only where NFD labelled an NVIDIA PCI device."""
    if entry.deployed_by != "gpu-operator" or not ctx.facts.cluster_policies or ctx.operator_sees_gpu:
        return None
    return "the GPU Operator does not treat this node as a GPU node (no NFD NVIDIA PCI label)"


def _operator_skip(ctx: NodeContext, entry: Component) -> str | None:
    """The GPU Operator's own reason for deploying no pod of this operand here (disabled in
    the ClusterPolicy or on the node, sandbox workloads)."""
    node = ctx.node
    if entry.deployed_by != "gpu-operator" or node is None:
        return None
    vm = operator.vm_workload(node.metadata.labels, ctx.cluster_policy_spec, bool(ctx.facts.cluster_policies))
    if vm is not None and entry.id in operator.OPERANDS:  # the driver and toolkit too
        return operator.vm_reason(vm)
    if not ctx.facts.cluster_policies:
        return None
    labels = node.metadata.labels
    # A host-installed driver or toolkit is judged from the host, whatever the policy says.
    spec = None if entry.host_alternative else ctx.cluster_policy_spec
    return operator.skip_reason(entry.id, labels, spec)


def judge_pod(pod: Pod, component: str, now: datetime | None = None) -> Finding:
    """The worst thing about one pod, as a finding (``now``: when the facts were collected,
    which makes a restart after an error recent or old)."""
    finding = pod_problem(pod, component, now)
    if finding is not None:
        return finding
    return _read_ok(pod, component)


def _read_ok(pod: Pod, component: str) -> Finding:
    """A healthy pod's ``ok``, read from its status (``running_ok`` is its short form)."""
    return ok(component, _ok_summary(pod), _pod_evidence(pod, "status.phase", pod.status.phase), pod="true")


def running_ok(pod: Pod, component: str, ready: int) -> Finding:
    """``_read_ok`` of a pod ``plainly_running`` found running ``ready`` containers, without
    reading its status again (most pods of most nodes; tests/core/test_plainly_running.py holds
    the two equal)."""
    meta = pod.metadata
    return ok(component, f"{ready}/{ready} ready, 0 restarts",
              Evidence(f"pod {meta.namespace}/{meta.name} status.phase", "Running"), pod="true")


def pod_problem(pod: Pod, component: str, now: datetime | None = None) -> Finding | None:
    """``judge_pod``'s finding when it is not ``ok`` (a check that looks for sick pods among
    thousands skips building the healthy ones' findings); None for a healthy pod."""
    if plainly_running(pod):  # (most pods: none of the readings below finds anything)
        return None
    finding = _init_problem(pod, component) or _container_problem(pod, component, now)
    return finding or _phase_problem(pod, component)


def _init_problem(pod: Pod, component: str) -> Finding | None:
    statuses = pod.status.init_container_statuses
    if not statuses or pod.status.phase in ("Succeeded", "Failed") or all(map(_init_done, statuses)):
        return None
    done = sum(1 for s in statuses if _init_done(s))
    stuck = next(s for s in statuses if not _init_done(s))
    crash = _waiting_reason(stuck) == "CrashLoopBackOff" or stuck.restart_count > 0
    cause = "init_failed" if crash else "init_blocked"
    if _waiting_reason(stuck) in _PULL_REASONS:  # it waits for its own image, not a lower layer
        cause = "image_pull_failed"
    state = f"Init:{'CrashLoopBackOff' if crash else f'{done}/{len(statuses)}'}"
    ev = _pod_evidence(pod, f"status.initContainerStatuses[{stuck.name}]", _describe(stuck))
    return problem(component, cause, ev, ctx=_ctx(pod, stuck.name), pod_state=state)


def _container_problem(pod: Pod, component: str, now: datetime | None) -> Finding | None:
    for cs in pod.status.container_statuses:
        finding = _judge_container(pod, cs, component, now)
        if finding is not None:
            return finding
    return None


def _judge_container(pod: Pod, cs: ContainerStatus, component: str, now: datetime | None) -> Finding | None:
    reason = _waiting_reason(cs)
    last = cs.last_state.terminated
    status = Status.FAILED
    if reason == "CrashLoopBackOff":
        cause = "oom_killed" if last and last.reason == "OOMKilled" else "crash_loop"
    elif reason in _PULL_REASONS:
        cause = "image_pull_failed"
    elif reason in _CREATE_REASONS or reason == "ContainerCreating":
        cause = "container_create_failed"
    elif cs.state.running is not None and not cs.ready and pod.status.phase == "Running":
        cause, status = "pod_not_ready", Status.DEGRADED
    elif cs.restart_count >= RESTART_WARNING and last is not None and last.reason != "Completed":
        cause, status = "restarting", Status.DEGRADED
    elif cs.state.running is not None and last is not None \
            and (_ended_badly_lately(last, now) or _fails_at_work(cs, last)) \
            and not _start_up_race(cs, last):
        cause = "oom_killed" if last.reason == "OOMKilled" else "restarting"
        status = Status.DEGRADED
    else:
        return None
    ev = _pod_evidence(pod, f"status.containerStatuses[{cs.name}]", _describe(cs))
    return problem(component, cause, ev, status=status, ctx=_ctx(pod, cs.name))


#: How long a restart after an error stays news: longer ago it was a start-up race.
RECENT_RESTART = timedelta(hours=1)


def _ended_badly_lately(last: StateTerminated, now: datetime | None) -> bool:
    """The container runs again after it was OOM-killed (at any time: its limit still
    stands), or after an error less than ``RECENT_RESTART`` before collection."""
    if last.reason == "OOMKilled":
        return True
    if last.reason != "Error" or last.exit_code == 0 or now is None or not last.finished_at:
        return False
    finished = collection_time(last.finished_at)
    return finished is not None and now - finished <= RECENT_RESTART


#: How many restarts make an error exit a habit rather than one bad start.
REPEATED_RESTARTS = 2


def _fails_at_work(cs: ContainerStatus, last: StateTerminated) -> bool:
    """The container restarted more than once and its last run ended in an error after it
    had worked for longer than the start-up race: it fails in its work, again and again,
    so the error stays news however long ago the last exit was."""
    if cs.restart_count < REPEATED_RESTARTS or last.reason != "Error" or last.exit_code == 0:
        return False
    began, ended = collection_time(last.started_at), collection_time(last.finished_at)
    return began is not None and ended is not None and ended - began > START_UP_RACE


#: How long a container's first run may last and still be the start-up race of its stack.
START_UP_RACE = timedelta(minutes=5)


def _start_up_race(cs: ContainerStatus, last: StateTerminated) -> bool:
    """Only the first run failed (one restart), within minutes of starting, and the container
    has been ready since: a component that came up before what it needs (DCGM before the
    driver) and succeeded on its retry. An OOM kill is never one (its limit still stands)."""
    if cs.restart_count != 1 or not cs.ready or last.reason == "OOMKilled":
        return False
    began, ended = collection_time(last.started_at), collection_time(last.finished_at)
    return began is not None and ended is not None and timedelta(0) <= ended - began <= START_UP_RACE


def collection_time(stamp: str | None) -> datetime | None:
    """An RFC 3339 time as an aware datetime; None when absent or unreadable."""
    if not stamp:
        return None
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _phase_problem(pod: Pod, component: str) -> Finding | None:
    phase = pod.status.phase
    if phase not in _PHASES_JUDGED:
        return None
    ev = _pod_evidence(pod, "status.phase", f"{phase} {pod.status.reason}".strip())
    first = pod.spec.containers[0].name if pod.spec.containers else ""
    if phase == "Pending":
        return problem(component, "pod_pending", ev, ctx=_ctx(pod, first))
    if phase == "Failed":
        return problem(component, "pod_failed", ev, ctx=_ctx(pod, first))
    return unknown(component, f"pod {pod.metadata.name} phase is {phase or 'not reported'}", ev)


#: Phases that say something is wrong or not known (Running and Succeeded do not).
_PHASES_JUDGED = frozenset({"Pending", "Failed", "Unknown", ""})


def _init_done(cs: ContainerStatus) -> bool:
    term = cs.state.terminated
    return term is not None and term.exit_code == 0


def _waiting_reason(cs: ContainerStatus) -> str:
    return cs.state.waiting.reason if cs.state.waiting else ""


def _describe(cs: ContainerStatus) -> str:
    """kubectl-like one-liner for a container status."""
    state = cs.state
    if state.waiting:
        now = f"waiting {state.waiting.reason}: {state.waiting.message}".rstrip(": ")
    elif state.terminated:
        now = f"terminated {state.terminated.reason} (exit {state.terminated.exit_code})"
    else:
        now = "running"
    last = cs.last_state.terminated
    tail = f"; last terminated {last.reason} (exit {last.exit_code})" if last else ""
    return f"{now}, ready={str(cs.ready).lower()}, restarts={cs.restart_count}{tail}"


def _pod_evidence(pod: Pod, field: str, excerpt: str) -> Evidence:
    meta = pod.metadata
    return Evidence(f"pod {meta.namespace}/{meta.name} {field}", excerpt)


def _ctx(pod: Pod, container: str) -> dict[str, str]:
    return {"namespace": pod.metadata.namespace, "pod": pod.metadata.name, "container": container}


def _ok_summary(pod: Pod) -> str:
    if pod.status.phase == "Succeeded":
        return "completed"
    statuses = pod.status.container_statuses
    ready = len([c for c in statuses if c.ready])
    restarts = sum([c.restart_count for c in statuses])
    return f"{ready}/{len(statuses)} ready, {restarts} restarts"


def plainly_running(pod: Pod) -> int:
    """The number of the pod's containers where it runs them all, each ready and never
    restarted, its init containers (if any) all done: ``judge_pod`` finds it ``ok``
    ("N/N ready, 0 restarts"), ``display_state`` reads its status's reason or "Running" and
    ``ready_ratio`` "N/N". 0 for any other pod (those readings say more)."""
    status = pod.status
    statuses = status.container_statuses
    if status.phase != "Running" or not statuses:
        return 0
    for cs in statuses:
        state = cs.state
        if (not cs.ready or cs.restart_count or state.running is None or state.waiting is not None
                or state.terminated is not None or cs.last_state.terminated is not None):
            return 0
    for cs in status.init_container_statuses:
        term = cs.state.terminated
        if term is None or term.exit_code != 0:
            return 0
    return len(statuses)


def display_state(pod: Pod) -> str:
    """The STATUS column of ``kubectl get pods`` for this pod."""
    statuses = pod.status.init_container_statuses
    if statuses and pod.status.phase not in ("Succeeded", "Failed") and not all(map(_init_done, statuses)):
        stuck = next(s for s in statuses if not _init_done(s))
        reason = _waiting_reason(stuck)
        if reason and reason != "PodInitializing":
            return f"Init:{reason}"
        return f"Init:{sum(1 for s in statuses if _init_done(s))}/{len(statuses)}"
    for cs in pod.status.container_statuses:
        reason = _waiting_reason(cs) or (cs.state.terminated.reason if cs.state.terminated else "")
        if reason:
            return reason
    return pod.status.reason or pod.status.phase or "Unknown"


def ready_ratio(pod: Pod) -> str:
    statuses = pod.status.container_statuses
    return f"{len([c for c in statuses if c.ready])}/{len(statuses) or len(pod.spec.containers)}"


#: NFD's labels that copy a fact the kubelet reports of the node itself (status.nodeInfo):
#: the running kernel's full release, and on an ostree OS (RHCOS, Fedora CoreOS) the
#: deployed OS build, which its osImage carries as a word ("Red Hat Enterprise Linux CoreOS
#: 416.94.202408260940-0", "Fedora CoreOS 43.20260413.3.2").
_NFD_KERNEL = "feature.node.kubernetes.io/kernel-version.full"
_NFD_OSTREE = "feature.node.kubernetes.io/system-os_release.OSTREE_VERSION"
_VERSION_WORD = lazy_compile(r"\d+(?:\.\d+)+(?:-\d+)?")


def _shape(version: str) -> str:
    """A version's form with its numbers blanked ('416.94.202408260940-0' -> 'N.N.N-N')."""
    return re.sub(r"\d+", "N", version)


def stale_nfd_labels(labels: Mapping[str, str], kernel: str, os_image: str) -> list[tuple[str, str, str]]:
    """NFD labels naming another kernel or OS build than the node reports: (label, its
    value, the node's). NFD relabels on its interval, so a label that disagrees is one an
    upgrade left behind; what selects by it (the driver image or Driver Toolkit built for
    that kernel or release) is then built for a system the node no longer runs."""
    stale: list[tuple[str, str, str]] = []
    labelled_kernel = labels.get(_NFD_KERNEL, "")
    if labelled_kernel and kernel and labelled_kernel != kernel:
        stale.append((_NFD_KERNEL, labelled_kernel, kernel))
    labelled_build = labels.get(_NFD_OSTREE, "").strip("'\"")
    words = _VERSION_WORD.findall(os_image)
    if labelled_build and labelled_build not in words:
        same_form = [w for w in words if _shape(w) == _shape(labelled_build)]
        if same_form:
            stale.append((_NFD_OSTREE, labelled_build, same_form[0]))
    return stale


@check("nfd", needs=("node",))
def nfd_labels_stale(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """NFD's kernel or OS-build label names another system than the node runs while the
    driver here fails: the operator picks the driver's image and Driver Toolkit by those
    labels, so the driver was built for the old system, and NFD's stale label is why."""
    node = ctx.node
    if node is None or not any(map(pod_problem, map(_POD, ctx.stack_pods("driver")), repeat("driver"))):
        return
    info = node.status.node_info
    stale = stale_nfd_labels(node.metadata.labels, info.kernel_version, info.os_image)
    if not stale:
        return
    where = f"node/{ctx.name} metadata.labels"
    evidence = tuple(Evidence(where, f"{key}={value}; the node runs {actual}")
                     for key, value, actual in stale)
    key, value, actual = stale[0]
    # the label as the node shows it, with the fact it contradicts: the line its class quotes
    line = clipped(f"{key}={value} while the node runs {actual}")
    quoted = {LINE: line, MESSAGE: line, SOURCE: where, VERB: "labels the node with"}
    yield Finding(component, Status.FAILED, "error_version_mismatch", (Evidence(where, line), *evidence[1:]),
                  {EXPLAINS: "driver", **quoted}, 40)


#: Readers in C for the node pass (a comprehension is a function of its own a node).
_POD = attrgetter("pod")
