"""Tencent's gpu-manager refusing a pod at Allocate because the card it picks is not the one
gpu-admission predicated (data/job_errors/gpu_sharing.toml, gpu-manager-predicate-mismatch):
the device plugin's gpu_admission_failed, not the kubelet's own refusal. Look-alikes: the
kubelet's own count of devices and gpu-manager's healthy allocation lines stay unread.

Sources: tkestack/gpu-manager pkg/services/allocator/nvidia/allocator.go; tkestack/gpu-manager#18."""

from __future__ import annotations

import pytest
from case import synthetic_case
from scoreboard import top_pair

from gpunode.job_errors import job_error

READ = [
    "Nvidia node mismatch for pod example0(example0), pick up:/dev/nvidia1  predicate: /dev/nvidia0, "
    "which is unexpected.",
    "Update plugin resources failed due to rpc error: code = Unknown desc = Nvidia node mismatch for pod "
    "vcuda-0(vcuda), pick up:/dev/nvidia3  predicate: /dev/nvidia2, which is unexpected.",
    "failed to find predicate idx for pod 3f2c9a1e-0000-4000-8000-000000000001",
]
LOOK_ALIKES = [
    "Allocate failed due to requested number of devices unavailable for tencent.com/vcuda-core. "
    "Requested: 60, Available: 0, which is unexpected",
    "Allocate pod default/example0 with predicate /dev/nvidia0",
    "predicate: /dev/nvidia0 matched",
]


@pytest.mark.parametrize("line", READ)
def test_mismatch_is_the_plugins(line: str) -> None:
    found = job_error(line)
    assert found is not None and found.id == "gpu-manager-predicate-mismatch"
    assert (found.component, found.cause) == ("device-plugin", "gpu_admission_failed")


@pytest.mark.parametrize("line", LOOK_ALIKES)
def test_look_alikes_stay_unread(line: str) -> None:
    found = job_error(line)
    assert found is None or found.id != "gpu-manager-predicate-mismatch"


def _refused(message: str) -> tuple[str, str] | None:
    evidence = [{"kind": "workload", "name": "vcuda-0", "namespace": "default", "container": "main",
                 "resources": {"limits": {"tencent.com/vcuda-core": "60", "tencent.com/vcuda-memory": "25"}},
                 "state": "UnexpectedAdmissionError", "message": message}]
    cluster = {"driver_mode": "host", "gpu_node": {"gpus": 2}}
    return top_pair(synthetic_case("x-vcuda", evidence, cluster=cluster))


def test_a_vcuda_pod_refused_by_the_allocator() -> None:
    assert _refused(READ[0]) == ("device-plugin", "gpu_admission_failed")


def test_the_kubelets_own_count_is_not_the_allocators() -> None:
    assert _refused(LOOK_ALIKES[0]) != ("device-plugin", "gpu_admission_failed")
