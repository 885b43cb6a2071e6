"""A pod's sandbox network refused in the words of the secondary-network stack.

The runtime's FailedCreatePodSandBox event relays the CNI chain's error. On GPU nodes the
chain's meta-plugin is Multus, which the Network Operator deploys (NicClusterPolicy
secondaryNetwork) to attach RDMA, SR-IOV and IPoIB networks: its own words ("Multus:
[ns/pod/uid]: ..." for its configuration, "[ns/pod/uid:net]: error adding container to network
\"net\": ..." for a delegate attachment's plugin or IPAM) name the catalog's
``network-operator`` (its ``named_by``; k8snetworkplumbingwg/multus-cni pkg/multus/multus.go
cmdErr and cmdPluginErr; harvester/harvester#6256, longhorn/longhorn#11222,
k8snetworkplumbingwg/multus-cni#641). The operator is a cluster component, judged once for the cluster, so
the node pass has no place for it: the workloads' events are read here, over the fleet, and the
line's class is the cause. A pod asking no GPU that a GPU node's kubelet could not attach to the
same networks (a storage engine's pod on a whereabouts-managed storage network, harvester/docs
docs/advanced/storagenetwork.md: "Could not allocate IP in range" once the range is used up)
says the same of the node's secondary networks and is read after the GPU workloads. A delegate
refusing the attachment's own configuration (``_NETCONF``), or the host-device CNI given no
device for a pod that requests no network device resource (``_NO_DEVICE``), is the network's or
the pod's author's, not the operator's. Words that
name a lower layer (the SR-IOV CNI's VF state, ``rdma-links``) stay that layer's, read on the node.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpunode.bundle.kube import Event
from gpunode.checks.cluster import cluster_check
from gpunode.checks.decisive import line_finding
from gpunode.decisive import decisive_line
from gpunode.facts import ClusterFacts, extended_requests
from gpunode.kb import load_kb
from gpunode.model import Finding, Status
from gpunode.relazy import lazy_compile

_COMPONENT = "network-operator"
_SANDBOX = "FailedCreatePodSandBox"
#: A delegate plugin refusing the attachment's own configuration (the CNI plugins' loadConf
#: failures, e.g. the SR-IOV CNI's "failed to load netconf: LoadConf(): VF pci addr is
#: required" when the network definition names no device resource,
#: k8snetworkplumbingwg/sriov-network-device-plugin#258): the network's author's, not the
#: operator's; a lower layer it names is read on the node.
_NETCONF = "failed to load netconf"
#: The host-device CNI's refusal of an attachment that names no device to move (its loadConf:
#: none of "device", "hwaddr", "kernelpath" or "pciBusID" set, containernetworking/plugins
#: plugins/main/host-device; its README lists the four properties). Where the device comes from
#: a device plugin (the Network Operator's HostDeviceNetwork, an SR-IOV resource), Multus passes
#: the PCI address of the device allocated to the pod as the attachment's deviceID; a pod that
#: requests none of those resources gets none, so the refusal is its own spec's (a network
#: annotation left on a pod without the resource: Mellanox/network-operator#1674).
_NO_DEVICE = lazy_compile(r'\bspecify either "device", "hwaddr", "kernelpath"(?: or|,) "pciBusID"')
#: Extended resources that are a GPU, not a network device (the GPU device plugins' names).
_GPU_RESOURCE = lazy_compile(r"^(?:nvidia\.com/(?:gpu|mig-|shared-gpu)|amd\.com/gpu|gpu\.intel\.com/)")


def _requests_no_device(facts: ClusterFacts, namespace: str, name: str) -> bool:
    """The pod is in the bundle and none of its containers asks for an extended resource other
    than a GPU (a device plugin's network device: an RDMA, SR-IOV or host-device resource).
    False where the pod is not found (unknown)."""
    if (namespace, name) in facts.plain_pods:
        return True
    for pod in (*facts.workload_pods, *facts.fabric_pods, *facts.network_pods):
        if pod.metadata.namespace != namespace or pod.metadata.name != name:
            continue
        return all(_GPU_RESOURCE.match(key) for key in extended_requests(pod.spec.containers))
    return False


def _refusals(facts: ClusterFacts) -> Iterator[tuple[str, Event]]:
    """Each sandbox refusal to read, with its node: the troubled GPU workloads' first, then
    those the kubelet of a GPU node recorded for any other pod there (a storage or agent pod
    attached to the same secondary network: its IPAM pool or the node's CNI binaries are the
    GPU pods' too)."""
    seen: set[tuple[str, str]] = set()
    for node in sorted(facts.troubled_workloads_by_node):
        for pod in facts.troubled_workloads_by_node[node]:
            meta = pod.metadata
            seen.add((meta.namespace, meta.name))
            for event in facts.events_for("Pod", meta.namespace, meta.name):
                yield node, event
    refusals = facts.sandbox_refusals_by_host
    for node in sorted(refusals):
        if not facts.is_gpu_node(node):
            continue
        for event in refusals[node]:
            obj = event.involved_object
            if (obj.namespace, obj.name) not in seen:
                yield node, event


@cluster_check(_COMPONENT)
def secondary_network_sandboxes(facts: ClusterFacts) -> Iterator[Finding]:
    """The first pod on a GPU node whose sandbox the secondary networks' CNI chain refused in
    words naming the Network Operator's stack (module docstring), as its decisive line."""
    kb = load_kb()
    for node, event in _refusals(facts):
        if (event.reason != _SANDBOX or facts.catalog.named_in(event.message) != _COMPONENT
                or _NETCONF in event.message):
            continue
        obj = event.involved_object
        if (_NO_DEVICE.search(event.message) is not None
                and _requests_no_device(facts, obj.namespace, obj.name)):
            continue
        found = decisive_line(event.message.splitlines(), kb.class_of)
        if found is None:
            continue
        obj = event.involved_object
        where = f"pod {obj.namespace}/{obj.name} event {event.reason}"
        verb = f"fails the sandbox network of pod {obj.namespace}/{obj.name} on {node}"
        yield line_finding(kb, _COMPONENT, Status.FAILED, found, where, verb=verb,
                           namespace=obj.namespace, pod=obj.name)
        return
