"""The layer a GPU workload's refusal names: the operation that failed, and the component
that serves what the pod asked for.

An error is raised by an operation, and the operation has an owner: the kubelet's
``Allocate`` call is answered by the device plugin that serves the requested extended
resource on that node (nvidia.com/gpu: NVIDIA's plugin, or HAMi's or GKE's where one of
those runs instead; volcano.sh/*: Volcano's), so a gRPC answer it relays at admission
("Allocate failed due to rpc error: code = Unknown desc = ...") is that plugin's, whatever
words the plugin chose. A DRA prepare (``FailedPrepareDynamicResources``,
``NodePrepareResources``) is the DRA kubelet plugin's operation: a layer its message names
counts only where the plugin depends on it (the driver, the GPU, the kubelet); a CDI spec
in it is the one the plugin itself writes for the claim, not the toolkit's.

The kubelet's predicate admission counts what the node had when it admitted the pod ("Node
didn't have enough resource: R, requested: N, used: U, capacity: C", reason OutOf<R>): devices
that existed and were all held (used = capacity > 0) is contention (a scheduler that placed
the pod anyway), not a failure of the stack; capacity 0 on a node that advertises the
resource now is the kubelet admitting the pod before the plugin registered again (a node
restart), the kubelet's. Its device manager's own refusals ("requested number of devices
unavailable", "no healthy devices present") stay the kubelet's: whether running pods held
every GPU or its record of them was stale is not something a bundle's pod list settles.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase

from gpunode.bundle.kube import Pod
from gpunode.catalog import Catalog
from gpunode.checks.context import NodeContext
from gpunode.gpus import quantity
from gpunode.relazy import lazy_compile

KUBELET = "kubelet"
DRA_PLUGIN = "dra-kubelet-plugin"
#: The kubelet's event for a pod whose ResourceClaims the DRA plugin could not prepare.
DRA_PREPARE_REASON = "FailedPrepareDynamicResources"
#: The DRA prepare operation in the kubelet's words (its event, its journal).
_DRA_PREPARE = lazy_compile(r"NodePrepareResources|[Ff]ailed to prepare dynamic resources")
#: A device plugin's own answer to the kubelet's Allocate, relayed at admission: a gRPC
#: status ("rpc error: code = Unknown desc = ..."). "no healthy devices present" is the
#: device manager's own count, not the plugin's words (a plugin not registered again yet).
#: Without the gRPC wrapping (a report that pasted the message alone) a plugin's refusal still
#: names the request it refuses in its own format: k8s-device-plugin's "request for
#: 'nvidia.com/gpu: 2' too large: ..." (later 'invalid request: ...'), its "invalid allocation
#: request for 'nvidia.com/gpu': unknown device"; the kubelet's own device-manager words never
#: quote a resource after "request for" ("changed request for resource").
_PLUGIN_ANSWER = lazy_compile(r"\brpc error: code = \w+ desc = |(?:^|: )(?:invalid (?:allocation )?request"
                              r"(?::| for ['\"])|request for ['\"][a-z0-9.-]+/)")
#: The kubelet's predicate admission (reason OutOf<resource>): its own count when it admitted.
_SHORT_OF = lazy_compile(r"\bdidn.t have enough resource: (?P<resource>[\w./-]+), requested: \d+, "
                         r"used: \d+, capacity: (?P<capacity>\d+)")
#: A qualified extended resource named in a message (vendor domain / name).
_RESOURCE = lazy_compile(r"\b(?P<resource>[a-z0-9-]+(?:\.[a-z0-9-]+)+/[\w.-]*\w)")
#: Device plugins that hand a pod only what a scheduler extender decided for it, with that
#: component and the scheduler name it places such pods under: HAMi's plugin reads the
#: devices HAMi's scheduler wrote into the pod's annotations, and HAMi's admission webhook
#: sets schedulerName hami-scheduler on every pod asking HAMi's resources (with failurePolicy
#: Ignore, a webhook the API server cannot call leaves the pod to the default scheduler).
DECIDED_BY = {"hami-device-plugin": ("hami-scheduler", "hami-scheduler")}
#: Resources a pod requests that no device plugin serves.
_NATIVE = ("cpu", "memory", "ephemeral-storage", "hugepages-", "pods")


@dataclass(frozen=True)
class NodeServing:
    """What a node tells about the extended resources its workloads ask for: what it
    advertises now and which plugin running on it serves each."""

    allocatable: Mapping[str, str]
    #: components with a pod on the node, as the catalog lists them
    running: tuple[str, ...]
    #: the driver is installed and loaded on the host (``gpunode.checks.named.host_driver``)
    host_driver: bool = False

    @classmethod
    def of(cls, ctx: NodeContext, host_driver: bool = False) -> NodeServing:
        """The node's serving facts; ``host_driver`` as the caller read it (named's reading,
        passed in so that this module stays under the layers that read lines)."""
        node = ctx.node
        allocatable = node.status.allocatable if node is not None else {}
        running = tuple(c.id for c in ctx.facts.catalog.node_components() if ctx.stack_pods(c.id))
        return cls(allocatable, running, host_driver)

    def plugin_for(self, catalog: Catalog, resource: str) -> str | None:
        """The running component that advertises ``resource`` here (catalog ``advertises``);
        of several, the one that replaces another (HAMi's plugin where NVIDIA's also runs).
        Where no pod seen here serves it, the one catalogued component that can advertise
        it (``sole_advertiser``)."""
        can = catalog.advertisers(resource)
        serving = [cid for cid in self.running if cid in can]
        replacing = [cid for cid in serving if set(catalog.get(cid).replaces) & set(serving)]
        chosen = replacing or serving
        return chosen[0] if chosen else sole_advertiser(catalog, resource)


def sole_advertiser(catalog: Catalog, resource: str) -> str | None:
    """The one catalogued component that can advertise ``resource`` (Volcano's plugin for
    volcano.sh/*); None where several can (nvidia.com/gpu: NVIDIA's, HAMi's or GKE's plugin)
    or none. A plugin answered the kubelet for that resource, so one serves it on the node
    even where its pod is not among those seen (another namespace, a host service)."""
    owners = catalog.advertisers(resource)
    return owners[0] if len(owners) == 1 else None


#: The API server's words for an admission webhook it could not call, relayed in the
#: FailedCreate event of the controller whose pod it refused: the webhook's name and the
#: Service it posted to ('failed calling webhook "vgpu.hami.io": failed to call webhook: Post
#: "https://hami-scheduler.kube-system.svc:443/webhook?timeout=10s": context deadline
#: exceeded', Project-HAMi/HAMi#379, #653). A webhook that answered ('admission webhook "x"
#: denied the request: ...') is a decision, not this.
_WEBHOOK_CALL = lazy_compile(r'failed calling webhook "[^"]+"[^\n]*?https://(?P<service>[a-z0-9]'
                             r'(?:[a-z0-9-]*[a-z0-9])?)\.[a-z0-9-]+\.svc\b')


def webhook_owner(catalog: Catalog, line: str) -> str | None:
    """The cluster component that serves an admission webhook the API server could not
    call: the one catalogued component whose Deployment the webhook's Service is named for
    (HAMi's scheduler serves its webhook from the hami-scheduler Service); None where the
    line names no such call, or the Service is no catalogued component's."""
    found = _WEBHOOK_CALL.search(line)
    if found is None:
        return None
    owners = [c.id for c in catalog.components if c.scope == "cluster"
              and any(fnmatchcase(found["service"], glob) for glob in c.daemonsets)]
    return owners[0] if len(owners) == 1 else None


def owned(catalog: Catalog, owner: str, line: str) -> str:
    """The component an error of ``owner``'s own operation belongs to: the lowest layer the
    line names among those ``owner`` depends on, else ``owner`` itself (what else it names is
    part of its own work)."""
    below = catalog.dependencies(owner)
    return next((cid for cid in catalog.all_named_in(line) if cid in below), owner)


def dra_prepare(reason: str, line: str) -> bool:
    """Whether the error is the DRA plugin's prepare of a pod's claims."""
    return reason == DRA_PREPARE_REASON or _DRA_PREPARE.search(line) is not None


#: CRI-O's refusal of a device a privileged container is given at a container path other than
#: its host path, where that container path already exists on the host (a privileged container
#: sees the host's /dev, so it would reach the host's node, not the one given): cri-o
#: internal/factory/container device.go, "privileged container was configured with a device
#: container path that already exists on the host".
_DEVICE_PATH_ON_HOST = lazy_compile(r"\bdevice container path that already exists on the host\b")


def claimed_device_refused(line: str, pod: Pod | None) -> bool:
    """Whether the runtime refused a device the pod was given through its ResourceClaims alone
    (no extended resource asked for): the DRA plugin prepared those devices and wrote the CDI
    spec that maps them, host path to container path, and the device nodes it made appear at
    their container paths on the host are its own doing (kubernetes-sigs/dra-driver-nvidia-gpu
    #477: the plugin's host /dev mount let NVML create /dev/nvidia* on the host, and CRI-O
    refused every privileged pod with a GPU claim). A pod that also asks for an extended
    resource got devices from a device plugin too, and which one's path it was the line does
    not say."""
    return (pod is not None and bool(pod.spec.resource_claims) and not requested(pod)
            and _DEVICE_PATH_ON_HOST.search(line) is not None)


def requested(pod: Pod | None) -> tuple[str, ...]:
    """The extended resources the pod's containers ask for."""
    if pod is None:
        return ()
    names = {name for c in (*pod.spec.init_containers, *pod.spec.containers)
             for name in (*c.resources.limits, *c.resources.requests)}
    return tuple(sorted(n for n in names if "/" in n and not n.startswith(_NATIVE)))


#: The kubelet's device manager's own count: the devices it knows free did not cover the pod
#: (pkg/kubelet/cm/devicemanager: "requested number of devices unavailable for <resource>.
#: Requested: N, Available: M"; the built-in NVIDIA GPU manager before device plugins,
#: pkg/kubelet/gpu/nvidia: "requested number of GPUs unavailable. Requested: N, Available: M",
#: returned when the container is started, so the pod shows RunContainerError).
_COUNTED_OUT = lazy_compile(r"\brequested number of (?:devices unavailable for |GPUs unavailable\b)")
#: Scheduler names of the stack's own schedulers: the default one, the extenders that place
#: pods for a plugin (``DECIDED_BY``) and Volcano's, whose GPU ids Volcano's device plugin
#: hands out (volcano-sh/devices#10).
_STACK_SCHEDULERS = frozenset({"default-scheduler", "volcano", *(name for _, name in DECIDED_BY.values())})


def placed_outside(pod: Pod | None) -> bool:
    """Whether a scheduler outside the stack placed the pod (a batch scheduler such as
    kube-batch, with its own cache of what each node has free): the device manager's count
    that refuses such a pod is that scheduler placing it on devices all held
    (kubernetes-sigs/kube-batch#931), not a failure of the node's GPU stack."""
    name = pod.spec.scheduler_name if pod is not None else ""
    return bool(name) and name not in _STACK_SCHEDULERS


def refused_at_admission(reason: str) -> bool:
    """An event reason of the kubelet's refusal at admission: its device or topology
    manager (UnexpectedAdmissionError, TopologyAffinityError) or its predicate count
    (OutOf<resource>)."""
    return reason in ("UnexpectedAdmissionError", "TopologyAffinityError") or reason.startswith("OutOf")


def asks_none_of(pod: Pod | None, line: str) -> bool:
    """Whether the refusal names an extended resource that the pod asks for only with a
    quantity of 0 (``nvidia.com/gpu: "0"``): the kubelet's device manager ran an allocation
    for a request of nothing (kubernetes/kubernetes#128854), which no plugin could have
    served; the refusal is the kubelet's own, whatever the plugin's devices look like."""
    if pod is None:
        return False
    most: dict[str, int] = {}
    for c in (*pod.spec.init_containers, *pod.spec.containers):
        for name, value in (*c.resources.limits.items(), *c.resources.requests.items()):
            most[name] = max(most.get(name, 0), quantity(value))
    named = {m["resource"] for m in _RESOURCE.finditer(line)}
    return any(most.get(r) == 0 for r in named)


#: GKE's device plugin refusing a shared (time-sharing or MPS) request for more virtual GPUs than
#: its sharing mode lets one container hold: GoogleCloudPlatform/container-engine-accelerators,
#: pkg/gpu/nvidia/gpusharing ValidateRequest, raised only where the request holds more than one
#: virtual device ("invalid request for sharing GPU (time-sharing), at most 1 nvidia.com/gpu can
#: be requested on GPU nodes"; "(MPS) ... on multi-GPU nodes"; older releases without the mode).
#: GKE's "About GPU sharing strategies" page documents the limit as the design of both modes.
_SHARING_LIMIT = lazy_compile(r"\binvalid request for sharing GPU(?: \([\w -]+\))?, at most (?P<most>\d+) "
                              r"(?P<resource>[a-z0-9.-]+/[\w.-]+) can be requested\b")


def over_sharing_limit(pod: Pod | None, line: str) -> bool:
    """Whether the refusal is GKE's sharing limit turning down a request larger than it: the
    pod's own request, not a failure of the node's stack (the fix is one shared GPU per
    container). A pod whose containers each ask no more than the limit does not fit the words,
    and the refusal is judged as any other; a pod not seen leaves the words to say it, as the
    plugin raises them only for a request of several devices."""
    found = _SHARING_LIMIT.search(line)
    if found is None:
        return False
    if pod is None:
        return True
    most = int(found["most"])
    return any(quantity(value) > most for c in (*pod.spec.init_containers, *pod.spec.containers)
               for name, value in (*c.resources.limits.items(), *c.resources.requests.items())
               if name == found["resource"])


def kubelet_count(line: str, pod: Pod | None) -> str | None:
    """The kubelet, where a workload's line is its own count of free devices refusing the pod
    whatever reason the pod shows (the legacy GPU manager's refusal surfaces as a failed
    container start, not at admission); None for a pod a scheduler outside the stack placed
    (its contention, ``placed_outside``) or a line that is no such count."""
    if _COUNTED_OUT.search(line) is None or placed_outside(pod):
        return None
    return KUBELET


def admission_names(catalog: Catalog, line: str, named: str | None, pod: Pod | None,
                    serving: NodeServing | None) -> str | None:
    """The component a refusal at admission names; None where it names no failure (the
    kubelet's count of devices all held) or no layer the node's facts can tell."""
    if asks_none_of(pod, line):
        return KUBELET
    if over_sharing_limit(pod, line) or (_COUNTED_OUT.search(line) and placed_outside(pod)):
        # the pod asked more shared GPUs than the sharing mode serves one container, or a
        # scheduler out of the stack placed it on devices all held: its contention
        return None
    short = _SHORT_OF.search(line)
    if short is not None:
        if int(short["capacity"]) > 0 or serving is None:
            return None  # every device held when it was admitted: contention
        now = quantity(serving.allocatable.get(short["resource"], "0"))
        return KUBELET if now > 0 else None  # a plugin that advertises none is judged by its checks
    if serving is not None and _PLUGIN_ANSWER.search(line):
        named_resource = _RESOURCE.search(line)
        resources = (named_resource["resource"],) if named_resource else requested(pod)
        plugin = next((p for r in resources if (p := serving.plugin_for(catalog, r))), None)
        if plugin is not None:
            return owned(catalog, plugin, line)
    return named or KUBELET



def plugin_answer(line: str) -> bool:
    """Whether a refusal at admission relays a device plugin's own answer to Allocate."""
    return _PLUGIN_ANSWER.search(line) is not None


def bypassed(plugin: str, pod: Pod) -> tuple[str, str] | None:
    """The scheduler extender (component, scheduler name) a plugin's refusal of ``pod``
    names: the plugin reads its decisions from that extender, and another scheduler placed
    the pod (the extender's webhook did not route it); None otherwise or where unknown."""
    decided = DECIDED_BY.get(plugin)
    placed_by = pod.spec.scheduler_name
    if decided is None or not placed_by or placed_by == decided[1]:
        return None
    return decided
