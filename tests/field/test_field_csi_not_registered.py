"""The kubelet's CSI volume plugin refusing a volume of a driver that never registered on the
node ('driver name <name> not found in the list of registered CSI drivers', pkg/volume/csi, in
the pod's FailedMount event): the kubelet's own words name the CSI node plugin of that driver
(csi-node ``csi_not_registered``), whatever pod the event is about.

Sources: ceph/ceph-csi#710 (the older form, without 'kubernetes.io/csi: attacher...'),
cubefs/cubefs-csi#51, rook/rook#8791 (a kubelet root moved). Look-alike: the kubelet's own
time-out on the same pod ('Unable to attach or mount volumes: ... timed out waiting for the
condition', democratic-csi/democratic-csi#211) names no layer and accuses no CSI plugin."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

#: ceph/ceph-csi#710's FailedMount event.
CEPH_710 = ('MountVolume.MountDevice failed for volume "pvc-5d317451-01f2-11ea-b95f-eeeeeeeeeeee" : '
            "driver name rbd.csi.ceph.com not found in the list of registered CSI drivers")
#: cubefs/cubefs-csi#51's FailedMount event.
CUBEFS_51 = ('MountVolume.MountDevice failed for volume "pvc-bc87ba3e-7321-492a-a812-64ef33239fcb" : '
             "kubernetes.io/csi: attacher.MountDevice failed to create newCsiDriverClient: driver name "
             "csi.lab.com not found in the list of registered CSI drivers")
#: rook/rook#8791's title.
ROOK_8791 = ("kubernetes.io/csi: attacher.MountDevice failed to create newCsiDriverClient: driver name "
             "rook-ceph.rbd.csi.ceph.com not found in the list of registered CSI drivers")
#: democratic-csi/democratic-csi#211's second FailedMount event.
TIMED_OUT = ("Unable to attach or mount volumes: unmounted volumes=[config transcode], unattached "
             "volumes=[kube-api-access-2ppjv data config transcode shared]: "
             "timed out waiting for the condition")


def _mount_failed(message: str) -> list[dict[str, Any]]:
    return [{"kind": "workload", "name": "app-0", "namespace": "default", "state": "ContainerCreating",
             "resources": {"limits": {"nvidia.com/gpu": "1"}}},
            {"kind": "event", "object": {"kind": "Pod", "name": "app-0", "namespace": "default"},
             "type": "Warning", "reason": "FailedMount", "message": message + "\n"}]


def test_a_driver_the_kubelet_has_not_registered_is_the_csi_node_plugin_s() -> None:
    for i, line in enumerate((CEPH_710, CUBEFS_51, ROOK_8791)):
        case = synthetic_case(f"x-csi-unregistered-{i}", _mount_failed(line), healthy=False)
        assert top_pair(case) == ("csi-node", "csi_not_registered"), line


def test_a_mount_time_out_accuses_no_csi_plugin() -> None:
    case = synthetic_case("x-csi-timed-out", _mount_failed(TIMED_OUT), healthy=False)
    pair = top_pair(case)
    assert pair is None or pair[0] != "csi-node"
