"""The node-driver-registrar's own health check (``--mode=kubelet-registration-probe``, run
as its container's liveness probe) failing with 'Kubelet plugin registration hasn't succeeded
yet, file=<plugin dir>/registration doesn't exist': the kubelet never called the registrar
back, so the CSI driver is not registered on the node (csi-node ``csi_registration_failed``);
the restarts the failed probe causes are its effect, not the reading.

Sources: kubernetes-csi/csi-driver-smb#434 (TKGI), democratic-csi/democratic-csi#348 (NixOS),
openebs/mayastor#1507 (k0s). Look-alike: another liveness probe failure of a registrar (an
HTTP probe's status code) keeps its own reading."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

#: kubernetes-csi/csi-driver-smb#434's event (the klog trace after it cut).
SMB_434 = ("Liveness probe failed: F0323 08:32:37.215762 38 main.go:157] Kubelet plugin registration "
           "hasn't succeeded yet, file=/var/lib/kubelet/plugins/smb.csi.k8s.io/registration doesn't exist.")
#: democratic-csi/democratic-csi#348's event.
DEMOCRATIC_348 = ("Liveness probe failed: F1126 19:53:16.663915      38 main.go:160] Kubelet plugin "
                  "registration hasn't succeeded yet, file=/var/lib/kubelet/plugins/org.democratic-csi.nfs/"
                  "registration doesn't exist.")
#: openebs/mayastor#1507's event.
MAYASTOR_1507 = ("Liveness probe failed: F0919 11:05:57.460254      15 main.go:160] Kubelet plugin "
                 "registration hasn't succeeded yet, file=/var/lib/kubelet/plugins/io.openebs.mayastor/"
                 "registration doesn't exist.")
#: A registrar's probe failing otherwise: not read as a registration.
HTTP_PROBE = "Liveness probe failed: HTTP probe failed with statuscode: 500"


def _registrar(message: str) -> list[dict[str, Any]]:
    return [{"kind": "event", "component": "csi-node", "type": "Warning", "reason": "Unhealthy",
             "message": message + "\n"},
            {"kind": "pod-state", "component": "csi-node", "container": "node-driver-registrar",
             "state": "CrashLoopBackOff"}]


def test_the_registrar_probe_says_the_kubelet_never_registered_it() -> None:
    for i, line in enumerate((SMB_434, DEMOCRATIC_348, MAYASTOR_1507)):
        case = synthetic_case(f"x-csi-probe-{i}", _registrar(line), healthy=False)
        assert top_pair(case) == ("csi-node", "csi_registration_failed"), line


def test_another_probe_failure_is_not_a_registration() -> None:
    case = synthetic_case("x-csi-probe-http", _registrar(HTTP_PROBE), healthy=False)
    pair = top_pair(case)
    assert pair is not None and pair[0] == "csi-node" and pair[1] != "csi_registration_failed"
