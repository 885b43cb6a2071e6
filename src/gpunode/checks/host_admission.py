"""The kubelet refusing pods at admission because its host lacks a feature the pod needs.

The kubelet's admit handlers (k8s.io/kubernetes pkg/kubelet/lifecycle) turn a pod away before
any container starts and say why on the pod's status: "Cannot enforce AppArmor: AppArmor is not
enabled on the host" (reason AppArmor) for a pod that asks for an AppArmor profile on a node
whose kernel has none (rancher/rancher#6317, nebius/soperator#177, VictoriaMetrics/operator#1120:
an operator's RuntimeDefault profile on hosts without AppArmor). Every pod of that kind the node
is given meets the same refusal, GPU operands and jobs included, whatever the pod itself is:
the host under the kubelet lacks the feature, error_not_found. A refusal for a resource, a
placement or the pod's own spec (OutOfcpu, NodeAffinity, a forbidden sysctl) names no missing
host feature and is not read here.
"""

from __future__ import annotations

from collections.abc import Iterator
from operator import attrgetter

from gpunode.checks.base import LINE, MESSAGE, SOURCE, check, in_fleet, problem
from gpunode.checks.context import NodeContext
from gpunode.decisive import MAX_LINE
from gpunode.model import Evidence, Finding
from gpunode.relazy import lazy_compile

#: The kubelet's words for a feature of its host that is off or absent.
_HOST_LACKS = lazy_compile(r"(?i:\bis not (?:enabled|supported|available) on (?:the|this) (?:host|node)\b)")


def host_feature_lacking(message: str) -> bool:
    """A kubelet admission message that says the host lacks a feature the pod needs."""
    return _HOST_LACKS.search(message) is not None


@check("kubelet", needs=("cluster/pods",), may_find=in_fleet(attrgetter("refused_pods")))
def host_feature_refusals(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A pod on this node refused at admission for a feature its host lacks (module
    docstring): the kubelet's host, not the pod, so every pod needing it fails here."""
    for pod in ctx.facts.refused_pods:
        status = pod.status
        if pod.spec.node_name != ctx.name or not host_feature_lacking(status.message):
            continue
        where = f"pod {pod.metadata.namespace}/{pod.metadata.name} status.reason {status.reason}"
        line = status.message.strip()[:MAX_LINE]
        yield problem(component, "error_not_found",
                      Evidence(where, f"the kubelet refused the pod: {line}"),
                      specificity=50, ctx={SOURCE: where, LINE: line, MESSAGE: line})
        return
