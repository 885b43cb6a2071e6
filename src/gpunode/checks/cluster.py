"""Cluster-control checks, judged once: operators, their policies, NFD.

Their findings are reported once for the cluster, not once per node; node
components deployed by a failing operator point at it as their blocker.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from gpunode.bundle.kube import Condition, CustomResource, Pod
from gpunode.checks.base import not_deployed, ok, problem
from gpunode.checks.context import blocking_taint, platform_of
from gpunode.checks.decisive import line_finding
from gpunode.checks.operator import (
    OPERANDS,
    OPERANDS_LABEL,
    WORKLOAD_CONFIG,
    WORKLOAD_CONFIGS,
    operator_sees_gpu,
    sandbox_enabled,
)
from gpunode.checks.placement import awaited
from gpunode.checks.pods import collection_time, judge_pod, pod_problem
from gpunode.decisive import Decisive
from gpunode.facts import ClusterFacts, StackPod
from gpunode.kb import load_kb
from gpunode.model import Evidence, Finding, Status
from gpunode.relazy import lazy_compile
from gpunode.startup_taints import left_startup_taint

ClusterCheckFn = Callable[[ClusterFacts], Iterable[Finding]]


@dataclass(frozen=True)
class ClusterCheck:
    name: str
    component: str
    fn: ClusterCheckFn


CLUSTER_REGISTRY: list[ClusterCheck] = []


def cluster_check(component: str) -> Callable[[ClusterCheckFn], ClusterCheckFn]:
    """Register a cluster-wide check for ``component``."""

    def register(fn: ClusterCheckFn) -> ClusterCheckFn:
        CLUSTER_REGISTRY.append(ClusterCheck(fn.__name__, component, fn))
        return fn

    return register


def cluster_components() -> list[str]:
    """Components with cluster-wide findings, in registration order, no repeats."""
    return list(dict.fromkeys(c.component for c in CLUSTER_REGISTRY))


@cluster_check("gpu-operator")
def gpu_operator_pods(facts: ClusterFacts) -> Iterator[Finding]:
    yield from _operator_pods(facts, "gpu-operator", "gpu_operator_crashloop", "clusterpolicies")


@cluster_check("gpu-operator")
def cluster_policy(facts: ClusterFacts) -> Iterator[Finding]:
    """ClusterPolicy state and its Error condition's reason."""
    for policy in facts.cluster_policies:
        yield from _policy_findings(policy, "clusterpolicy")


#: The GPU Operator's per-node deploy state labels: it writes "true" or "false" (or a
#: "paused-for-..." state while upgrading), which the operands' DaemonSets select on.
_DEPLOY_LABEL = "nvidia.com/gpu.deploy."


@cluster_check("gpu-operator")
def deploy_labels_empty(facts: ClusterFacts) -> Iterator[Finding]:
    """GPU nodes whose operand deploy labels the operator left with no value: no operand
    DaemonSet selects the node (they select "true") and none is disabled either, so the
    operands it should run there never come; the operator's own state labels are invalid."""
    if not facts.cluster_policies and not facts.cluster_pods.get("gpu-operator"):
        return
    # (most nodes have no label without a value: the few that do are sorted, not the fleet)
    bare = sorted(name for name, node in facts.nodes.items() if "" in node.metadata.labels.values())
    for name in bare:
        node = facts.nodes[name]
        empty = sorted(k for k, v in node.metadata.labels.items() if k.startswith(_DEPLOY_LABEL) and v == "")
        if not empty:
            continue
        line = ", ".join(f'{key}: ""' for key in empty)
        where = f"node/{name} metadata.labels"
        yield line_finding(load_kb(), "gpu-operator", Status.DEGRADED, Decisive(1, line, 1), where,
                           verb="left its deploy labels empty", line_class="error_config_invalid",
                           node=name, standalone="true")
        return


#: The operator's own error for a workload label value it rejects (getWorkloadConfig in
#: controllers/state_manager.go, capitalised in older releases), logged only while sandbox
#: workloads are on: "failed to get GPU workload config for node; using default".
_WORKLOAD_REJECTED = lazy_compile(r"(?i:\binvalid GPU workload config: )")


@cluster_check("gpu-operator")
def workload_config_invalid(facts: ClusterFacts) -> Iterator[Finding]:
    """A GPU node whose ``nvidia.com/gpu.workload.config`` label holds a value the operator does
    not know (it knows container, vm-passthrough and vm-vgpu): with sandbox workloads on, the
    operator rejects it and runs the node as its default workload, so the workload the label
    asks for (a node for Kata or KubeVirt VMs) never comes (NVIDIA/gpu-operator#1871's "kata").
    Read only where the operator reads the label: the ClusterPolicy turns sandbox workloads on,
    or the operator's own log rejects the value. With sandbox workloads off the label is
    ignored, and nothing is wrong."""
    policies = facts.cluster_policies
    if not (policies and sandbox_enabled(dict(policies[0].spec))) and not _operator_rejected(facts):
        return
    for name, node in sorted(facts.nodes.items()):
        value = node.metadata.labels.get(WORKLOAD_CONFIG)
        if value is None or value in WORKLOAD_CONFIGS:
            continue
        line = f"{WORKLOAD_CONFIG}={value}"
        yield line_finding(load_kb(), "gpu-operator", Status.DEGRADED, Decisive(1, line, 1),
                           f"node/{name} metadata.labels", verb="rejects the node's workload label",
                           line_class="error_config_invalid", node=name, standalone="true")
        return


def _operator_rejected(facts: ClusterFacts) -> bool:
    """The operator's log says it rejected a node's workload label value."""
    return any(_WORKLOAD_REJECTED.search(line) for sp in facts.cluster_pods.get("gpu-operator", ())
               for log in facts.cluster_logs.get(sp.key, ()) for line in log.lines)


#: Operands whose job, once the node's deploy label turns them off, nothing else on a GPU node
#: does unless a pod of a component that replaces them runs there: without a device plugin
#: the node offers no GPU to any pod. The driver and toolkit may be on the host instead
#: (judged from host evidence), the others serve no pod's GPU.
_DEPLOY_UNSERVED = ("device-plugin",)


@cluster_check("gpu-operator")
def deploy_labels_disabled(facts: ClusterFacts) -> Iterator[Finding]:
    """GPU nodes on which the operator's per-node deploy labels say "false" for operands the
    ClusterPolicy enables, while nothing else hands the node's GPUs to pods (no pod of the
    device plugin or of one that replaces it): the operand DaemonSets select "true", so the
    disabled labels keep them away and the node offers no GPU (NVIDIA/gpu-operator#470:
    the maintainer's check is that these labels were not disabled). A node whose GPUs another
    plugin serves, or whose driver alone is off (a host driver), was set so on purpose. One
    finding names every such node (one evidence line each): the operator is one cause."""
    if not facts.cluster_policies:
        return
    spec = dict(facts.cluster_policies[0].spec)
    kept_away = [(name, disabled) for name, disabled in _disabled_by_node(facts, spec)
                 if any(c in _DEPLOY_UNSERVED and not _served(facts, facts.pods_by_node.get(name, {}), c)
                        for c, _ in disabled)]
    if not kept_away:
        return
    evidence = [Evidence(f"node/{name} metadata.labels",
                         ", ".join(f"{label}=false" for _, label in disabled)
                         + f" on {name}; the ClusterPolicy enables these operands and no pod serves"
                         " the GPUs")
                for name, disabled in kept_away]
    first, disabled = kept_away[0]
    sets = facts.daemonsets.get("device-plugin") or []
    where = {"namespace": sets[0].metadata.namespace, "daemonset": sets[0].metadata.name} if sets else {}
    yield problem("gpu-operator", "selector_label_missing", *evidence, ctx=where, node=first,
                  label=disabled[0][1], setter="the cluster admin",
                  waiting=", ".join(c for c, _ in disabled))


@cluster_check("gpu-operator")
def gpu_operands_tainted(facts: ClusterFacts) -> Iterator[Finding]:
    yield from _operands_tainted(facts, "gpu-operator", bool(facts.cluster_policies))


@cluster_check("network-operator")
def network_operands_tainted(facts: ClusterFacts) -> Iterator[Finding]:
    yield from _operands_tainted(facts, "network-operator", bool(facts.nic_policies))


#: Taints a DaemonSet is meant not to tolerate (control planes are not scheduled by design).
_CONTROL_PLANE_TAINTS = frozenset({"node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master"})


def _operands_tainted(facts: ClusterFacts, operator: str, has_policy: bool) -> Iterator[Finding]:
    """Nodes where one taint keeps two or more of the operator's operands (catalog
    ``deployed_by``) away, none of them with a pod there: the operator renders every operand
    DaemonSet with the one toleration list of its policy (ClusterPolicy
    ``daemonsets.tolerations``, NicClusterPolicy ``tolerations``), so a taint that list lacks
    is one cause of the operator's, not one per operand (GPU Operator troubleshooting, "No
    GPU driver or operand pods running": every operand DaemonSet at DESIRED 0). A single
    operand refused, or one deployed without the operator, stays that operand's own."""
    if not (has_policy or facts.cluster_pods.get(operator)):
        return
    operands = [c.id for c in facts.catalog.components if c.deployed_by == operator]
    evidence: list[Evidence] = []
    first: dict[str, str] = {}
    # (a node without taints keeps no DaemonSet away: only the tainted few are sorted and read)
    tainted = sorted(name for name, node in facts.nodes.items() if node.spec.taints)
    for name in tainted:
        node = facts.nodes[name]
        here = facts.pods_by_node.get(name, {})
        # a startup taint its owner, ready here, failed to lift is the owner's (checks/startup_taint.py)
        left = {t.key for c, pods in here.items()
                if (t := left_startup_taint(node, c, [sp.pod for sp in pods])) is not None}
        by_taint: dict[str, list[tuple[str, str]]] = {}
        for cid in operands:
            if here.get(cid):
                continue
            for ds in facts.daemonsets.get(cid, ()):
                taint = blocking_taint(ds, node)
                if taint is not None and taint.key not in _CONTROL_PLANE_TAINTS and taint.key not in left:
                    said = f"{taint.key}={taint.value or ''}:{taint.effect}"
                    by_taint.setdefault(said, []).append((cid, f"{ds.metadata.namespace}/{ds.metadata.name}"))
                    break
        for said, blocked in by_taint.items():
            if len(blocked) < 2:
                continue
            sets = ", ".join(ds for _, ds in blocked)
            evidence.append(Evidence(f"node/{name} spec.taints",
                                     f"{said} not tolerated by {len(blocked)} operand daemonsets: {sets}"))
            first = first or {"node": name, "waiting": ", ".join(c for c, _ in blocked),
                              "namespace": blocked[0][1].split("/")[0]}
    if evidence:
        yield problem(operator, "operands_untolerated_taint", *evidence, ctx=first)


@cluster_check("gpu-operator")
def gpu_operands_refused(facts: ClusterFacts) -> Iterator[Finding]:
    yield from _operands_refused(facts, "gpu-operator", bool(facts.cluster_policies))


@cluster_check("network-operator")
def network_operands_refused(facts: ClusterFacts) -> Iterator[Finding]:
    yield from _operands_refused(facts, "network-operator", bool(facts.nic_policies))


#: The API server's admission refusing a pod (Pod Security, a PodSecurityPolicy, OpenShift's
#: SCCs, a webhook): 'Error creating: pods "<name>" is forbidden: ...'.
_REFUSED = lazy_compile(r'\bpods? "[^"]*" is forbidden: ')


def _operands_refused(facts: ClusterFacts, operator: str, has_policy: bool) -> Iterator[Finding]:
    """The DaemonSet controller refused at admission the pods of an operand the operator
    deploys (a FailedCreate event of its DaemonSet: 'pods "mofed-..." is forbidden: violates
    PodSecurity "baseline:latest"'): what is refused is the operator's rendering in the
    operator's namespace (its Pod Security label, its service accounts), not the operand's
    own failure, which never ran (Network Operator docs, "Deployment with Pod Security
    Admission": label the namespace privileged; NVIDIA/gpu-operator#185 the same for the GPU
    Operator). The line's class is the cause unless a catalogued one fits it better."""
    if not (has_policy or facts.cluster_pods.get(operator)):
        return
    for entry in facts.catalog.components:
        if entry.deployed_by != operator:
            continue
        for ds in facts.daemonsets.get(entry.id, ()):
            meta = ds.metadata
            for event in facts.events_for("DaemonSet", meta.namespace, meta.name):
                line = event.message.strip().splitlines()[0] if event.message.strip() else ""
                if event.reason == "FailedCreate" and _REFUSED.search(line):
                    yield line_finding(load_kb(), operator, Status.FAILED, Decisive(1, line, 2),
                                       f"event daemonset/{meta.namespace}/{meta.name}",
                                       verb=f"cannot have the pods of {entry.id} admitted",
                                       namespace=meta.namespace, daemonset=meta.name, explains=entry.id)
                    return


def _disabled_by_node(
    facts: ClusterFacts, spec: dict[str, object]
) -> Iterator[tuple[str, list[tuple[str, str]]]]:
    """Each GPU node with the deploy labels it sets to "false" for operands the policy enables."""
    for name, node in sorted(facts.nodes.items()):
        labels = node.metadata.labels
        if "false" not in labels.values():  # (most nodes: no label set to "false")
            continue
        if not operator_sees_gpu(labels) or labels.get(OPERANDS_LABEL) == "false":
            continue
        disabled = [(c, label) for c, (label, section) in OPERANDS.items()
                    if labels.get(label) == "false" and _policy_enables(spec, section)]
        if disabled:
            yield name, disabled


def _policy_enables(spec: dict[str, object], section: str) -> bool:
    """The ClusterPolicy leaves the operand on (a section without ``enabled: false``)."""
    value = spec.get(section)
    return not (isinstance(value, dict) and value.get("enabled") is False)


def _served(facts: ClusterFacts, here: dict[str, list[StackPod]], component: str) -> bool:
    """A pod of the component, or of one that replaces it, runs on the node."""
    family = {component, *(c.id for c in facts.catalog.replacers(component))}
    return any(here.get(c) for c in family)


#: CRI-O's refusal of a sandbox whose RuntimeClass names a handler it does not have (cri-o
#: internal/oci: 'failed to find runtime handler %s from runtime list %v').
_NO_HANDLER = lazy_compile(r"\bfailed to find runtime handler \\?\"?(?P<handler>[\w.-]+?)\\?\"? "
                           r"from runtime list")
#: Platforms whose GPU stack hands GPUs to CRI-O only through the toolkit's OCI prestart hook,
#: never through a runtime handler: on OpenShift the toolkit installs oci-nvidia-hook.json and
#: no nvidia handler exists by design (NVIDIA/gpu-operator#1298: "CRI-O uses the OCI runtime
#: hooks, the nvidia runtime handler is not applicable").
_HOOK_ONLY_PLATFORMS = frozenset({"openshift"})
#: Docker's CRI shim (the kubelet's dockershim before Kubernetes 1.24, cri-dockerd since)
#: serves only Docker's own default runtime and refuses any handler a sandbox asks for
#: (pkg/kubelet/dockershim/docker_sandbox.go: 'RuntimeHandler %q not supported'): on a node
#: whose runtime says so no RuntimeClass handler can exist, whatever the toolkit configured
#: in Docker (NVIDIA/gpu-operator#236, #250, #477). Only the shim writes these words.
_SHIM_REFUSED = lazy_compile(r'\bRuntimeHandler \\?"(?P<handler>[\w.-]+?)\\?" not supported\b')


@cluster_check("gpu-operator")
def operands_ask_absent_handler(facts: ClusterFacts) -> Iterator[Finding]:
    """An operand the operator deploys whose sandbox CRI-O refuses because its RuntimeClass
    names a handler that the node's GPU stack never provides (``_HOOK_ONLY_PLATFORMS``): the
    operator rendered it with a runtime class the platform does not use (an operator build
    that sets runtimeClassName on OpenShift, NVIDIA/gpu-operator#175), and the toolkit, which
    installs a hook there, has nothing to add. Elsewhere a missing handler is the toolkit's or
    the runtime's (they write and load it), and a user's pod asking for it is no failure of
    the stack. Docker's CRI shim refusing the handler (``_SHIM_REFUSED``) is the same on any
    platform: it serves no handler at all. One finding, for the first such pod."""
    if not _handler_refused(facts):
        return
    by_class = {rc.metadata.name: rc.handler for rc in facts.runtime_classes}
    for name, node in sorted(facts.nodes.items()):
        platform = platform_of(node)
        hook_only = platform.id in _HOOK_ONLY_PLATFORMS
        for component, pods in sorted(facts.pods_by_node.get(name, {}).items()):
            if facts.catalog.get(component).deployed_by != "gpu-operator":
                continue
            for sp in pods:
                found = _absent_handler(facts, sp.pod, by_class) if hook_only else None
                shim = found is None and (found := _shim_refused(facts, sp.pod, by_class)) is not None
                if found is not None:
                    meta = sp.pod.metadata
                    runtime = "Docker's CRI shim" if shim else f"CRI-O on {platform.title}"
                    verb = (f"renders {component} with runtimeClassName "
                            f"{sp.pod.spec.runtime_class_name or 'set'}, a handler {runtime} does not have")
                    yield line_finding(load_kb(), "gpu-operator", Status.FAILED, found,
                                       f"event pod {meta.namespace}/{meta.name}", verb=verb,
                                       standalone="true", namespace=meta.namespace, pod=meta.name,
                                       node=name)
                    return


def _handler_refused(facts: ClusterFacts) -> bool:
    """Some pod's event speaks of a runtime handler, as both refusals do (most bundles have
    none: the nodes' pods are not walked then)."""
    return any("runtime handler" in ev.message or "RuntimeHandler" in ev.message
               for (kind, _, _), events in facts.events_by_object.items() if kind == "Pod"
               for ev in events)


def _shim_refused(facts: ClusterFacts, pod: Pod, by_class: dict[str, str]) -> Decisive | None:
    """The pod's event line where Docker's CRI shim refuses the handler its sandbox asked
    for: the handler its RuntimeClass names, or any where the bundle kept no runtimeClassName
    (the shim is asked for a handler only where the pod's spec named one)."""
    asked = pod.spec.runtime_class_name
    meta = pod.metadata
    for ev in facts.events_for("Pod", meta.namespace, meta.name):
        for line in ev.message.splitlines():
            found = _SHIM_REFUSED.search(line) if "RuntimeHandler" in line else None
            if found is not None and (not asked or found["handler"] == by_class.get(asked, asked)):
                return Decisive(1, line.strip(), 2)
    return None


def _absent_handler(facts: ClusterFacts, pod: Pod, by_class: dict[str, str]) -> Decisive | None:
    """The pod's sandbox event line refusing the handler its own RuntimeClass names."""
    asked = pod.spec.runtime_class_name
    if not asked:
        return None
    meta = pod.metadata
    for ev in facts.events_for("Pod", meta.namespace, meta.name):
        for line in ev.message.splitlines():
            found = _NO_HANDLER.search(line) if "runtime handler" in line else None
            if found is not None and found["handler"] == by_class.get(asked, asked):
                return Decisive(1, line.strip(), 2)
    return None


@cluster_check("gpu-operator")
def state_labels_missing(facts: ClusterFacts) -> Iterator[Finding]:
    """A node where an operand's DaemonSet waits only for a state label the operator owes it
    (the node qualifies: NFD's NVIDIA PCI label, GFD's MIG-capable GPU for the MIG manager)
    and the operator has not set: the operator's labelling failed there, and the operand
    that never comes is its symptom (``explains``)."""
    if not facts.cluster_policies and not facts.cluster_pods.get("gpu-operator"):
        return
    daemonsets = sorted(facts.daemonsets.items())  # (the same for every node)
    for name, node in sorted(facts.nodes.items()):
        labels = node.metadata.labels
        waiting = {component: waits for component, sets in daemonsets
                   if (waits := awaited(facts.catalog, sets, labels)) is not None
                   and waits.setter == "gpu-operator"}
        if not waiting:
            continue
        evidence = [Evidence(f"node/{name} metadata.labels", f"{w.evidence}; no such label on {name}")
                    for w in waiting.values()]
        keys = sorted({u.key for w in waiting.values() for u in w.unmet})
        yield problem("gpu-operator", "node_labels_missing", *evidence, status=Status.DEGRADED,
                      specificity=35, explains=",".join(waiting), label=keys[0], node=name,
                      waiting=", ".join(waiting))
        return


#: The kubelet's refusal of an image reference it cannot parse (InvalidImageName; the
#: InspectFailed event says the same), quoting the reference.
_UNPARSABLE_IMAGE = lazy_compile(r'couldn.t parse image reference \\?"(?P<ref>[^"\\]+)')


@cluster_check("gpu-operator")
def operand_images_unrendered(facts: ClusterFacts) -> Iterator[Finding]:
    """One image reference the kubelet cannot parse on the pods of two or more operands: the
    operator renders every operand's image from its ClusterPolicy and its defaults, so a bad
    reference they share is its rendering's (the placeholder FILLED_BY_THE_OPERATOR left in
    every operand, NVIDIA/gpu-operator#366), which the operands' failures follow from
    (``explains``); one operand's bad image (a digest in its own ClusterPolicy section,
    NVIDIA/gpu-operator#513) stays that operand's."""
    if not facts.cluster_policies and not facts.cluster_pods.get("gpu-operator"):
        return
    seen: dict[str, dict[str, Evidence]] = {}
    for node, components in sorted(facts.pods_by_node.items()):
        for component, pods in components.items():
            if component not in OPERANDS:
                continue
            for sp in pods:
                for ref, message in _unparsable_images(sp.pod):
                    meta = sp.pod.metadata
                    where = f"pod/{meta.namespace}/{meta.name} on {node}"
                    seen.setdefault(ref, {}).setdefault(component, Evidence(where, message[:300]))
    for ref, operands in sorted(seen.items()):
        if len(operands) >= _SHARED_BY:
            found = line_finding(load_kb(), "gpu-operator", Status.FAILED,
                                 Decisive(1, next(iter(operands.values())).excerpt, 2),
                                 next(iter(operands.values())).source,
                                 verb=f"renders image {ref!r} for {len(operands)} operands",
                                 evidence=tuple(list(operands.values())[1:]),
                                 explains=",".join(sorted(operands)))
            yield found
            return


#: Operands that must share one unparsable reference before it is the operator's.
_SHARED_BY = 2


def _unparsable_images(pod: Pod) -> Iterator[tuple[str, str]]:
    """(reference, message) of each container of the pod waiting on an image reference the
    kubelet could not parse."""
    status = pod.status
    for statuses in (status.init_container_statuses, status.container_statuses):
        for cs in statuses:
            waiting = cs.state.waiting
            if waiting is None or not waiting.message:  # (nearly every container of the fleet)
                continue
            found = _UNPARSABLE_IMAGE.search(waiting.message)
            if found is not None:
                yield found["ref"], waiting.message


@cluster_check("network-operator")
def network_operator_pods(facts: ClusterFacts) -> Iterator[Finding]:
    yield from _operator_pods(facts, "network-operator", "network_operator_crashloop", "nicclusterpolicies")


@cluster_check("network-operator")
def nic_cluster_policy(facts: ClusterFacts) -> Iterator[Finding]:
    for policy in facts.nic_policies:
        where = f"nicclusterpolicy/{policy.metadata.name} status.state"
        if policy.status.state == "ready":
            yield ok("network-operator", "NicClusterPolicy ready", Evidence(where, "ready"))
        elif policy.status.state:
            detail = _not_ready_states(policy) or policy.status.reason or policy.status.state
            yield problem(
                "network-operator",
                "nicclusterpolicy_not_ready",
                Evidence(where, detail),
                status=Status.DEGRADED,
            )


@cluster_check("nfd")
def nfd_master_pods(facts: ClusterFacts) -> Iterator[Finding]:
    """nfd-master (and its garbage collector) serve every node from one pod: a master that
    crashes or is OOM-killed is one cluster cause, not a symptom of whichever node runs it
    (usually a control-plane node, which is not judged at all)."""
    now = collection_time(facts.manifest.collected_at)
    for sp in facts.cluster_side.get("nfd", ()):
        finding = pod_problem(sp.pod, "nfd", now)
        if finding is not None:
            yield finding


@cluster_check("nfd")
def nfd_deployed(facts: ClusterFacts) -> Iterator[Finding]:
    """The GPU Operator needs NFD labels; no NFD anywhere and no labels is a cluster cause."""
    if not facts.has("pods") or not facts.has("nodes"):
        return
    nfd_pods = any("nfd" in comps for comps in facts.pods_by_node.values())
    labelled = any(
        k.startswith("feature.node.kubernetes.io/") for n in facts.nodes.values() for k in n.metadata.labels
    )
    if nfd_pods or labelled:
        yield ok("nfd", "NFD labels present", Evidence("cluster/nodes.json", "feature.node.kubernetes.io/*"))
        return
    if not facts.cluster_policies:
        yield not_deployed("nfd", "no NFD, and no GPU Operator that needs it")
        return
    reason = _error_reason(facts.cluster_policies[0])
    ev = [
        Evidence("cluster/pods.json", "no node-feature-discovery pods"),
        Evidence("cluster/nodes.json", "no node has feature.node.kubernetes.io/* labels"),
    ]
    if reason:
        ev.append(Evidence("clusterpolicy status.conditions[Error]", reason))
    yield problem("nfd", "nfd_not_deployed", *ev)


def _operator_pods(facts: ClusterFacts, component: str, crash_cause: str, policy: str) -> Iterator[Finding]:
    """The operator's own pods; none at all (with nothing it manages) is not-deployed."""
    pods = facts.cluster_pods.get(component, [])
    for sp in pods:
        yield _operator_pod(sp.pod, component, crash_cause)
    managed = facts.cluster_policies if component == "gpu-operator" else facts.nic_policies
    if not pods and facts.has("pods") and facts.has(policy) and not managed:
        yield not_deployed(component, f"no {component} pods and no {policy}")


def _operator_pod(pod: Pod, component: str, crash_cause: str) -> Finding:
    """A crash-looping operator is its own cause; one killed at its memory limit keeps
    that reason (``oom_killed``, fixed through the operator's own resources)."""
    finding = judge_pod(pod, component)
    if finding.cause in ("crash_loop", "oom_killed"):
        cause = finding.cause if finding.cause == "oom_killed" else crash_cause
        return Finding(component, finding.status, cause, finding.evidence, finding.context, 40)
    return finding


def _policy_findings(policy: CustomResource, kind: str) -> Iterator[Finding]:
    name = policy.metadata.name
    state = policy.status.state
    where = f"{kind}/{name} status"
    error = _condition(policy.status.conditions, "Error")
    if state == "ready":
        yield ok("gpu-operator", "ClusterPolicy ready", Evidence(f"{where}.state", "ready"))
    elif error is not None and error.status == "True" and error.reason == "ReconcileFailed":
        ev = Evidence(f"{where}.conditions[Error]", f"{error.reason}: {error.message}")
        yield problem("gpu-operator", "clusterpolicy_invalid", ev, specificity=60)
    elif error is not None and error.reason == "NFDLabelsMissing":
        return  # judged as the NFD cluster cause
    elif state:
        detail = f"{error.reason}: {error.message}" if error else state
        yield problem(
            "gpu-operator",
            "clusterpolicy_not_ready",
            Evidence(f"{where}.state", detail),
            status=Status.DEGRADED,
        )


def _condition(conditions: tuple[Condition, ...], kind: str) -> Condition | None:
    return next((c for c in conditions if c.type == kind), None)


def _error_reason(policy: CustomResource) -> str:
    error = _condition(policy.status.conditions, "Error")
    return f"{error.reason}: {error.message}" if error and error.status == "True" else ""


def _not_ready_states(policy: CustomResource) -> str:
    bad = [s for s in policy.status.applied_states if s.get("state") not in ("ready", "ignore")]
    return "; ".join(f"{s.get('name')}={s.get('state')}" for s in bad)
