"""The kubelet failing to reach a device plugin at the socket the plugin registered: a socket
named <domain>_<name>.sock is the endpoint of extended resource <domain>/<name>, so the
component that advertises it is unreachable (gpunode.checks.named._socket_resource). Real
lines from public reports; sockets that name no resource of ours, or the kubelet's own
socket, accuse nobody."""

from __future__ import annotations

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.checks.named import _socket_resource

#: Real kubelet lines and the resource their socket names.
REAL = {
    # https://github.com/k8snetworkplumbingwg/sriov-network-device-plugin/issues/223 (the older
    # plugin watcher, kubelet 1.17)
    'E0408 16:52:20.620285    1301 goroutinemap.go:150] Operation for "/var/lib/kubelet/plugins_registry/'
    'intel.com_mlnx_sriov_rdma.sock" failed. No retries permitted until 2020-04-08 16:54:22.620264385 +0000 '
    'UTC m=+740.343730693 (durationBeforeRetry 2m2s). Error: "RegisterPlugin error -- dial failed at socket '
    '/var/lib/kubelet/plugins_registry/intel.com_mlnx_sriov_rdma.sock, err: failed to dial socket '
    '/var/lib/kubelet/plugins_registry/intel.com_mlnx_sriov_rdma.sock, err: context deadline exceeded"':
        "intel.com/mlnx_sriov_rdma",
    # https://github.com/k8snetworkplumbingwg/sriov-network-device-plugin/issues/586
    '"Can\'t create new endpoint with socket path" err="failed to dial device plugin: context deadline '
    'exceeded" path="/var/lib/kubelet/plugins_registry/mellanox.com_mlnx_sriov_rdma.sock"':
        "mellanox.com/mlnx_sriov_rdma",
}

#: Sockets that name no <domain>/<name> resource
#: (https://github.com/kubevirt/kubevirt/issues/8482,
#: https://github.com/Mellanox/k8s-rdma-shared-dev-plugin/issues/98,
#: https://github.com/openshift/origin/issues/19599), and a line that reports no failure.
NO_RESOURCE = [
    'E0917 22:08:26.941467    1618 client.go:65] "Unable to connect to device plugin client with socket '
    'path" err="failed to dial device plugin: context deadline exceeded" '
    'path="/var/lib/kubelet/device-plugins/kubevirt-kvm.sock"',
    "hca_3.sock failed to be registered at Kubelet: RegisterPlugin error -- plugin registration failed "
    "with err: failed to dial device plugin with socketPath /var/lib/kubelet/plugins_registry/hca_3.sock: "
    "failed to dial device plugin: context deadline exceeded; restarting.",
    "E0502 18:22:09.472282   13539 endpoint.go:48] Can't create new endpoint with path /tmp/mock.sock err "
    "failed to dial device plugin: context deadline exceeded",
    "Registered endpoint /var/lib/kubelet/plugins_registry/intel.com_mlnx_sriov_rdma.sock",
]


@pytest.mark.parametrize("line", sorted(REAL))
def test_a_socket_names_its_resource(line: str) -> None:
    assert _socket_resource(line) == REAL[line]


@pytest.mark.parametrize("line", NO_RESOURCE)
def test_other_sockets_name_none(line: str) -> None:
    assert _socket_resource(line) is None


def _sriov_node(journal: str) -> Case:
    """A node running the SR-IOV device plugin, with the kubelet's journal."""
    return synthetic_case("x-plugin-socket", [
        {"kind": "pod-state", "component": "sriov-device-plugin", "state": "Running"},
        {"kind": "node-cmd", "name": "journal-kubelet.txt", "text": journal + "\n"},
    ])


@pytest.mark.parametrize("line", sorted(REAL))
def test_the_kubelet_not_reaching_the_sriov_socket_is_the_plugin_unreachable(line: str) -> None:
    assert top_pair(_sriov_node(line)) == ("sriov-device-plugin", "error_unreachable")


def test_a_socket_of_another_vendor_accuses_no_component() -> None:
    line = ('E0917 22:08:26.941467    1618 client.go:65] "Unable to connect to device plugin client '
            'with socket path" err="failed to dial device plugin: context deadline exceeded" '
            'path="/var/lib/kubelet/device-plugins/macvtap.network.kubevirt.io_bond0.sock"')
    assert top_pair(_sriov_node(line)) is None
