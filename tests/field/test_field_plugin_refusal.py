"""A device plugin's own refusal of an allocation, relayed by the kubelet at admission, is the
plugin's, with or without the gRPC status the kubelet wraps it in.

k8s-device-plugin refuses a shared (MPS or time-sliced) request for more than one replica in
its own format ("request for 'nvidia.com/gpu: 2' too large: maximum request size for shared
resources is 1", later "invalid request: maximum request size for shared resources is 1; found
2"); reports often paste that message without the kubelet's "Allocate failed due to rpc error:
code = Unknown desc =" (NVIDIA/k8s-device-plugin#929). A limit stated with the amount asked
("maximum ... is 1; found 10") is resource exhaustion. The kubelet's own device-manager count
stays the kubelet's."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.kb import load_kb

NEW = ('request for "nvidia.com/gpu": invalid request: maximum request size for shared resources is 1; '
       'found 2, which is unexpected')
OLD = ("request for 'nvidia.com/gpu: 2' too large: maximum request size for shared resources is 1, "
       "which is unexpected")
WRAPPED = f"Allocate failed due to rpc error: code = Unknown desc = {OLD}"
OWN_COUNT = ("Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. "
             "Requested: 2, Available: 1, which is unexpected")


def _case(message: str) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "gpu-pod", "namespace": "default",
         "resources": {"limits": {"nvidia.com/gpu": "2"}}, "state": "UnexpectedAdmissionError"},
        {"kind": "event", "object": {"kind": "Pod", "name": "gpu-pod", "namespace": "default"},
         "type": "Warning", "reason": "UnexpectedAdmissionError", "message": message}]
    return synthetic_case("x-plugin-refusal", evidence)


def test_plugin_refusal_without_the_grpc_status_is_the_plugins() -> None:
    assert top_pair(_case(NEW)) == ("device-plugin", "error_resource_exhausted")
    assert top_pair(_case(OLD)) == ("device-plugin", "error_resource_exhausted")


def test_plugin_refusal_with_the_grpc_status_is_the_plugins() -> None:
    assert top_pair(_case(WRAPPED)) == ("device-plugin", "error_resource_exhausted")


def test_the_kubelets_own_count_is_not_the_plugins() -> None:
    top = top_pair(_case(OWN_COUNT))
    assert top is None or top[0] != "device-plugin"


def test_a_maximum_with_the_amount_asked_is_exhaustion() -> None:
    kb = load_kb()
    exhausted = "error_resource_exhausted"
    assert kb.class_of("maximum request size for shared resources is 1; found 10") == exhausted
    assert kb.class_of("error: maximum batch size is 8, got 16") == "error_resource_exhausted"
    assert kb.class_of("the maximum batch size is 8") != "error_resource_exhausted"
