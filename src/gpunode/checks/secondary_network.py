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
line's class is the cause. Words that name a lower layer (the SR-IOV CNI's VF state,
``rdma-links``) stay that layer's, read on the node.
"""

from __future__ import annotations

from collections.abc import Iterator

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


@cluster_check(_COMPONENT)
def secondary_network_sandboxes(facts: ClusterFacts) -> Iterator[Finding]:
    """The first GPU workload whose sandbox the secondary networks' CNI chain refused in
    words naming the Network Operator's stack (module docstring), as its decisive line."""
    kb = load_kb()
    for node in sorted(facts.troubled_workloads_by_node):
        for pod in facts.troubled_workloads_by_node[node]:
            meta = pod.metadata
            for event in facts.events_for("Pod", meta.namespace, meta.name):
                if (event.reason != _SANDBOX or facts.catalog.named_in(event.message) != _COMPONENT
                        or _NETCONF in event.message):
                    continue
                found = decisive_line(event.message.splitlines(), kb.class_of)
                if found is None:
                    continue
                where = f"pod {meta.namespace}/{meta.name} event {event.reason}"
                verb = f"fails the sandbox network of pod {meta.namespace}/{meta.name} on {node}"
                yield line_finding(kb, _COMPONENT, Status.FAILED, found, where, verb=verb,
                                   namespace=meta.namespace, pod=meta.name)
                return
