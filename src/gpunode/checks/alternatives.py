"""Other ways to hand GPUs to pods, judged by their own rules: HAMi's, Volcano's and GKE's
device plugins, NVIDIA's DRA driver (its kubelet plugin, ResourceSlices, ComputeDomains and
their IMEX daemons) and the cluster-side pods that serve them (the DRA controller, HAMi's
scheduler).

Where one of them runs, NVIDIA's device plugin is "replaced", not missing (catalog
``replaces``, checks/pods.py); here each is judged on what it is for: a plugin that runs
must advertise its resources, a DRA driver must publish its devices as ResourceSlices, an
IMEX daemon must be ready in its ComputeDomain.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from fnmatch import fnmatchcase
from operator import attrgetter

from gpunode.bundle.kube import ComputeDomain, Pod, ResourceSlice
from gpunode.catalog import load_catalog
from gpunode.checks.admission import DECIDED_BY, bypassed, plugin_answer, requested, webhook_owner
from gpunode.checks.base import check, in_fleet, not_deployed, ok, pods_here, problem, unknown
from gpunode.checks.cluster import cluster_check
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import KUBELET_ADMISSION, Text, line_finding, pod_texts
from gpunode.checks.pods import collection_time, judge_pod
from gpunode.decisive import Decisive, decisive_line, is_advice
from gpunode.facts import ClusterFacts
from gpunode.gpus import quantity
from gpunode.kb import KnowledgeBase, load_kb
from gpunode.model import Evidence, Finding, Status
from gpunode.relazy import lazy_compile

#: A running plugin whose node has none of its resources allocatable: its cause code.
NOTHING_ADVERTISED = {
    "hami-device-plugin": "hami_no_resources",
    "volcano-device-plugin": "volcano_no_resources",
    "gke-device-plugin": "gke_plugin_no_resources",
}
#: How an "advertises nothing" read from allocatable alone ranks: below a line of the same
#: plugin's that says why (the classes rank 13 and above), since a state is never the whole
#: answer while the component's own words, or those of the library it injects into the
#: workloads it serves, are there (issue 20); above the pod's own states.
_STATE_BELOW_LINES = 12
#: The DRA driver's kubelet-plugin container that hands out GPUs and the driver name it
#: publishes them under (its compute-domains container's channels are not judged: a node
#: without a multi-node NVLink domain may publish none)
DRA_DRIVERS = {"gpus": "gpu.nvidia.com"}
DRA_COMPONENT = "dra-kubelet-plugin"
IMEX_COMPONENT = "compute-domain-daemon"


def _running(pods: Iterator[Pod] | list[Pod]) -> list[Pod]:
    return [pod for pod in pods if pod.status.phase == "Running"]


def advertised(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A running plugin must have put its resources (catalog ``advertises``) on the node
    with a non-zero count; a pod not yet running is judged by the pod check."""
    node = ctx.node
    running = _running([sp.pod for sp in ctx.stack_pods(component)])
    if node is None or not running or not ctx.node_reporting:
        return
    globs = ctx.facts.catalog.get(component).advertises
    allocatable = node.status.allocatable
    where = f"node/{ctx.name} status.allocatable"
    if not allocatable:
        yield unknown(component, "the node's allocatable resources are not in the source",
                      Evidence(where, "absent"))
        return
    found = {k: v for k, v in allocatable.items() if any(fnmatchcase(k, g) for g in globs)}
    shown = ", ".join(f"{k}={v}" for k, v in sorted(found.items())) or f"no {' or '.join(globs)}"
    said = _forks_failure(ctx, component, running)
    empty = not found or all(quantity(v) == 0 for v in found.values())
    if said is None and empty and (placed := _placed_here(ctx, globs)) is not None:
        yield unknown(component, f"{shown} in allocatable, yet {placed} was placed here asking for it",
                      Evidence(where, shown))
    elif empty or said is not None:
        pod = running[0].metadata
        quoted = {"said": said.excerpt} if said is not None else {}
        rank = 30 if said is not None else _STATE_BELOW_LINES
        yield problem(component, NOTHING_ADVERTISED[component], said or Evidence(where, shown),
                      specificity=rank, ctx=quoted, namespace=pod.namespace, pod=pod.name)
    elif (short := _short_sibling(found)) is not None:
        pod = running[0].metadata
        line = Decisive(1, f"{short}: {found[short]}", 1)
        others = ", ".join(f"{k}={v}" for k, v in sorted(found.items()) if k != short)
        verb = f"leaves one of its resources at 0 while advertising {others}"
        yield line_finding(load_kb(), component, Status.DEGRADED, line, where, verb=verb,
                           line_class=_TOO_MANY_DEVICES, standalone="true",
                           namespace=pod.namespace, pod=pod.name)
    else:
        yield ok(component, f"advertises {shown}", Evidence(where, shown))


#: The class of a plugin resource left at 0 beside its siblings: the kubelet takes each
#: resource's device list in one gRPC message (4 MiB by default), and a plugin that lists
#: one device per unit (Volcano's vGPU plugin: one per MB of GPU memory, divided by its
#: gpu-memory-factor) can list too many on a node of several large GPUs: that resource is
#: never registered and stays at 0 while the GPU count and cores, listed from the same GPUs,
#: are advertised (Project-HAMi/volcano-vgpu-device-plugin#18, #56).
_TOO_MANY_DEVICES = "error_resource_exhausted"


def _placed_here(ctx: NodeContext, globs: Sequence[str]) -> str | None:
    """A workload bound to this node that asks for one of the plugin's resources and was
    refused at the kubelet's admission (UnexpectedAdmissionError: the device manager called
    the plugin's Allocate and relays its answer): the scheduler placed it here, which it does
    only where the node advertised what the pod asks, and the plugin answered for it, so the
    plugin's state is not "advertises nothing" and its answer is the decisive line (judged
    by the admission check, checks/admission.py). Its namespace/name, or None. A running
    workload is no such answer: it says nothing of why the plugin would fail."""
    for pod in ctx.facts.workloads_by_node.get(ctx.name, []):
        asks = any(fnmatchcase(r, g) for r in requested(pod) for g in globs)
        if asks and pod.status.reason in KUBELET_ADMISSION:
            return f"{pod.metadata.namespace}/{pod.metadata.name}"
    return None


def _short_sibling(found: dict[str, str]) -> str | None:
    """A resource at 0 whose sibling (same family: the name up to its last ``-``, as
    volcano.sh/vgpu-memory and volcano.sh/vgpu-number) counts devices: the plugin found the
    GPUs, and only that resource did not reach the kubelet. A resource at 0 with no counted
    sibling is left from another mode of the plugin (volcano.sh/gpu-memory after a switch to
    vGPU), not a failure."""
    counted = {_family(k) for k, v in found.items() if quantity(v) > 0}
    return next((k for k, v in sorted(found.items()) if quantity(v) == 0 and _family(k) in counted), None)


def _family(resource: str) -> str:
    name = resource.rpartition("/")[2]
    return resource[: len(resource) - len(name)] + name.rpartition("-")[0]


def _forks_failure(ctx: NodeContext, component: str, running: list[Pod]) -> Evidence | None:
    """A running plugin built from the plugin it replaces (HAMi's device plugin is a fork
    of NVIDIA's) whose current log ends in one of that plugin's catalogued failures serves
    no GPU, whatever the node's allocatable still shows (HAMi's "Incompatible strategy
    detected auto": its NVML discovery found no driver, Project-HAMi/HAMi#2860). Only the
    last line of each running container's log is read; hints printed after it do not
    count (``is_advice``)."""
    replaced = ctx.facts.catalog.get(component).replaces
    for pod in running:
        live = {cs.name for cs in pod.status.container_statuses if cs.state.running is not None}
        for log in ctx.logs_of(pod):
            if log.previous or log.container not in live:
                continue
            last = next((line for line in reversed(log.lines) if line.strip() and not is_advice(line)), "")
            cause = next((c for r in replaced if (c := ctx.kb.catalogued_in(r, last)) is not None), None)
            if last and cause is not None and cause.is_problem:
                index = max(i for i, line in enumerate(log.lines) if line == last)
                return Evidence(f"{log.path}:{index + 1}", last.strip())
    return None


def _register_advertisers() -> None:
    """One resource check per catalog component that advertises something."""
    for entry in load_catalog().components:
        if entry.advertises and entry.id in NOTHING_ADVERTISED:
            check(entry.id, needs=("node",), may_find=pods_here(entry.id))(advertised)


_register_advertisers()


def node_slices(slices: tuple[ResourceSlice, ...], node: str, driver: str) -> list[ResourceSlice]:
    """The ResourceSlices ``driver`` published for ``node``."""
    return [s for s in slices if s.spec.node_name == node and s.spec.driver == driver]


@check(DRA_COMPONENT, may_find=pods_here(DRA_COMPONENT))
def resource_slices_published(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A running DRA kubelet plugin with its ``gpus`` container publishes this node's GPUs
    as ResourceSlices of gpu.nvidia.com; none, or none with a device, and pods asking for a
    GPU claim can never be scheduled here."""
    pods = _running([sp.pod for sp in ctx.stack_pods(component)])
    if not pods or not ctx.node_reporting:
        return
    slices = ctx.facts.resource_slices
    containers = {c.name for pod in pods for c in pod.spec.containers}
    drivers = [driver for name, driver in DRA_DRIVERS.items() if name in containers]
    if drivers and slices is None:
        yield unknown(component, "ResourceSlices were not collected",
                      Evidence("cluster/resourceslices.json", "absent"))
        return
    for driver in drivers:
        mine = node_slices(slices or (), ctx.name, driver)
        devices = sum(len(s.spec.devices) for s in mine)
        where = "cluster/resourceslices.json"
        if not devices:
            shown = (f"{len(mine)} ResourceSlice(s) of {driver} for {ctx.name} with no device"
                     if mine else f"no ResourceSlice of {driver} for {ctx.name}")
            pod = pods[0].metadata
            yield problem(component, "dra_no_resourceslices", Evidence(where, shown), specificity=30,
                          driver=driver, namespace=pod.namespace, pod=pod.name)
        else:
            names = ", ".join(d.name for s in mine for d in s.spec.devices)
            yield ok(component, f"{driver}: {devices} device(s) published",
                     Evidence(where, f"{driver} on {ctx.name}: {names}"))


def domains_of(domains: tuple[ComputeDomain, ...], node: str) -> list[tuple[ComputeDomain, str]]:
    """The ComputeDomains that list ``node``, with its IMEX daemon's status there."""
    return [(cd, n.status) for cd in domains for n in (cd.status.nodes or ()) if n.name == node]


@check(IMEX_COMPONENT, may_find=in_fleet(attrgetter("compute_domains")))
def compute_domain_ready(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A ComputeDomain that lists this node says whether its IMEX daemon here is ready; a
    NotReady daemon holds back every workload of that domain (no IMEX channel)."""
    domains = ctx.facts.compute_domains
    if not domains:
        return
    for cd, status in domains_of(domains, ctx.name):
        where = f"computedomain/{cd.metadata.namespace}/{cd.metadata.name} status.nodes[{ctx.name}]"
        if status == "Ready":
            yield ok(component, f"IMEX daemon ready in ComputeDomain {cd.metadata.name}",
                     Evidence(where, "Ready"))
        elif status == "NotReady":
            yield problem(component, "compute_domain_not_ready", Evidence(where, "NotReady"),
                          specificity=30, domain=cd.metadata.name, namespace=cd.metadata.namespace)


#: The ComputeDomain daemon's own count while it waits for the domain's nodes
#: (cmd/compute-domain-daemon: klog.Infof("numNodes: %d, nodes seen: %d") each time the
#: ComputeDomain's status lists fewer nodes than its spec asks; it pushes no nodes update to the
#: IMEX daemon until they match), and its lines once it pushed one ("IP set changed", "IP set
#: for clique changed").
_NODES_SEEN = lazy_compile(r"\bnumNodes: (?P<want>\d+), nodes seen: (?P<seen>\d+)\b")
_NODES_PUSHED = lazy_compile(r"\bIP set (?:for clique )?changed\b")


def _waiting_for_peers(lines: Sequence[str]) -> int | None:
    """The index of the daemon's last count of the domain's nodes where it is short and no
    update was pushed after it, or None."""
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index]
        if "IP set" in line and _NODES_PUSHED.search(line):
            return None
        found = _NODES_SEEN.search(line) if "nodes seen" in line else None
        if found is not None:
            return index if int(found["seen"]) < int(found["want"]) else None
    return None


@check(IMEX_COMPONENT, may_find=pods_here(IMEX_COMPONENT))
def compute_domain_short_of_nodes(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The ComputeDomain daemon's log ends counting fewer nodes in its domain's status than the
    domain asks for, with no nodes update pushed since: its IMEX daemon is not started with the
    domain's peers, so the domain is not ready here, whatever the daemon's pod state says (two
    daemons rewriting the status list at once lose a peer's entry and each waits for ever,
    kubernetes-sigs/dra-driver-nvidia-gpu#1050). Where the ComputeDomain object was collected
    and lists this node Ready, it is believed instead."""
    if any(status == "Ready" for _, status in domains_of(ctx.facts.compute_domains or (), ctx.name)):
        return
    for sp in ctx.stack_pods(component):
        for log in ctx.logs_of(sp.pod):
            index = _waiting_for_peers(log.lines)
            if index is None:
                continue
            meta = sp.pod.metadata
            ev = Evidence(f"{log.path}:{index + 1}", log.lines[index].strip())
            yield problem(component, "compute_domain_not_ready", ev, specificity=30,
                          namespace=meta.namespace, pod=meta.name, container=log.container)
            return


def _service_pods(facts: ClusterFacts, component: str) -> Iterator[Finding]:
    """A cluster-side service's own pods (the DRA controller, HAMi's scheduler); none at
    all is not-deployed, since a cluster may run without it."""
    pods = facts.cluster_pods.get(component, [])
    now = collection_time(facts.manifest.collected_at)
    for sp in pods:
        yield judge_pod(sp.pod, component, now)
    if not pods:
        yield not_deployed(component, f"no {component} pods")


@cluster_check("dra-controller")
def dra_controller_pods(facts: ClusterFacts) -> Iterator[Finding]:
    yield from _service_pods(facts, "dra-controller")


@cluster_check("hami-scheduler")
def hami_scheduler_pods(facts: ClusterFacts) -> Iterator[Finding]:
    yield from _service_pods(facts, "hami-scheduler")
    yield from bypassed_extender(facts, "hami-scheduler")
    yield from webhook_uncalled(facts, "hami-scheduler")
    yield from left_to_another_scheduler(facts, "hami-scheduler")
    yield from served_node_unregistered(facts, "hami-scheduler")


#: Controllers whose FailedCreate event relays the API server's refusal of a pod they create.
_CREATORS = frozenset({"ReplicaSet", "Job", "StatefulSet", "DaemonSet"})


def webhook_uncalled(facts: ClusterFacts, component: str) -> Iterator[Finding]:
    """Pods a controller cannot create because the API server cannot call ``component``'s
    admission webhook (``admission.webhook_owner``; a webhook with failurePolicy Fail
    refuses every pod it covers while its Service does not answer): the component's
    failure, one finding for the first such event, its line the API server's words."""
    kb = load_kb()
    for (kind, namespace, name), events in facts.events_by_object.items():
        if kind not in _CREATORS:
            continue
        for ev in events:
            if ev.reason != "FailedCreate" or webhook_owner(facts.catalog, ev.message) != component:
                continue
            # The refusal is the event's message itself: the API server's one line.
            line = next(t for t in ev.message.splitlines() if webhook_owner(facts.catalog, t) == component)
            verb = f"refuses through its webhook the pods {kind} {namespace}/{name} creates"
            yield line_finding(kb, component, Status.FAILED, Decisive(1, line.strip(), 2),
                               f"event {kind} {namespace}/{name}", verb=verb, standalone="true",
                               namespace=namespace)
            return


def bypassed_extender(facts: ClusterFacts, extender: str) -> Iterator[Finding]:
    """GPU workloads refused at admission by a plugin that hands out only what ``extender``
    decided, placed by another scheduler: the extender's webhook did not route them to it
    (HAMi's, called with failurePolicy Ignore, fails open), so the plugin finds no decision
    ("no binding pod found"). The extender's failure, one finding for the first such pod."""
    if not facts.cluster_pods.get(extender):
        return  # not deployed: no webhook of its to route pods (its pods' check says so)
    kb = load_kb()
    for node, pods in facts.troubled_workloads_by_node.items():
        here = facts.pods_by_node.get(node, {})
        for pod in pods:
            for plugin in (p for p in requested_plugins(facts, pod) if here.get(p)):
                decided = bypassed(plugin, pod)
                found = _refusal(facts, kb, pod) if decided is not None and decided[0] == extender else None
                if found is not None:
                    text, line = found
                    meta = pod.metadata
                    verb = (f"did not place GPU workload {meta.namespace}/{meta.name} "
                            f"(scheduled by {pod.spec.scheduler_name})")
                    yield line_finding(kb, extender, Status.FAILED, line, text.where, verb=verb,
                                       standalone="true", namespace=meta.namespace, pod=meta.name)
                    return


def left_to_another_scheduler(facts: ClusterFacts, extender: str) -> Iterator[Finding]:
    """A pending GPU pod that asks, beside a resource of a plugin that hands out only what
    ``extender`` decided, a resource of the same vendor that no node advertises (HAMi's
    nvidia.com/gpumem and gpucores, which only its scheduler extender counts), placed by
    another scheduler that refused it as "Insufficient <that resource>": the extender's
    webhook did not route the pod to it (HAMi's, failurePolicy Ignore, fails open;
    Project-HAMi/HAMi#1429), so a scheduler that cannot count the resource never places it.
    The extender's failure, one finding for the first such pod."""
    if not facts.cluster_pods.get(extender):
        return
    plugins = [p for p, (owner, _) in DECIDED_BY.items() if owner == extender]
    advertised = {k for node in facts.nodes.values() for k, v in node.status.allocatable.items()
                  if quantity(v) > 0}
    for pod in facts.workloads_by_node.get("", []):
        decided = [p for p in plugins if p in requested_plugins(facts, pod)]
        scheduler = pod.spec.scheduler_name
        if not decided or not scheduler or bypassed(decided[0], pod) is None:
            continue
        served = {r for r in requested(pod) if any(fnmatchcase(r, g) for p in decided
                                                  for g in facts.catalog.get(p).advertises)}
        vendors = {r.partition("/")[0] for r in served}
        counted_elsewhere = [r for r in requested(pod) if r not in served and r not in advertised
                             and r.partition("/")[0] in vendors]
        found = _refused_for_any(facts, pod, counted_elsewhere)
        if found is not None:
            meta = pod.metadata
            verb = (f"did not take GPU workload {meta.namespace}/{meta.name}, left to {scheduler}, "
                    "which cannot count what it asks")
            # the line's class is the count it reports ("Insufficient"), not the words of the
            # preemption boilerplate after it ("No preemption victims found")
            yield line_finding(load_kb(), extender, Status.FAILED, found,
                               f"event Pod {meta.namespace}/{meta.name}", verb=verb, standalone="true",
                               line_class="error_resource_exhausted", namespace=meta.namespace,
                               pod=meta.name)
            return


#: The scheduler's count of the nodes HAMi's filter turned away for want of the device
#: registration its device plugin writes on the node ("node unregistered", the FailedNodes
#: reason of HAMi's extender filter, pkg/scheduler/scheduler.go), as the scheduler framework
#: sums it in a FailedScheduling message: "0/1 nodes are available: 1 node unregistered."
_UNREGISTERED = lazy_compile(r"\b\d+ nodes? unregistered\b")


def served_node_unregistered(facts: ClusterFacts, extender: str) -> Iterator[Finding]:
    """A pending GPU pod that ``extender``'s scheduler placed (its scheduler name, DECIDED_BY)
    refused by it on nodes it calls unregistered, while a node runs a Running pod of the
    plugin it decides for and advertises that plugin's resources: the plugin has registered
    the node's devices, so the extender's own registry of the node is what refuses it (HAMi's
    scheduler keeping a node's handshake at Deleted_ after a passing health failure until the
    annotation is cleared by hand; Project-HAMi/HAMi#1839, fixed in #1843). Where no node
    runs the plugin with its resources advertised the plugin's own checks answer, and a pod
    of another scheduler is not read. The extender's failure, one finding for the first pod."""
    if not facts.cluster_pods.get(extender):
        return
    decided = [(plugin, name) for plugin, (owner, name) in DECIDED_BY.items() if owner == extender]
    served = [plugin for plugin, _ in decided if _serving_somewhere(facts, plugin)]
    if not served:
        return
    names = {name for plugin, name in decided if plugin in served}
    for pod in facts.workloads_by_node.get("", []):
        if pod.spec.scheduler_name not in names:
            continue
        meta = pod.metadata
        for ev in facts.events_for("Pod", meta.namespace, meta.name):
            if ev.reason != "FailedScheduling":
                continue
            line = next((t.strip() for t in ev.message.splitlines() if _UNREGISTERED.search(t)), None)
            if line is None:
                continue
            verb = (f"refuses GPU workload {meta.namespace}/{meta.name} on nodes whose devices "
                    "its device plugin registered")
            # "node unregistered" carries no class of its own; the other nodes' reasons summed
            # in the same line ("2 Insufficient nvidia.com/gpu") and the preemption
            # boilerplate after it are not what refused the pod on the registered node
            yield line_finding(load_kb(), extender, Status.FAILED, Decisive(1, line, 2),
                               f"event Pod {meta.namespace}/{meta.name}", verb=verb, standalone="true",
                               line_class="error_unclassified", namespace=meta.namespace, pod=meta.name)
            return


def _serving_somewhere(facts: ClusterFacts, plugin: str) -> bool:
    """A node runs a Running pod of ``plugin`` and advertises one of its resources."""
    globs = facts.catalog.get(plugin).advertises
    for node_name, node in facts.nodes.items():
        pods = [sp.pod for sp in facts.pods_by_node.get(node_name, {}).get(plugin, ())]
        if not _running(pods):
            continue
        if any(quantity(v) > 0 and any(fnmatchcase(k, g) for g in globs)
               for k, v in node.status.allocatable.items()):
            return True
    return False


def _refused_for_any(facts: ClusterFacts, pod: Pod, resources: Sequence[str]) -> Decisive | None:
    """The scheduler's FailedScheduling line that calls one of ``resources`` insufficient."""
    if not resources:
        return None
    meta = pod.metadata
    for ev in facts.events_for("Pod", meta.namespace, meta.name):
        if ev.reason != "FailedScheduling":
            continue
        for line in ev.message.splitlines():
            if any(f"Insufficient {r}" in line for r in resources):
                return Decisive(1, line.strip(), 2)
    return None


def requested_plugins(facts: ClusterFacts, pod: Pod) -> list[str]:
    """Catalog components that advertise a resource the pod asks for."""
    catalog = facts.catalog
    return [c.id for c in catalog.node_components() for r in requested(pod)
            if any(fnmatchcase(r, glob) for glob in c.advertises)]


def _refusal(facts: ClusterFacts, kb: KnowledgeBase, pod: Pod) -> tuple[Text, Decisive] | None:
    """The pod's refusal at admission that relays a plugin's answer, and its line."""
    events = facts.events_for("Pod", pod.metadata.namespace, pod.metadata.name)
    for text in pod_texts(pod, (), events, ""):
        if text.reason not in KUBELET_ADMISSION:
            continue
        found = decisive_line(text.lines, kb.class_of)
        if found is not None and plugin_answer(found.line):
            return text, found
    return None



@check("gke-device-plugin", needs=("node", "cluster/pods"))
def platform_plugin_absent(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A platform that hands GPUs out through its own device plugin, run as a DaemonSet pod
    in its system namespace (GKE's nvidia-gpu-device-plugin, ``own_plugin_off_label`` set),
    leaves a GPU node without any: no pod of it or of any other plugin advertising its
    resource on the node, none of that resource allocatable, and the node not labelled to
    hand its GPUs to another plugin. Nothing then advertises the GPUs and every pod asking
    for one stays "Insufficient nvidia.com/gpu" (container-engine-accelerators#196: a node
    pool added to an existing cluster got no plugin until its DaemonSet was applied by
    hand). Judged only where a GPU pod waits unscheduled for want of that resource (the
    scheduler's "Insufficient <resource>"), on a complete pod list that covers the
    platform's namespaces; a pod that exists is judged by the pod and resource checks."""
    node, platform = ctx.node, ctx.platform
    entry = ctx.facts.catalog.get(component)
    if (node is None or not ctx.node_reporting or not platform.own_plugin_off_label
            or not set(entry.replaces) & set(platform.provides)
            or platform.own_plugin_off_label in node.metadata.labels):
        return
    facts = ctx.facts
    if not facts.pods_complete or not all(facts.pods_seen_in(ns) for ns in platform.system_namespaces):
        return
    globs = entry.advertises
    if any(ctx.stack_pods(c.id) for c in facts.catalog.components
           if set(c.advertises) & set(globs)):
        return
    allocatable = node.status.allocatable
    if not allocatable or any(quantity(v) > 0 for k, v in allocatable.items()
                              if any(fnmatchcase(k, g) for g in globs)):
        return
    if not any(_wants_unscheduled(facts, pod, globs) for pod in facts.workloads_by_node.get("", ())):
        return
    where = f"node/{ctx.name} status.allocatable"
    yield problem(component, "component_missing",
                  Evidence(where, f"no {' or '.join(globs)}; no pod of {component} on {ctx.name} "
                           f"({platform.title} runs it on every GPU node)"))


def _wants_unscheduled(facts: ClusterFacts, pod: Pod, globs: Sequence[str]) -> bool:
    """The scheduler left ``pod`` unplaced calling a resource it asks for, one of ``globs``,
    insufficient (its PodScheduled condition or a FailedScheduling event)."""
    wanted = [r for r in requested(pod) if any(fnmatchcase(r, g) for g in globs)]
    said = [c.message for c in pod.status.conditions if c.type == "PodScheduled"]
    meta = pod.metadata
    said += [ev.message for ev in facts.events_for("Pod", meta.namespace, meta.name)
             if ev.reason == "FailedScheduling"]
    return any(f"Insufficient {r}" in text for r in wanted for text in said)
