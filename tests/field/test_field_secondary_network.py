"""A GPU workload's sandbox refused by the secondary networks' CNI chain in Multus's own words
(its cmdErr "Multus: [ns/pod/uid]: ...", its cmdPluginErr "[ns/pod/uid:net]: error adding
container to network \\"net\\": ..." for a delegate attachment or its IPAM): the catalog's
network-operator, which deploys Multus for the secondary networks, judged once for the
cluster, the class of the line its cause. A delegate whose words name a lower layer (the
SR-IOV CNI's VF state) stays that layer's; a cluster-network delegate that names its own
plugin type (calico) and a sandbox refused by the runtime alone name no component here.

Sources: k8snetworkplumbingwg/multus-cni pkg/multus/multus.go (cmdErr, cmdPluginErr),
harvester/harvester#6256 (a storage network's IPAM refusing, "[ns/pod/uid:net]: error adding
container to network"), longhorn/longhorn#11222 (a delegate's plugin not found),
k8snetworkplumbingwg/multus-cni#641 ("Multus: [ns/pod]: error loading k8s delegates")."""

from __future__ import annotations

from typing import Any

import pytest
from case import synthetic_case
from scoreboard import top_pair

from gpunode.catalog import load_catalog

_HEAD = ('Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox '
         '"0411bdb1": plugin type="multus" name="multus-cni-network" failed (add): ')
_POD = "[default/train-0/0ea09160-a256-42db-aca1-1e6e211f5529"

NAMED: dict[str, tuple[str, str | None]] = {
    "ipam": (_HEAD + _POD + ':rdma-net]: error adding container to network "rdma-net": '
             'error at storage engine: Could not allocate IP in range: ip: 192.168.10.1 / - '
             '192.168.10.254 / range: 192.168.10.0/24',
             "error_resource_exhausted"),
    # host-local's allocator with every address of its range set taken
    "host-local": (_HEAD + _POD + ':rdma-net]: error adding container to network "rdma-net": '
                   'failed to allocate for range 0: no IP addresses available in range set: '
                   '192.168.10.1-192.168.10.30', "error_resource_exhausted"),
    # Multus before 3.x, a delegate's plugin binary missing from the node (multus-cni#386)
    "old-delegate": ('Failed create pod sandbox: rpc error: code = Unknown desc = NetworkPlugin cni '
                     'failed to set up pod "train-0_default" network: Multus: Err adding pod to network '
                     '"ib-sriov-net": Multus: error in invoke Delegate add - "ib-sriov": failed to find '
                     'plugin "ib-sriov" in path [/opt/cni/bin]', "error_not_found"),
    # libcni not finding Multus itself where the runtime looks (multus-cni#621)
    "multus-binary": ('Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup '
                      'network for sandbox "0411bdb1": failed to find plugin "multus-shim" in path '
                      '[/opt/cni/bin]',
                      "error_not_found"),
    "own-config": (_HEAD + "Multus: [default/train-0/0ea09160]: error loading k8s delegates k8s args: "
                   "TryLoadPodDelegates: error in getting k8s network for pod: GetNetworkDelegates: failed "
                   "getting the delegate: getKubernetesDelegate: cannot find a network-attachment-definition "
                   "(rdma-net) in namespace (default): network-attachment-definitions.k8s.cni.cncf.io "
                   '"rdma-net" not found', "error_not_found"),
}

NOT_NAMED: dict[str, tuple[str, str | None]] = {
    "calico": _HEAD + _POD + ':k8s-pod-network]: error adding container to network "k8s-pod-network": '
              'plugin type="calico" failed (add): stat /var/lib/calico/nodename: no such file or directory',
    # the cluster network's own plugin, as the older Multus invoked it, and libcni not finding it
    "old-flannel": ('Multus: Err in tearing down failed plugins: Multus: error in invoke Delegate add - '
                    '"flannel": failed to allocate for range 0: no IP addresses available in range set: '
                    "10.244.2.1-10.244.2.254"),
    "calico-binary": 'failed to setup network for sandbox "0411bdb1": failed to find plugin "calico" in path '
                     "[/opt/cni/bin]",
    "runtime": "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to create containerd "
               'task: OCI runtime create failed: runc create failed: unable to start container process',
}


def _sandbox(message: str) -> list[dict[str, Any]]:
    return [
        {"kind": "workload", "name": "train-0", "namespace": "default", "state": "ContainerCreating"},
        {"kind": "event", "object": {"kind": "Pod", "name": "train-0", "namespace": "default"},
         "type": "Warning", "reason": "FailedCreatePodSandBox", "message": message},
    ]


@pytest.mark.parametrize("name", sorted(NAMED))
def test_multus_s_words_name_the_network_operator(name: str) -> None:
    message, cause = NAMED[name]
    found = top_pair(synthetic_case(f"multus-{name}", _sandbox(message), healthy=False))
    assert found is not None and found[0] == "network-operator"
    assert cause is None or found[1] == cause


@pytest.mark.parametrize("name", sorted(NOT_NAMED))
def test_other_sandbox_errors_do_not(name: str) -> None:
    assert load_catalog().named_in(NOT_NAMED[name]) != "network-operator"


def test_a_vf_state_stays_the_link_s() -> None:
    message = (_HEAD + _POD + ':ibp192s0]: error adding container to network "ibp192s0": infiniBand SRI-OV '
               'CNI failed to configure VF "VF ibp192s0v10 GUID is not valid"')
    assert load_catalog().named_in(message) == "rdma-links"


def _other_pod(message: str) -> list[dict[str, Any]]:
    """A pod asking no GPU (a storage engine's) on the GPU node, its sandbox refused."""
    return [
        {"kind": "workload", "name": "replica-0", "namespace": "storage", "container": "engine",
         "resources": {"limits": {}}, "state": "ContainerCreating"},
        {"kind": "event", "object": {"kind": "Pod", "name": "replica-0", "namespace": "storage"},
         "type": "Warning", "reason": "FailedCreatePodSandBox", "message": message},
    ]


def test_another_pod_on_the_gpu_node_refused_by_the_same_networks() -> None:
    """The secondary network's pool is the GPU pods' too: any pod the GPU node's kubelet could
    not attach to it says so (harvester/docs storagenetwork.md, a Longhorn pod)."""
    found = top_pair(synthetic_case("multus-other-pod", _other_pod(NAMED["ipam"][0]), healthy=False))
    assert found == ("network-operator", "error_resource_exhausted")


def test_another_pod_refused_by_the_cluster_network_is_not_the_operator_s() -> None:
    found = top_pair(synthetic_case("calico-other-pod", _other_pod(NOT_NAMED["calico"])))
    assert found is None or found[0] != "network-operator"
