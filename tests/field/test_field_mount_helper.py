"""The kubelet's own mount of a pod's volume (in-tree nfs, cifs) failing with util-linux's hint
that the type's /sbin/mount.<type> helper is missing: the host under the kubelet lacks the
helper package (nfs-common, nfs-utils, cifs-utils), kubelet/error_not_found, whatever the file
system. A CSI volume's mount (an rpc error from the node plugin) and a mount refused for
another reason (the server's access denial) are not read.

Sources: util-linux libmount/src/context_mount.c (mnt_context_get_mount_excode: "bad option;
for several filesystems (e.g. nfs, cifs) you might need a /sbin/mount.<type> helper program."
for a non-block source), kubernetes-retired/kubeadm-dind-cluster#242 (/sbin/mount.nfs missing
in the kubelet's container), luxas/kubernetes-on-arm#113, nacos-group/nacos-k8s#30,
kubernetes/website#19774, coreos/coreos-kubernetes#372."""

from __future__ import annotations

from typing import Any

import pytest
from case import synthetic_case
from scoreboard import top_pair

from gpunode.checks.mount_helper import lacks_mount_helper

_ARGS = ("MountVolume.SetUp failed for volume \"documents\" : mount failed: exit status 32 "
         "Mounting command: systemd-run Mounting arguments: --description=Kubernetes transient mount for "
         "/var/lib/kubelet/pods/804e9670/volumes/kubernetes.io~nfs/documents --scope -- mount -t nfs "
         "fileserver:/documents /var/lib/kubelet/pods/804e9670/volumes/kubernetes.io~nfs/documents Output: ")

MISSING = {
    # libmount's sentence (util-linux 2.23 and later); kubernetes/website#19774's report
    "libmount": _ARGS + "mount: /var/lib/kubelet/pods/804e9670/volumes/kubernetes.io~nfs/documents: "
                "bad option; for several filesystems (e.g. nfs, cifs) you might need a /sbin/mount.<type> "
                "helper program.",
    # the older mount(8)'s block; kubernetes-retired/kubeadm-dind-cluster#242, nacos-group/nacos-k8s#30
    "mount-8": _ARGS + "mount: wrong fs type, bad option, bad superblock on fileserver:/documents, missing "
               "codepage or helper program, or other error (for several filesystems (e.g. nfs, cifs) you "
               "might need a /sbin/mount.<type> helper program) In some cases useful info is found in syslog",
}

OTHER = {
    # a CSI node plugin's mount (its own container's helper), relayed over gRPC
    "csi": "MountVolume.SetUp failed for volume \"pvc-1\" : rpc error: code = Internal desc = mount failed: "
           "exit status 32 Output: mount: /var/lib/kubelet/pods/1/volumes/kubernetes.io~csi/pvc-1/mount: "
           "bad option; for several filesystems (e.g. nfs, cifs) you might need a /sbin/mount.<type> "
           "helper program.",
    # the helper ran and the server refused: not a missing package
    "denied": _ARGS + "mount.nfs: access denied by server while mounting fileserver:/documents",
}


def _pod(message: str) -> list[dict[str, Any]]:
    return [
        {"kind": "workload", "name": "nfs-web", "namespace": "default", "state": "ContainerCreating"},
        {"kind": "event", "object": {"kind": "Pod", "name": "nfs-web", "namespace": "default"},
         "type": "Warning", "reason": "FailedMount", "message": message},
    ]


@pytest.mark.parametrize("name", sorted(MISSING))
def test_a_missing_helper_in_a_pod_s_event_is_the_kubelet_host_s(name: str) -> None:
    case = synthetic_case(f"mount-helper-{name}", _pod(MISSING[name]), healthy=False)
    assert top_pair(case) == ("kubelet", "error_not_found")


def test_the_kubelet_s_journal_says_it_across_lines() -> None:
    journal = ("E0809 20:45:58.053442 6432 nestedpendingoperations.go:233] Operation for x failed. Error: "
               "MountVolume.SetUp failed for volume x with: mount failed: exit status 32\n"
               "Output: mount: wrong fs type, bad option, bad superblock on fileserver:/documents,\n"
               "       missing codepage or helper program, or other error\n"
               "       (for several filesystems (e.g. nfs, cifs) you might\n"
               "       need a /sbin/mount.<type> helper program)\n")
    case = synthetic_case("mount-helper-journal", [
        {"kind": "node-cmd", "name": "journal-kubelet.txt", "text": journal}], healthy=False)
    assert top_pair(case) == ("kubelet", "error_not_found")


@pytest.mark.parametrize("name", sorted(OTHER))
def test_other_mount_failures_are_not_a_missing_helper(name: str) -> None:
    assert not lacks_mount_helper(OTHER[name])
    found = top_pair(synthetic_case(f"mount-other-{name}", _pod(OTHER[name]), healthy=False))
    assert found != ("kubelet", "error_not_found")
