"""Facts: what the bundle says, indexed once for the checks.

ClusterFacts is built once per run; NodeObservations (node files, command
output, metrics and logs of that node's stack pods) are read per node right
before that node is judged, so memory stays bounded on large fleets and the
checks themselves never touch the file system.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NamedTuple, Protocol

import msgspec

from gpunode.bundle.kube import (
    ComputeDomain,
    ConfigMap,
    Container,
    CSINode,
    CustomResource,
    DaemonSet,
    Deployment,
    Event,
    GenericObject,
    Node,
    OwnerRef,
    Pod,
    ResourceSlice,
    RuntimeClass,
    SriovNetworkNodeState,
)
from gpunode.bundle.source import BundleSource
from gpunode.catalog import Catalog, Recogniser, load_catalog
from gpunode.gpus import gpu_evidence, gpu_node_absent_evidence, has_gpu_evidence, is_gpu_folder_file
from gpunode.limits import MemoryBudget
from gpunode.model import LeftOutNode
from gpunode.podenv import nvidia_env
from gpunode.relazy import lazy_compile

#: A node file's parse made ahead: the parsed value, or the parse error's message.
ParsedAhead = tuple[Any, str | None]


class NodeParsesAhead(Protocol):
    """Parses of node files made before the node pass, by a process that had a core to
    spare while the cluster lists were decoded (bundle/ahead.py)."""

    def parsed(self, node: str, cmd: Mapping[str, str]) -> dict[str, ParsedAhead]:
        """Parses of ``node``'s files, by bundle path under the node folder (``cmd/...``),
        each made from the very text given in ``cmd``; empty when there are none."""
        ...

    def close(self) -> None:
        """Stop making parses (the nodes are judged): no process is left behind."""
        ...


GPU_RESOURCE = "nvidia.com/gpu"
MAX_LOG_BYTES = 4 * 1024 * 1024  # per log file; 10,000+ lines of a crashed container


class MissingData(msgspec.Struct, frozen=True):
    """A file the collector could not get, and why (manifest ``missing``)."""

    path: str
    reason: str = ""


#: Skipped items remembered by name per list; past it any node may be the one skipped.
MAX_SKIPPED_NAMES = 10_000


@dataclass
class SkippedItems:
    """Items of one cluster list skipped as malformed (bundle.load), and who they were where
    their name (and, for pods, their node) could still be read. What rests on an item being
    absent from the list is not judged where a skipped one may be it (gpunode.doubt)."""

    count: int = 0
    names: set[str] = field(default_factory=set)
    #: ``spec.nodeName`` of skipped pods
    nodes: set[str] = field(default_factory=set)
    #: every skipped item's name could be read (and remembered)
    named: bool = True
    #: every skipped item's node (none: not scheduled) could be read
    placed: bool = True
    #: the first skipped item's problem, for the reason shown
    first: str = ""

    def may_be(self, name: str) -> bool:
        """Whether the item named ``name`` may be among those skipped."""
        return not self.named or name in self.names

    def may_be_on(self, node: str) -> bool:
        """Whether a skipped item may belong to ``node`` (a pod scheduled there)."""
        return not self.placed or node in self.nodes


class ScopedList(msgspec.Struct, frozen=True):
    """A list read only in some namespaces (manifest ``scoped``)."""

    path: str
    namespaces: tuple[str, ...] = ()


class Manifest(msgspec.Struct, frozen=True):
    """manifest.json; optional in hand-made bundles."""

    format: str = ""
    collected_at: str | None = None
    source: str = "manual"
    cluster_name: str | None = None
    api_server: str | None = None
    partial: bool = False
    warnings: tuple[str, ...] = ()
    missing: tuple[MissingData, ...] = ()
    scoped: tuple[ScopedList, ...] = ()
    #: Live collections since issue 11: ``suspect``, ``deep`` or ``all-nodes`` (empty: older
    #: bundles, where every node's extras were fetched), the GPU nodes that got their extras
    #: and those whose facts came from their GPUNodeReport.
    extras_policy: str = ""
    extras_nodes: tuple[str, ...] = ()
    report_nodes: tuple[str, ...] = ()
    #: ``collect -l SEL``: the selector the node list was narrowed by, and the GPU nodes it
    #: left out of ``cluster/nodes.json`` with their signs of sickness (gpunode.leftout)
    node_selector: str = ""
    left_out: tuple[LeftOutNode, ...] = ()

    def scope_of(self, rel: str) -> frozenset[str] | None:
        """The namespaces a list covers; None when it covers the whole cluster."""
        for entry in self.scoped:
            if entry.path == rel:
                return frozenset(entry.namespaces)
        return None


@dataclass(frozen=True)
class StackPod:
    """A pod recognised as part of the GPU stack."""

    component: str
    pod: Pod

    @property
    def key(self) -> tuple[str, str]:
        return self.pod.metadata.namespace, self.pod.metadata.name


@dataclass
class ClusterFacts:
    """Cluster objects plus the indexes every check needs (built once)."""

    source: BundleSource
    manifest: Manifest
    catalog: Catalog
    nodes: dict[str, Node]
    pods_by_node: dict[str, dict[str, list[StackPod]]]
    cluster_pods: dict[str, list[StackPod]]
    daemonsets: dict[str, list[DaemonSet]]
    deployments: tuple[Deployment, ...]
    events_by_object: dict[tuple[str, str, str], list[Event]]
    cluster_policies: tuple[CustomResource, ...]
    nic_policies: tuple[CustomResource, ...]
    runtime_classes: tuple[RuntimeClass, ...]
    csi_drivers: tuple[GenericObject, ...]
    csi_nodes: dict[str, CSINode]
    storage_classes: tuple[GenericObject, ...]
    services: tuple[GenericObject, ...]
    pvcs: tuple[GenericObject, ...]
    service_monitors: tuple[GenericObject, ...]
    config_maps: tuple[ConfigMap, ...]
    workload_pods: tuple[Pod, ...]
    version: dict[str, str]
    missing: tuple[str, ...]
    log_index: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    node_dirs: frozenset[str] = frozenset()
    node_gpu_files: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: Every file of each node folder (bundle paths, sorted), from the one listing of nodes/:
    #: reading a node needs no second walk of its folder.
    node_files: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: resources whose file had malformed items that were skipped (see bundle.load)
    damaged: frozenset[str] = frozenset()
    #: those skipped items by resource: how many, and who they were (see bundle.load)
    skipped: dict[str, SkippedItems] = field(default_factory=dict)
    #: Memory grown since the bundle began to be read (limits.py); None: not counted.
    memory: MemoryBudget | None = None
    #: Pods outside the GPU stack that validate's network checks read (CNI agents), in
    #: list order: kept while the pod list is indexed, so nothing decodes it twice.
    network_pods: tuple[Pod, ...] = ()
    #: Pods outside the stack that ask for the RDMA device plugin's resources and no GPU
    #: (``_requests_rdma``: an RDMA test such as ib_write_bw between two pods): what they log
    #: about the verbs path is read as a GPU job's is, for the RDMA layers only.
    fabric_pods: tuple[Pod, ...] = ()
    #: Pods outside the GPU stack the kubelet refused at admission (``_refused_at_admission``):
    #: what it said of the node's own features is read as the kubelet's (checks.host_admission).
    refused_pods: tuple[Pod, ...] = ()
    #: Pods outside the GPU stack, by (namespace, name), that ask for no device plugin's resource
    #: and no ResourceClaim: no device can have been allocated to them
    #: (checks.secondary_network reads a CNI's refusal for want of one).
    plain_pods: frozenset[tuple[str, str]] = frozenset()
    #: logs of the cluster-side pods (``cluster_side``), read once by bundle.load
    cluster_logs: dict[tuple[str, str], tuple[LogFile, ...]] = field(default_factory=dict)
    #: Node files parsed by a helper process while the lists were decoded (bundle/ahead.py).
    ahead: NodeParsesAhead | None = None
    #: DRA ResourceSlices and the DRA driver's ComputeDomains; None where the bundle has no
    #: such list (an older collector, or a cluster that does not serve the API)
    resource_slices: tuple[ResourceSlice, ...] | None = None
    compute_domains: tuple[ComputeDomain, ...] | None = None
    #: The SR-IOV Network Operator's SriovNetworkNodeStates (named after their nodes); None
    #: where the bundle has none (a cluster without the operator's CRD, an older collector)
    sriov_node_states: tuple[SriovNetworkNodeState, ...] | None = None
    #: Readings the checks share between nodes alike in all a reading reads (its key names
    #: what that is: ``checks.pods.absent_shared``). Bound to these facts, never copied (a facts
    #: object made from another starts without them).
    shared: dict[object, object] = field(default_factory=dict, init=False, compare=False, repr=False)

    @cached_property
    def cluster_side(self) -> dict[str, list[StackPod]]:
        """Stack pods that serve the whole cluster, by component: the cluster components'
        pods, and the Deployment/StatefulSet pods of node components (nfd-master), which
        run on one node but act on all of them."""
        out: dict[str, list[StackPod]] = {k: list(v) for k, v in self.cluster_pods.items()}
        for by_component in self.pods_by_node.values():
            for component, pods in by_component.items():
                out.setdefault(component, []).extend(sp for sp in pods if _serves_cluster(sp.pod))
        return {k: v for k, v in out.items() if v}

    @cached_property
    def logged_nodes(self) -> frozenset[str]:
        """Nodes with a stack pod whose log the bundle holds (most nodes have none)."""
        return frozenset(node for node, by_component in self.pods_by_node.items()
                         if any(sp.key in self.log_index for pods in by_component.values() for sp in pods))

    @cached_property
    def side_logged(self) -> frozenset[str]:
        """Components with a cluster-wide pod (nfd-master) that has log lines: what their
        decisive lines say is read for every node."""
        return frozenset(
            component for component, pods in self.cluster_side.items()
            if any(log.lines for sp in pods for log in self.cluster_logs.get(sp.key, ())))

    @cached_property
    def workloads_by_node(self) -> dict[str, list[Pod]]:
        """GPU workload pods by the node they run on (or are pinned to): ``target_node``,
        read as its first test (the node a scheduled pod runs on) without a call for each
        of the fleet's workload pods (nearly all scheduled)."""
        out: dict[str, list[Pod]] = defaultdict(list)
        for pod in self.workload_pods:
            spec = pod.spec
            out[spec.node_name or spec.target_node].append(pod)
        return dict(out)

    @cached_property
    def logged_workloads_by_node(self) -> dict[str, list[Pod]]:
        """GPU workload pods whose log the bundle holds, by node (most bundles hold none):
        what NCCL or CUDA said there is read as evidence of the node's stack."""
        index = self.log_index
        out: dict[str, list[Pod]] = defaultdict(list)
        for pods in (self.workload_pods, self.fabric_pods):
            for pod in pods:
                if (pod.metadata.namespace, pod.metadata.name) in index:
                    out[pod.spec.target_node].append(pod)
        return dict(out)

    @cached_property
    def fabric_keys(self) -> frozenset[tuple[str, str]]:
        """The namespace and name of each of ``fabric_pods``."""
        return frozenset((p.metadata.namespace, p.metadata.name) for p in self.fabric_pods)

    @cached_property
    def sandbox_refusals_by_host(self) -> dict[str, list[Event]]:
        """The kubelet's FailedCreatePodSandBox events by the node that recorded them
        (``source.host``), for pods of every kind: a pod outside the GPU stack (a CNI or
        cluster agent) whose sandbox the node's runtime refuses is not indexed as a pod, yet
        its event may name the node's runtime setup. Found once for the fleet."""
        out: dict[str, list[Event]] = defaultdict(list)
        for (kind, _, _), events in self.events_by_object.items():
            if kind != "Pod":
                continue
            for ev in events:
                if ev.reason == "FailedCreatePodSandBox" and ev.source.host:
                    out[ev.source.host].append(ev)
        return dict(out)

    @cached_property
    def troubled_workloads_by_node(self) -> dict[str, list[Pod]]:
        """GPU workloads that have not started or whose container last ended in an error
        (``workload_troubled``), by node: found once for the fleet (on the first node,
        before worker processes fork), so a node's judgement touches only its own few,
        never every workload pod (whose pages each worker would otherwise copy)."""
        out: dict[str, list[Pod]] = {}
        for node, pods in self.workloads_by_node.items():
            troubled = [pod for pod in pods if workload_troubled(pod)]
            if troubled:
                out[node] = troubled
        return out

    @classmethod
    def build(
        cls,
        source: BundleSource,
        manifest: Manifest,
        lists: Mapping[str, Sequence[Any]],
        missing: tuple[str, ...],
        version: dict[str, str],
    ) -> ClusterFacts:
        """Index decoded lists: pods by node and component, events by object."""
        catalog = load_catalog()
        recogniser = Recogniser(catalog)
        pods = lists.get("pods", ())
        indexed = _index_pods(pods, catalog, recogniser)
        return cls(
            source=source,
            manifest=manifest,
            catalog=catalog,
            nodes={n.metadata.name: n for n in lists.get("nodes", ())},
            pods_by_node=indexed.by_node,
            cluster_pods=indexed.cluster,
            daemonsets=_index_daemonsets(lists.get("daemonsets", ()), recogniser),
            deployments=tuple(lists.get("deployments", ())),
            events_by_object=_index_events(lists.get("events", ())),
            cluster_policies=tuple(lists.get("clusterpolicies", ())),
            nic_policies=tuple(lists.get("nicclusterpolicies", ())),
            runtime_classes=tuple(lists.get("runtimeclasses", ())),
            csi_drivers=tuple(lists.get("csidrivers", ())),
            csi_nodes={c.metadata.name: c for c in lists.get("csinodes", ())},
            storage_classes=tuple(lists.get("storageclasses", ())),
            services=tuple(lists.get("services", ())),
            pvcs=tuple(lists.get("persistentvolumeclaims", ())),
            service_monitors=tuple(lists.get("servicemonitors", ())),
            config_maps=tuple(lists.get("configmaps", ())),
            workload_pods=indexed.workloads,
            version=version,
            missing=missing,
            log_index=_index_logs(source),
            network_pods=indexed.network,
            fabric_pods=indexed.fabric,
            refused_pods=indexed.refused,
            plain_pods=indexed.plain,
            resource_slices=_optional(lists, "resourceslices"),
            compute_domains=_optional(lists, "computedomains"),
            sriov_node_states=_optional(lists, "sriovnetworknodestates"),
            **index_node_dirs(source.list("nodes")),
        )

    def config_map(self, namespace: str, name: str) -> ConfigMap | None:
        """A collected ConfigMap by namespace and name (only the GPU stack's are collected)."""
        return next(
            (c for c in self.config_maps if c.metadata.namespace == namespace and c.metadata.name == name),
            None,
        )

    def has(self, resource: str) -> bool:
        """Whether cluster/<resource>.json was in the bundle."""
        return f"cluster/{resource}.json" not in self.missing

    def pods_seen_in(self, namespace: str) -> bool:
        """Whether the pod list covers ``namespace`` (a scoped list covers only some)."""
        if not self.has("pods") or "pods" in self.damaged:
            return False
        scope = self.manifest.scope_of("cluster/pods.json")
        return scope is None or namespace in scope

    @property
    def pods_complete(self) -> bool:
        """A cluster-wide, undamaged pod list (and DaemonSet list): an absent pod is absent."""
        return (self.has("pods") and self.manifest.scope_of("cluster/pods.json") is None
                and not self.damaged & {"pods", "daemonsets"})

    def pods_on(self, node: str, component: str) -> list[StackPod]:
        return self.pods_by_node.get(node, {}).get(component, [])

    def events_for(self, kind: str, namespace: str, name: str) -> list[Event]:
        return self.events_by_object.get((kind, namespace, name), [])

    def gpu_nodes(self) -> list[str]:
        """Nodes with GPU evidence (docs/design.md): capacity, NFD/GFD/operator labels, a
        GPU-stack pod, or GPU facts in the node folder. A folder alone is not evidence."""
        return sorted(n for n in self.nodes if self.is_gpu_node(n)) + sorted(
            d for d in self.node_dirs if d not in self.nodes and self.node_gpu_files.get(d)
        )

    def is_gpu_node(self, name: str) -> bool:
        """Whether ``gpu_evidence`` finds any; asked for every node more than once, so kept."""
        known = self._is_gpu_node.get(name)
        if known is None:
            known = self._is_gpu_node[name] = has_gpu_evidence(*self._evidence_of(name))
        return known

    @cached_property
    def _is_gpu_node(self) -> dict[str, bool]:
        return {}

    def gpu_evidence(self, name: str) -> list[str]:
        """What says this node has (or should have) GPUs; empty when nothing does."""
        return gpu_evidence(*self._evidence_of(name))

    def _evidence_of(self, name: str) -> _Evidence:
        """What gpus.gpu_evidence reads of a node: labels, resources, stack components, folder files."""
        node = self.nodes.get(name)
        return (
            node.metadata.labels if node else {},
            {**node.status.capacity, **node.status.allocatable} if node else {},
            list(self.pods_by_node.get(name, {})),
            self.node_gpu_files.get(name, ()),
        )

    @cached_property
    def _extras_sets(self) -> tuple[frozenset[str], frozenset[str]]:
        return frozenset(self.manifest.extras_nodes), frozenset(self.manifest.report_nodes)

    def extras_not_fetched(self, name: str) -> str:
        """Why this node's files (execs, scrapes) are absent by design; empty when they were
        asked for (or the bundle predates list-first collection)."""
        if not self.manifest.extras_policy:
            return ""
        extras, reports = self._extras_sets
        if name in extras:
            return ""
        basis = "the cluster lists and its GPUNodeReport" if name in reports else "the cluster lists"
        return f"node extras not fetched: judged healthy from {basis} (--deep fetches them)"

    def why_not_gpu_node(self, name: str) -> str:
        """The evidence that is absent, said plainly (for ``diagnose <node>`` of a non-GPU node)."""
        return gpu_node_absent_evidence(name in self.node_dirs)


_Evidence = tuple[Mapping[str, str], Mapping[str, str], list[str], Sequence[str]]

#: Controllers whose pods are a cluster-wide service, not one node's agent.
_CLUSTER_OWNERS = frozenset({"ReplicaSet", "StatefulSet", "Deployment"})


def _optional(lists: Mapping[str, Sequence[Any]], name: str) -> tuple[Any, ...] | None:
    """A list the bundle may lack (bundle.load.OPTIONAL): None when it does."""
    items = lists.get(name)
    return None if items is None else tuple(items)


def _serves_cluster(pod: Pod) -> bool:
    return any(o.kind in _CLUSTER_OWNERS for o in pod.metadata.owner_references)


def _quantity(value: str | None) -> int:
    try:
        return int(value or 0)
    except ValueError:
        return 0


class _PodIndex(NamedTuple):
    by_node: dict[str, dict[str, list[StackPod]]]
    cluster: dict[str, list[StackPod]]
    workloads: tuple[Pod, ...]
    network: tuple[Pod, ...]
    fabric: tuple[Pod, ...]
    refused: tuple[Pod, ...]
    plain: frozenset[tuple[str, str]]


def _index_pods(pods: Sequence[Pod], catalog: Catalog, recogniser: Recogniser) -> _PodIndex:
    """One pass over all pods: stack pods by node and component; GPU workloads; CNI agents
    (validate's network checks). Per pod only dictionary lookups: what its owners, labels
    and images say is looked up once per distinct value (a fleet has few of each)."""
    scope = {c.id: c.scope for c in catalog.components}
    by_node: dict[str, dict[str, list[StackPod]]] = {}
    cluster: dict[str, list[StackPod]] = {}
    workloads: list[Pod] = []
    claiming: list[Pod] = []
    network: list[Pod] = []
    fabric: list[Pod] = []
    refused: list[Pod] = []
    plain: set[tuple[str, str]] = set()
    agents = _NetworkAgents()
    component_of = recogniser.component_of_pod
    for pod in pods:
        meta, spec = pod.metadata, pod.spec
        if agents.runs(meta.owner_references, spec.containers):
            network.append(pod)
        component = component_of(meta.owner_references, meta.labels, spec.containers)
        if component is None:
            _sort_unowned(pod, workloads, claiming, fabric)
            if _refused_at_admission(pod):
                refused.append(pod)
            if not spec.resource_claims and not _requests_extended(spec.containers):
                plain.add((meta.namespace, meta.name))
            continue
        entry = StackPod(component, pod)
        if scope[component] == "cluster":
            listed = cluster.get(component)
            if listed is None:
                listed = cluster[component] = []
            listed.append(entry)
            continue
        node = spec.target_node
        on_node = by_node.get(node)
        if on_node is None:
            on_node = by_node[node] = {}
        listed = on_node.get(component)
        if listed is None:
            listed = on_node[component] = []
        listed.append(entry)
    workloads.extend(pod for pod in claiming if _dra_gpu_node(by_node.get(pod.spec.target_node)))
    return _PodIndex(by_node, cluster, tuple(workloads), tuple(network), tuple(fabric), tuple(refused),
                     frozenset(plain))


def extended_requests(containers: Sequence[Container]) -> Iterator[str]:
    """The extended resources (a device plugin's, named with a domain) the containers request
    or limit."""
    return (key for c in containers for key in (*c.resources.limits, *c.resources.requests) if "/" in key)


def _requests_extended(containers: Sequence[Container]) -> bool:
    """A request or limit on an extended resource."""
    return next(extended_requests(containers), None) is not None


def _refused_at_admission(pod: Pod) -> bool:
    """A pod the kubelet of its node refused before starting any container: its own reason
    and message on the pod's status, no container status (the kubelet's admit handlers,
    pkg/kubelet/lifecycle, set both and start nothing; a soft refusal leaves it Pending)."""
    status = pod.status
    return (status.phase in ("Failed", "Pending") and bool(status.reason and status.message)
            and bool(pod.spec.node_name) and not status.container_statuses)


def _sort_unowned(pod: Pod, workloads: list[Pod], claiming: list[Pod], fabric: list[Pod]) -> None:
    """A pod outside the stack goes to the GPU workloads, to those with ResourceClaims (GPU
    workloads where the DRA driver runs) or to those that ask for RDMA devices only."""
    containers = pod.spec.containers
    if _requests_gpu(containers) or _asks_nvidia_runtime(pod) or _asks_gpus_by_env(containers):
        workloads.append(pod)
    elif pod.spec.resource_claims:
        claiming.append(pod)
    elif _requests_rdma(containers):
        fabric.append(pod)


#: The RuntimeClasses that select NVIDIA's runtime handler as the GPU Operator, the toolkit's
#: docs and k3s/RKE2 name them (nvidia, nvidia-cdi, nvidia-legacy, nvidia-experimental).
_NVIDIA_RUNTIME_CLASS = lazy_compile(r"^nvidia(?:-[\w-]+)?$")


def _asks_gpus_by_env(containers: Sequence[Container]) -> bool:
    """A container whose pod spec sets NVIDIA_VISIBLE_DEVICES literally to GPUs (``all``, ids):
    where NVIDIA's runtime is the node's default it hands the container those GPUs by the
    variable alone, no GPU resource asked (the toolkit's "Specialized Configurations", environment
    variables; a Talos node whose default runtime is nvidia-container-runtime.cdi running a
    transcoder with NVIDIA_VISIBLE_DEVICES=all and no nvidia.com/gpu limit)."""
    return any(env.visible is not None and not env.asks_no_gpu() for env in map(nvidia_env, containers))


def _asks_nvidia_runtime(pod: Pod) -> bool:
    """A pod that names NVIDIA's RuntimeClass asks the NVIDIA runtime for GPUs even without a
    GPU resource: GPU-sharing schedulers (KAI's gpu-fraction) hand it a GPU by annotation and
    environment, and the runtime, not a device plugin, injects the device."""
    name = pod.spec.runtime_class_name
    return name is not None and _NVIDIA_RUNTIME_CLASS.match(name) is not None


def _dra_gpu_node(components: Mapping[str, object] | None) -> bool:
    """A node where NVIDIA's DRA driver runs: a pod with ResourceClaims there is a GPU
    workload (which driver its claims name is not read; on such a node it is this one)."""
    return components is not None and "dra-kubelet-plugin" in components


#: Owners (DaemonSets) and images of CNI agent pods, which validate's network checks read.
NETWORK_AGENT_OWNERS = frozenset(
    {
        "cilium",
        "calico-node",
        "canal",
        "kube-flannel-ds",
        "kube-flannel",
        "weave-net",
        "antrea-agent",
        "kube-ovn-cni",
        "ovnkube-node",
        "aws-node",
        "kube-router",
        "kube-multus-ds",
    }
)
NETWORK_AGENT_IMAGES = lazy_compile(
    r"(cilium/cilium:|calico/node:|/flannel:|weave-kube|antrea/antrea|kube-ovn|ovn-kubernetes"
    r"|amazon-k8s-cni:|kube-router|multus-cni)"
)


class _NetworkAgents:
    """Pods owned by a CNI agent's controller (by name) or running a CNI agent's image;
    each distinct owner list and image is matched once."""

    def __init__(self) -> None:
        self._owners: dict[tuple[OwnerRef, ...], bool] = {}
        self._images: dict[str, bool] = {}

    def runs(self, owners: tuple[OwnerRef, ...], containers: Sequence[Container]) -> bool:
        by_owner = self._owners.get(owners)
        if by_owner is None:
            by_owner = self._owners[owners] = any(o.name in NETWORK_AGENT_OWNERS for o in owners)
        if by_owner:
            return True
        for container in containers:
            hit = self._images.get(container.image)
            if hit is None:
                hit = self._images[container.image] = NETWORK_AGENT_IMAGES.search(container.image) is not None
            if hit:
                return True
        return False


#: Domains of GPU-sharing schedulers' resources that slice NVIDIA GPUs: Volcano's
#: (volcano.sh/gpu-number, gpu-memory, vgpu-*) and Alibaba's GPU share (aliyun.com/gpu-mem,
#: gpu-count: AliyunContainerService/gpushare-device-plugin), whose plugins hand the pod
#: NVIDIA_VISIBLE_DEVICES as NVIDIA's does, and Tencent's GPU manager (tencent.com/vcuda-core,
#: vcuda-memory: tkestack/gpu-manager), whose plugin hands it NVIDIA's devices behind its vcuda
#: library, and elastic-gpu's (elastic-gpu/gpu-percent, nano-gpu/gpu-percent before its rename:
#: elastic-ai/elastic-gpu-agent pkg/common/const.go), whose agent is the device plugin that slices
#: a node's NVIDIA GPUs into percents.
_SHARING_DOMAINS = ("volcano.sh/", "aliyun.com/", "tencent.com/", "elastic-gpu/", "nano-gpu/")
#: Words of a sharing domain's resource name that say it slices a GPU.
_SHARED_GPU_WORDS = ("gpu", "vcuda")


#: The kubelet's own NVIDIA GPU resource before device plugins (Kubernetes 1.6 to 1.10, its
#: built-in GPU manager; removed in 1.11): a pod asking it is a GPU workload of that kubelet.
_KUBELET_GPU = "alpha.kubernetes.io/nvidia-gpu"


def _requests_gpu(containers: Sequence[Container]) -> bool:
    """NVIDIA's resources (nvidia.com/gpu, MIG, shared: also HAMi's and GKE's), the kubelet's
    legacy ``_KUBELET_GPU``, or the GPU resources of the sharing schedulers of
    ``_SHARING_DOMAINS``."""
    for container in containers:
        for key in container.resources.limits:
            if key.startswith("nvidia.com/") or key == _KUBELET_GPU or (
                    key.startswith(_SHARING_DOMAINS) and any(w in key for w in _SHARED_GPU_WORDS)):
                return True
    return False


#: The resources RDMA devices are handed out as: the RDMA shared device plugin's (its default
#: resourcePrefix: rdma/hca_shared_devices_a, rdma/rdma_shared_device_a), and the SR-IOV
#: network device plugin's RDMA VF pools under whatever prefix the deployment gives them
#: (intel.com by default, openshift.io on OpenShift, nvidia.com with the Network Operator),
#: named for the NIC or its RDMA use by convention (mlnx_sriov_rdma, mlxnics, sriov_rdma_vf).
_RDMA_RESOURCE = lazy_compile(r"^rdma/|^[\w.-]+/\w*(?:rdma|mlnx|mlx|roce|hca)", re.IGNORECASE)


def _requests_rdma(containers: Sequence[Container]) -> bool:
    """A limit on one of the resources RDMA devices are handed out as (``_RDMA_RESOURCE``)."""
    return any(_RDMA_RESOURCE.search(key) for c in containers for key in c.resources.limits)


def _index_daemonsets(daemonsets: Sequence[DaemonSet], recogniser: Recogniser) -> dict[str, list[DaemonSet]]:
    """DaemonSets by component, recognised from their own name, labels and images."""
    out: dict[str, list[DaemonSet]] = defaultdict(list)
    for ds in daemonsets:
        template = ds.spec.template
        containers = [(c.name, c.image) for c in template.spec.containers]
        cid = recogniser.component_of([ds.metadata.name], template.metadata.labels, containers)
        if cid:
            out[cid].append(ds)
    return dict(out)


def _index_events(events: Sequence[Event]) -> dict[tuple[str, str, str], list[Event]]:
    out: dict[tuple[str, str, str], list[Event]] = defaultdict(list)
    for ev in events:
        obj = ev.involved_object
        out[(obj.kind, obj.namespace, obj.name)].append(ev)
    return dict(out)


def _index_logs(source: BundleSource) -> dict[tuple[str, str], list[str]]:
    out: dict[tuple[str, str], list[str]] = defaultdict(list)
    for rel in source.list("logs"):
        parts = rel.split("/")
        if len(parts) == 4:
            out[(parts[1], parts[2])].append(rel)
    return dict(out)


def index_node_dirs(listing: Iterable[str]) -> dict[str, Any]:
    """Node folders, their files, and per folder the files in it that are GPU facts (one
    pass over a listing of nodes/)."""
    files: dict[str, list[str]] = {}
    gpu_files: dict[str, list[str]] = defaultdict(list)
    name: str | None = None
    in_folder: list[str] = []
    for rel in listing:  # sorted: a folder's files come one after another
        if rel.count("/") < 3:
            continue
        _, folder, inner = rel.split("/", 2)
        if folder != name:  # (setdefault: correct in any order, cheap when sorted)
            name, in_folder = folder, files.setdefault(folder, [])
        in_folder.append(rel)
        if is_gpu_folder_file(inner):
            gpu_files[name].append(inner)
    return {
        "node_dirs": frozenset(files),
        "node_gpu_files": {k: tuple(sorted(v)) for k, v in gpu_files.items()},
        "node_files": {k: tuple(v) for k, v in files.items()},
    }


@dataclass(frozen=True)
class LogFile:
    """One container log from the bundle, kept as lines for signature matching."""

    path: str
    namespace: str
    pod: str
    container: str
    previous: bool
    lines: tuple[str, ...]


@dataclass(frozen=True)
class NodeObservations:
    """Raw node-level observations, read from the bundle right before judging a node."""

    name: str
    cmd: Mapping[str, str]
    files: Mapping[str, str]
    metrics: Mapping[str, str]
    logs: Mapping[tuple[str, str], tuple[LogFile, ...]]
    #: Files already parsed (ClusterFacts.ahead), by path under the node folder.
    parsed: Mapping[str, ParsedAhead] | None = None

    def path_of(self, kind: str, name: str) -> str:
        """The bundle path of an observation, for evidence."""
        return f"nodes/{self.name}/{kind}/{name.lstrip('/')}"


def workload_troubled(pod: Pod) -> bool:
    """A workload that has not started (``workload_stuck``), or one whose container's last
    run ended with an error and left a message (terminationMessagePolicy
    FallbackToLogsOnError keeps its last log lines there): what a GPU job said when it lost
    its GPUs. Asked of every workload pod of the fleet once, so read in one pass over its
    statuses, without a generator or a tuple made for each pod."""
    status = pod.status
    if status.phase in _NOT_STARTED:
        return True
    for cs in status.init_container_statuses:
        waiting = cs.state.waiting
        if waiting is not None and waiting.reason:
            return True
    for cs in status.container_statuses:
        state = cs.state
        waiting, ended, last = state.waiting, state.terminated, cs.last_state.terminated
        if waiting is not None and waiting.reason:
            return True
        if ended is not None and ended.exit_code != 0 and ended.message:
            return True
        if last is not None and last.exit_code != 0 and last.message:
            return True
    return False


#: Pod phases of a workload that has not started (or will not).
_NOT_STARTED = frozenset({"Pending", "Failed"})


def workload_stuck(pod: Pod) -> bool:
    """A workload pod that has not started: still Pending or Failed, or a container
    waiting to be created or run (a Running pod's old events may be from a past attempt)."""
    if pod.status.phase in ("Pending", "Failed"):
        return True
    statuses = (*pod.status.init_container_statuses, *pod.status.container_statuses)
    return any(cs.state.waiting is not None and cs.state.waiting.reason for cs in statuses)
