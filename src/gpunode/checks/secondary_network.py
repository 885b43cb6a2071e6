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
says the same of the node's secondary networks and is read after the GPU workloads. Words that
name a lower layer (the SR-IOV CNI's VF state, ``rdma-links``) stay that layer's, read on the node.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpunode.bundle.kube import Event
from gpunode.checks.cluster import cluster_check
from gpunode.checks.decisive import line_finding
from gpunode.decisive import decisive_line
from gpunode.facts import ClusterFacts
from gpunode.kb import load_kb
from gpunode.model import Finding, Status

_COMPONENT = "network-operator"
_SANDBOX = "FailedCreatePodSandBox"
#: A delegate plugin refusing the attachment's own configuration (the CNI plugins' loadConf
#: failures, e.g. the SR-IOV CNI's "failed to load netconf: LoadConf(): VF pci addr is
#: required" when the network definition names no device resource,
#: k8snetworkplumbingwg/sriov-network-device-plugin#258): the network's author's, not the
#: operator's; a lower layer it names is read on the node.
_NETCONF = "failed to load netconf"


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
        found = decisive_line(event.message.splitlines(), kb.class_of)
        if found is None:
            continue
        obj = event.involved_object
        where = f"pod {obj.namespace}/{obj.name} event {event.reason}"
        verb = f"fails the sandbox network of pod {obj.namespace}/{obj.name} on {node}"
        yield line_finding(kb, _COMPONENT, Status.FAILED, found, where, verb=verb,
                           namespace=obj.namespace, pod=obj.name)
        return
