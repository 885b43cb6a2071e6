"""The kubelet refusing a pod at admission for a feature its host lacks ("Cannot enforce
AppArmor: AppArmor is not enabled on the host"): the kubelet's host, error_not_found, whatever
the pod asks for, since every pod needing the feature meets the same refusal on that node. A
refusal for a resource or a placement names no missing host feature and moves nothing.

Sources: nebius/soperator#177 (a Job's pod Pending, reason AppArmor, on hosts without it),
VictoriaMetrics/operator#1120 (the operator's RuntimeDefault profile rejected by the kubelet's
AppArmor admission handler), cert-manager/cert-manager#5548 (CentOS 7 hosts)."""

from __future__ import annotations

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.checks.host_admission import host_feature_lacking

REFUSED = {
    # https://github.com/nebius/soperator/issues/177
    "soperator-177": "Cannot enforce AppArmor: AppArmor is not enabled on the host",
    # https://github.com/VictoriaMetrics/operator/issues/1120
    "vm-operator-1120": "Pod Cannot enforce AppArmor: AppArmor is not enabled on the host",
}

NOT_HOST = [
    "Node didn't have enough resource: cpu, requested: 4000, used: 0, capacity: 2",
    "Predicate NodeAffinity failed",
    "Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. Requested: 1, "
    "Available: 0, which is unexpected",
]


def _refused(name: str, message: str) -> Case:
    return synthetic_case(f"host-feature-{name}", [
        {"kind": "workload", "name": "populate-jail", "namespace": "default", "container": "main",
         "image": "busybox", "resources": {"limits": {}}, "state": "UnexpectedAdmissionError",
         "message": message},
    ], healthy=False)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_pod_refused_for_a_host_feature_is_the_kubelets(name: str) -> None:
    assert top_pair(_refused(name, REFUSED[name])) == ("kubelet", "error_not_found")


@pytest.mark.parametrize("message", NOT_HOST)
def test_other_admission_refusals_name_no_host_feature(message: str) -> None:
    assert not host_feature_lacking(message)


def test_a_non_gpu_pod_refused_for_cpu_stays_healthy() -> None:
    assert top_pair(_refused("cpu", NOT_HOST[0])) is None
