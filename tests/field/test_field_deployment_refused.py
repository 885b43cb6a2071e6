"""A stack component's Deployment whose pods the API server refuses says so only in its own
status: the ReplicaFailure condition (reason FailedCreate) the deployment controller copies
from its ReplicaSet, True while the refusal lasts (k8s.io/kubernetes pkg/controller/deployment,
kubernetes/kubernetes#19343). The NVIDIA DRA driver's kubelet plugin makes such a Deployment
per node for its MPS control daemon (pinned with ``nodeName``); refused, the plugin runs
without it. The messages below are the condition as public reports pasted it, each put on
that Deployment: the class of the refusal is the cause. A user's Deployment refused the same
way, a condition that is not True, or one pinned to a node that is not this one says nothing
of the stack here."""

from __future__ import annotations

from typing import Any

import pytest
from case import synthetic_case
from scoreboard import top_pair

#: ReplicaFailure messages from public reports, with their sources.
_REFUSALS = [
    # kubernetes/website#1699 (the Deployment docs' example of a failed Deployment)
    ('Error creating: pods "nginx-deployment-4262182780-" is forbidden: exceeded quota: object-counts, '
     'requested: pods=1, used: pods=3, limited: pods=2', "error_resource_exhausted"),
    # pulumi/pulumi-kubernetes#191
    ('pods "catalog-catalog-apiserver-56686688b8-" is forbidden: error looking up service account '
     'default/service-catalog-apiserver: serviceaccount "service-catalog-apiserver" not found', None),
    # kyma-project/busola#3472
    ('admission webhook "validation.webhook.warden.kyma-project.io" denied the request: Pod images '
     'kennethreitz/httpbin:latest validation failed', None),
    # kubernetes-sigs/dra-driver-nvidia-gpu#1212 (OpenShift's SCC), the corpus case's own form
    ('pods "mps-control-daemon-0-64fdb4c886-" is forbidden: unable to validate against any security '
     'context constraint: [provider restricted-v2: .spec.hostPID: Invalid value: true: Host PID is not '
     'allowed to be used]', "error_permission_denied"),
]


def _deployment(message: str, *, status: str = "True", node: str = "gpu-wk-01",
                name: str = "mps-control-daemon-0", container: str = "mps-control-daemon",
                image: str = "nvcr.io/nvidia/k8s-dra-driver-gpu:v25.3.0") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "nvidia-dra-driver-gpu"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"nodeName": node,
                                       "containers": [{"name": container, "image": image}]}}},
        "status": {"conditions": [
            {"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable",
             "message": "Deployment does not have minimum availability."},
            {"type": "ReplicaFailure", "status": status, "reason": "FailedCreate", "message": message}]},
    }


def _evidence(deployment: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"kind": "pod-state", "component": "dra-kubelet-plugin", "state": "Running"},
            {"kind": "cluster-object", "resource": "deployments", "object": deployment}]


@pytest.mark.parametrize(("message", "cause"), _REFUSALS)
def test_refused_stack_deployment_is_its_component(message: str, cause: str | None) -> None:
    case = synthetic_case("x-deploy-refused", _evidence(_deployment(message)), healthy=False)
    found = top_pair(case)
    assert found is not None and found[0] == "dra-kubelet-plugin"
    if cause is not None:
        assert found[1] == cause


@pytest.mark.parametrize("deployment", [
    _deployment(_REFUSALS[0][0], status="False"),                   # the refusal is over
    _deployment(_REFUSALS[3][0], node="gpu-wk-09"),                  # another node's daemon
    _deployment(_REFUSALS[0][0], name="nginx-deployment", container="nginx",
                image="nginx:1.27", node=""),                       # a user's Deployment
])
def test_look_alikes_stay_healthy(deployment: dict[str, Any]) -> None:
    case = synthetic_case("x-deploy-fine", _evidence(deployment))
    assert top_pair(case) is None
