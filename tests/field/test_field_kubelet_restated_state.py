"""The kubelet's journal restating a crash-looping pod's back-off is that pod's state, not a
failure of the kubelet: a silent operand crash-looping stays the root cause, the kubelet's
echo of it explains nothing. Lines from public reports; an error of the kubelet's own
beside it is still read."""

from __future__ import annotations

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

_POD = "nvidia-driver-daemonset-6xzh7_gpu-operator(f8ae2197-3cb7-47ce-9b49-df16b1f3f3ab)"

#: The kubelet's back-off lines, each in the form of a public report.
RESTATED = [
    # kubernetes/kubernetes#54760 (klog, kubelet 1.8)
    'May 24 20:44:02 node kubelet[5585]: E0524 20:44:02.675035    5585 pod_workers.go:182] Error syncing '
    f'pod f8ae2197 ("{_POD}"), skipping: failed to "StartContainer" for "nvidia-driver-ctr" with '
    'CrashLoopBackOff: '
    f'"Back-off 5m0s restarting failed container=nvidia-driver-ctr pod={_POD}"',
    # kubernetes/minikube#11105 (lower-case back-off)
    'Apr 15 17:20:59 node kubelet[46838]: E0415 17:20:59.573180   46838 pod_workers.go:191] '
    'Error syncing '
    f'pod f8ae2197 ("{_POD}"), skipping: failed to "StartContainer" for "nvidia-driver-ctr" with '
    'CrashLoopBackOff: '
    f'"back-off 40s restarting failed container=nvidia-driver-ctr pod={_POD}"',
    # loft-sh/vcluster#162 (structured logging)
    'E1023 18:56:20.145522   31070 pod_workers.go:765] "Error syncing pod, skipping" err="failed to '
    '\\"StartContainer\\" for \\"nvidia-driver-ctr\\" with CrashLoopBackOff: \\"back-off 5m0s '
    'restarting failed '
    f'container=nvidia-driver-ctr pod={_POD}\\""',
]


def _silent_crash_loop(journal: str) -> Case:
    """The driver container crash-looping with no log, the kubelet's journal as given."""
    return synthetic_case("x-restated", [
        {"kind": "pod-state", "component": "driver", "state": "CrashLoopBackOff", "restarts": 822},
        {"kind": "node-cmd", "name": "journal-kubelet.txt", "text": journal + "\n"},
    ], healthy=False)


@pytest.mark.parametrize("line", RESTATED)
def test_the_kubelets_echo_of_a_back_off_leaves_the_pod_the_root(line: str) -> None:
    assert top_pair(_silent_crash_loop(line)) == ("driver", "crash_loop")


def test_an_error_of_the_kubelets_own_is_still_read() -> None:
    """A kubelet error beside the echo still puts the kubelet under the silent crash loop."""
    own = ('May 24 20:44:01 node kubelet[5585]: E0524 20:44:01.000000    5585 kubelet.go:2263] '
           '"Failed to get container runtime status" err="rpc error: code = Unavailable"')
    pair = top_pair(_silent_crash_loop(own + "\n" + RESTATED[0]))
    assert pair is not None and pair[0] == "kubelet"
