"""The SR-IOV Network Operator's verdict on a node (gpunode.checks.sriov_config_daemon): the
node's SriovNetworkNodeState saying ``syncStatus: Failed`` with the error of that sync in
``lastSyncError`` is read by the layer the error names, as the config daemon's failing log line
is: the VF count sysfs refused (``sriov_numvfs``: "cannot allocate memory", SR-IOV or VT-d off
in the node's BIOS) is the RDMA links' ``sriov_vfs_missing``; the kernel's netlink refusing a
PF's link is the kernel's; a VF admin MAC the link refuses is the RDMA links'; any other error
is the daemon's own, with its class, and a failed state with no error text is the daemon's,
no layer guessed.

Sources: k8snetworkplumbingwg/sriov-network-operator (api/v1/sriovnetworknodestate_types.go:
status.syncStatus and status.lastSyncError; pkg/daemon/status.go updateSyncState; pkg/daemon/
daemon.go: InProgress keeps the last error, a success clears it; cmd/sriov-network-config-daemon/
service.go: systemd mode's "<phase>: <error>"), and OpenShift's SR-IOV troubleshooting entry
(openshift/openshift-docs#32619: the sriov_numvfs "cannot allocate memory" lastSyncError).
Look-alikes: Succeeded with no error, InProgress keeping the last error, a failed state named
after another node, a cluster without the operator's CRD."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

from gpunode.bundle.kube import ObjectName, SriovNetworkNodeState, SriovNodeStateStatus
from gpunode.checks.sriov_config_daemon import failed_state

NODE = "gpu-wk-01"
_NUMVFS = "write /sys/bus/pci/devices/0000:3b:00.1/sriov_numvfs: cannot allocate memory"


def _state(status: dict[str, str], name: str = NODE) -> dict[str, Any]:
    return {"kind": "cluster-object", "resource": "sriovnetworknodestates", "object": {
        "apiVersion": "sriovnetwork.openshift.io/v1", "kind": "SriovNetworkNodeState",
        "metadata": {"name": name, "namespace": "sriov-network-operator"}, "status": status}}


def _case(case_id: str, *states: dict[str, Any]) -> Any:
    return synthetic_case(case_id, list(states), healthy=False)


def _failed(error: str) -> Any:
    return _case("x-sriovns", _state({"syncStatus": "Failed", "lastSyncError": error}))


def test_vfs_the_kernel_could_not_allocate_are_the_missing_vfs_of_the_rdma_links() -> None:
    assert top_pair(_failed(_NUMVFS)) == ("rdma-links", "sriov_vfs_missing")
    # systemd mode: the phase before the error
    assert top_pair(_failed(f"pre: {_NUMVFS}")) == ("rdma-links", "sriov_vfs_missing")
    busy = "write /sys/bus/pci/devices/0000:3b:00.0/sriov_numvfs: device or resource busy"
    assert top_pair(_failed(busy)) == ("rdma-links", "sriov_vfs_missing")


def test_a_driver_without_sysfs_sriov_is_not_missing_vfs() -> None:
    """The look-alike: a PF whose driver takes no VF count through sysfs at all (mlx4) is not
    VFs missing on a link; the daemon's own failure stays."""
    pair = top_pair(_failed("write /sys/class/net/eth2/device/sriov_numvfs: function not implemented"))
    assert pair is not None and pair[0] == "sriov-config-daemon"


def test_netlink_refusing_a_pf_link_is_the_kernel_s() -> None:
    error = "DiscoverSriovDevices(): unable to get Link for device, skipping: message too long"
    assert top_pair(_failed(error)) == ("kernel", "error_unclassified")


def test_a_vf_admin_mac_the_link_refuses_is_the_rdma_links() -> None:
    error = "configSriovVFDevices(): fail to configure VF admin mac: operation not supported"
    assert top_pair(_failed(error)) == ("rdma-links", "error_unclassified")


def test_an_error_naming_no_other_layer_is_the_daemon_s_own() -> None:
    pair = top_pair(_failed("cannot config SRIOV device: NumVfs (64) is larger than TotalVfs (16)"))
    assert pair is not None and pair[0] == "sriov-config-daemon"
    assert top_pair(_failed("unexpected error")) == ("sriov-config-daemon", "error_unclassified")


def test_a_failed_state_without_its_error_is_the_daemon_s_not_a_guessed_layer() -> None:
    case = _case("x-sriovns-bare", _state({"syncStatus": "Failed"}))
    assert top_pair(case) == ("sriov-config-daemon", "error_unclassified")
    case = _case("x-sriovns-blank", _state({"syncStatus": "Failed", "lastSyncError": "  "}))
    assert top_pair(case) == ("sriov-config-daemon", "error_unclassified")


def test_a_succeeded_or_in_progress_state_is_healthy() -> None:
    assert top_pair(_case("x-sriovns-ok", _state({"syncStatus": "Succeeded"}))) is None
    # InProgress keeps the last error until the sync ends (pkg/daemon/daemon.go)
    keeping = _state({"syncStatus": "InProgress", "lastSyncError": _NUMVFS})
    assert top_pair(_case("x-sriovns-progress", keeping)) is None


def test_a_failed_state_of_another_node_says_nothing_of_this_one() -> None:
    other = _state({"syncStatus": "Failed", "lastSyncError": _NUMVFS}, name="cpu-wk-09")
    assert top_pair(_case("x-sriovns-other", other)) is None


def test_no_state_at_all_is_healthy() -> None:
    assert top_pair(_case("x-sriovns-none")) is None


def test_the_failed_state_of_a_node_is_found_by_its_name() -> None:
    def state(name: str, status: str) -> SriovNetworkNodeState:
        return SriovNetworkNodeState(ObjectName(name, "ns"), SriovNodeStateStatus(status, _NUMVFS))

    states = (state("gpu-wk-02", "Failed"), state(NODE, "InProgress"), state(NODE, "Failed"))
    assert failed_state(states, NODE) is states[2]
    assert failed_state(states[:2], NODE) is None
    assert failed_state(None, NODE) is None
