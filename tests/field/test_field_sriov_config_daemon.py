"""The SR-IOV Network Operator's config daemon (catalog ``sriov-config-daemon``,
gpunode.checks.sriov_config_daemon): the last error its running log holds after its last
successful sync, blamed on the layer the line names (the kernel's netlink refusing a PF's
link with "message too long"; the NIC's link or firmware refusing a VF admin MAC or a
firmware setting: rdma-links), else the daemon's own with the line's class; and the field
builder placing a pod named after a catalog DaemonSet, in a stack namespace, as that
component's pod.

Sources: k8snetworkplumbingwg/sriov-network-operator (bindata/manifests/daemon/daemonset.yaml:
the DaemonSet, its label and container; pkg/host/internal/sriov/sriov.go and
pkg/vendors/mellanox/mellanox.go: the daemon's error lines; pkg/daemon/status.go: the sync
status it sets), its issue #274 (the VF admin MAC refused on InfiniBand, klog) and PR #1025
(netlink "message too long" with many VFs, zap). Look-alikes: a datagram's "message too long"
with no link read, a VF admin MAC refused for another reason, an API conflict, info lines only,
errors a later successful sync healed, and a pod named like a component's in a user namespace."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

from gpunode.catalog import load_catalog
from gpunode.checks.sriov_config_daemon import last_failure

_POD = {"kind": "Pod", "name": "sriov-network-config-daemon-k2x7p", "namespace": "sriov-network-operator"}
_ZAP_LINK = ('ERROR\tbaremetal/baremetal.go:56\tDiscoverSriovDevices(): unable to get Link for device, '
             'skipping\t{"device": "0000:29:00.0", "error": "message too long"}')
_KLOG_MAC = ('E0331 10:49:18.593679  109057 utils.go:325] configSriovDevice(): fail to configure VF admin '
             'mac address for device 0000:0c:00.1 "operation not supported"')
_INFO = ('2025-06-02T10:00:01.000Z\tINFO\tdaemon/daemon.go:410\tnodeStateSyncHandler()\t'
         '{"generation": 3}')


def _daemon(case_id: str, text: str, pod: dict[str, str] | None = None) -> Any:
    evidence: list[dict[str, Any]] = [{"kind": "log", "object": pod or _POD, "text": text + "\n"}]
    if pod is None:
        evidence[0]["container"] = "sriov-network-config-daemon"
    return synthetic_case(case_id, evidence)


def test_the_catalog_names_the_layers_the_daemon_s_lines_name() -> None:
    catalog = load_catalog()
    assert catalog.named_in("DiscoverSriovDevices(): unable to get Link for device, skipping: "
                            "message too long") == "kernel"
    assert catalog.named_in("configSriovVFDevices(): unable to get PF link for device: "
                            "message too long") == "kernel"
    assert catalog.named_in(_KLOG_MAC) == "rdma-links"
    assert catalog.named_in("configSriovVFDevices(): fail to configure VF admin mac: "
                            "operation not supported") == "rdma-links"
    assert catalog.named_in("mellanox-plugin configFW(): failed: exit status 1") == "rdma-links"
    assert catalog.named_in("mellanox-plugin OnNodeStateChange(): Network card 0000:3b:00.0 does not "
                            "support link type change") == "rdma-links"


def test_look_alikes_name_no_layer() -> None:
    catalog = load_catalog()
    assert catalog.named_in("write udp 10.0.0.1:4789->10.0.0.2:4789: sendto: message too long") is None
    assert catalog.named_in("fail to configure VF admin mac: device or resource busy") is None
    assert catalog.named_in("mellanox-plugin configFW()") is None  # the step begun, at info level


def test_the_last_failure_after_the_last_successful_sync() -> None:
    assert last_failure([_INFO, _ZAP_LINK]) == (1, _ZAP_LINK)
    assert last_failure([_ZAP_LINK, _INFO]) == (0, _ZAP_LINK)
    healed = ("I0331 10:50:02.000000  109057 writer.go:107] setNodeStateStatus(): syncStatus: Succeeded, "
              "lastSyncError: ")
    assert last_failure([_KLOG_MAC, healed]) is None
    changed = '2025-06-02T10:00:09.000Z\tINFO\tstatus\tStatus changed from: InProgress to: Succeeded'
    assert last_failure([_ZAP_LINK, changed]) is None
    conflict = ('2025-06-02T10:00:05.000Z\tERROR\tupdateSyncState\tfailed to update node state status\t'
                '{"error": "Operation cannot be fulfilled: the object has been modified"}')
    assert last_failure([_INFO, conflict]) is None
    assert last_failure([_INFO, _INFO]) is None


def test_netlink_message_too_long_is_the_kernel_s() -> None:
    assert top_pair(_daemon("x-sriovcd-netlink", _ZAP_LINK)) == ("kernel", "error_unclassified")


def test_a_vf_admin_mac_the_link_refuses_is_the_rdma_links() -> None:
    assert top_pair(_daemon("x-sriovcd-mac", _KLOG_MAC)) == ("rdma-links", "error_unclassified")


def test_a_firmware_setting_mstconfig_could_not_make_is_the_rdma_links() -> None:
    line = ('2025-06-02T10:00:01.000Z\tERROR\tmellanox/mellanox.go:215\tmellanox-plugin configFW(): failed\t'
            '{"stderr": "-E- Failed to set configuration", "error": "exit status 3"}')
    pair = top_pair(_daemon("x-sriovcd-fw", line))
    assert pair is not None and pair[0] == "rdma-links"


def test_a_failure_naming_no_other_layer_is_the_daemon_s_own() -> None:
    line = ('2025-06-02T10:00:01.000Z\tERROR\tdaemon/daemon.go:768\tcannot configure sriov interfaces\t'
            '{"error": "cannot config SRIOV device: NumVfs (64) is larger than TotalVfs (16)"}')
    pair = top_pair(_daemon("x-sriovcd-own", line))
    assert pair is not None and pair[0] == "sriov-config-daemon"
    mac_busy = ('E0331 10:49:18.593679  109057 utils.go:325] configSriovDevice(): fail to configure VF admin '
                'mac address for device 0000:0c:00.1 "device or resource busy"')
    pair = top_pair(_daemon("x-sriovcd-mac-busy", mac_busy))
    assert pair is not None and pair[0] == "sriov-config-daemon"


def test_a_running_daemon_with_info_lines_or_a_healed_sync_is_healthy() -> None:
    assert top_pair(_daemon("x-sriovcd-info", f"{_INFO}\n{_INFO}")) is None
    healed = ('2025-06-02T10:00:09.000Z\tINFO\tupdateSyncState\tupdate nodeState status\t'
              '{"CurrentSyncStatus": "InProgress", "NewSyncStatus": "Succeeded"}')
    assert top_pair(_daemon("x-sriovcd-healed", f"{_ZAP_LINK}\n{healed}")) is None


def test_a_pod_named_like_the_daemon_in_a_user_namespace_stays_a_workload() -> None:
    """Placement needs a stack namespace: a user's pod of that name is a GPU workload, whose log
    of the same line accuses no layer by itself."""
    pod = {"kind": "Pod", "name": "sriov-network-config-daemon-test", "namespace": "default"}
    assert top_pair(_daemon("x-sriovcd-user-ns", _ZAP_LINK, pod)) != ("kernel", "error_unclassified")
