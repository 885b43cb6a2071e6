"""The API server refusing a privileged container when it runs without --allow-privileged
("securityContext.privileged: Forbidden: disallowed by cluster policy", its pod validation,
said of any object that holds a pod template): the operator's DaemonSets of privileged
operands are refused before a pod exists, the operand pod security cause. An RBAC refusal of
the operator's own account is not that cause.

Sources: kubernetes/kubernetes#83700 (calico-node), hetznercloud/csi-driver#98 (microk8s),
rook/rook#2217 (an operator's agent DaemonSet on Juju), kubevirt/kubevirt#2962."""

from __future__ import annotations

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

LINES = {
    # https://github.com/kubernetes/kubernetes/issues/83700
    "k8s-83700": 'The DaemonSet "calico-node" is invalid: spec.template.spec.containers[0].securityContext.'
                 "privileged: Forbidden: disallowed by cluster policy",
    # https://github.com/rook/rook/issues/2217
    "rook-2217": "failed to run operator. Error starting agent daemonset: failed to create rook-agent daemon "
                 'set. DaemonSet.apps "rook-agent" is invalid: spec.template.spec.containers[0].'
                 "securityContext.privileged: Forbidden: disallowed by cluster policy",
    # https://github.com/hetznercloud/csi-driver/issues/98
    "hetzner-98": "* spec.template.spec.containers[1].securityContext.privileged: Forbidden: disallowed by "
                  "cluster policy",
}

RBAC = ('daemonsets.apps is forbidden: User "system:serviceaccount:gpu-operator:gpu-operator" cannot create '
        'resource "daemonsets" in API group "apps" in the namespace "gpu-operator"')


def _operator_log(name: str, text: str) -> Case:
    return synthetic_case(f"privileged-{name}", [
        {"kind": "log", "component": "gpu-operator", "container": "gpu-operator", "text": text + "\n"},
        {"kind": "pod-missing", "component": "driver"},
        {"kind": "pod-missing", "component": "device-plugin"},
    ], healthy=False)


@pytest.mark.parametrize("name", sorted(LINES))
def test_privileged_disallowed_by_cluster_policy_is_operand_pod_security(name: str) -> None:
    assert top_pair(_operator_log(name, LINES[name])) == ("gpu-operator", "operand_pod_security_denied")


def test_an_rbac_refusal_of_the_operator_is_not() -> None:
    pair = top_pair(_operator_log("rbac", RBAC))
    assert pair is None or pair[1] != "operand_pod_security_denied", pair
