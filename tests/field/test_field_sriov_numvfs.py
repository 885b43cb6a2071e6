"""An SR-IOV device plugin that creates a PF's VFs itself (the Mellanox RDMA SR-IOV plugin's
sriov mode) and whose write of the VF count to sysfs the PF refuses for now (busy, no room)
leaves the link without VFs: the node's RDMA links, not the plugin, whichever runtime class
the plugin's pod asks for. A driver that takes no VF count through sysfs at all (ConnectX-3's
mlx4: "Function not implemented") is a NIC the plugin does not support, not read here."""

from __future__ import annotations

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

#: The plugin's start as Mellanox/k8s-rdma-sriov-dev-plugin#12 shows it, with the errno given.
_PLUGIN_LOG = """2018/09/18 03:21:57 sriov device mode
Configuring SRIOV on ndev= ens5f0 6
max_vfs =  8
cur_vfs =  0
Fail to enable sriov for netdev = ens5f0
Fail to configure sriov; error =  write /sys/class/net/ens5f0/device/sriov_numvfs: {errno}
2018/09/18 03:21:57 Registered device plugin with Kubelet
exposing devices:  []
"""


def _plugin(component: str, errno: str) -> Case:
    return synthetic_case("x-sriov-numvfs", [
        {"kind": "log", "component": component, "text": _PLUGIN_LOG.format(errno=errno)},
        {"kind": "pod-state", "component": component, "state": "Running"},
    ])


@pytest.mark.parametrize("component", ["sriov-device-plugin", "rdma-device-plugin"])
@pytest.mark.parametrize("errno", ["device or resource busy", "Cannot allocate memory"])
def test_a_refused_vf_count_is_the_links_missing_vfs(component: str, errno: str) -> None:
    assert top_pair(_plugin(component, errno)) == ("rdma-links", "sriov_vfs_missing")


def test_a_driver_without_sysfs_sriov_is_not_missing_vfs() -> None:
    pair = top_pair(_plugin("rdma-device-plugin", "function not implemented"))
    assert pair is None or pair[0] != "rdma-links"


def test_the_vf_count_read_back_is_no_failure() -> None:
    # grep -H's listing of the same file (the cause's own next step) names no errno
    case = synthetic_case("x-sriov-numvfs-ok", [
        {"kind": "log", "component": "sriov-device-plugin",
         "text": "/sys/class/net/ens5f0/device/sriov_numvfs:8\nexposing devices:  [mlx5_2 mlx5_3]\n"},
        {"kind": "pod-state", "component": "sriov-device-plugin", "state": "Running"},
    ])
    assert top_pair(case) is None
