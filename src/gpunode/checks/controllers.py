"""A stack component's Deployment whose controller cannot create its pods.

Some components make Deployments of their own for work on one node: the NVIDIA DRA
driver's kubelet plugin starts an MPS control daemon per claim as a Deployment pinned to
the node (templates/mps-control-daemon.tmpl.yaml, ``nodeName``). When the API server
refuses that Deployment's pods (a quota, PodSecurity, an OpenShift SCC, an admission
webhook), no pod exists to carry a state or an event on the node: the refusal is said
only in the Deployment's status, as the ``ReplicaFailure`` condition its ReplicaSet's
``FailedCreate`` is copied to (k8s.io/kubernetes pkg/controller/deployment: the
condition stays True until the ReplicaSet can create the pod). The component then runs
without the part it made, so that condition is the component's failure on the node,
classed by its message (``is forbidden`` → permission denied, ``exceeded quota`` →
resources exhausted). A Deployment pinned to another node, one whose condition is not
True, or one of a component with no pod on this node says nothing here.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from gpunode.bundle.kube import Condition, Deployment
from gpunode.catalog import Recogniser
from gpunode.checks.base import ALL_POD_COMPONENTS, check
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import as_catalogued, line_finding
from gpunode.decisive import Decisive
from gpunode.facts import ClusterFacts
from gpunode.model import Finding, Status

#: The Deployment condition that says its ReplicaSet could not create a pod.
REPLICA_FAILURE = "ReplicaFailure"
#: The label that pins a pod to one node by name, where a template uses a selector.
HOSTNAME_LABEL = "kubernetes.io/hostname"

Refused = dict[str, list[tuple[Deployment, Condition]]]
#: The last bundle's answer (every node of a bundle asks for it; one bundle at a time is read).
_LAST: list[tuple[ClusterFacts, Refused]] = []


def refused_deployments(facts: ClusterFacts) -> Refused:
    """The stack's Deployments with a ReplicaFailure condition that is True, by the component
    their name, template labels and containers belong to (once per bundle: most have none)."""
    if _LAST and _LAST[0][0] is facts:
        return _LAST[0][1]
    known = _recognised(facts, _failing(facts.deployments))
    _LAST[:] = [(facts, known)]
    return known


def _failing(deployments: Sequence[Deployment]) -> list[tuple[Deployment, Condition]]:
    """Each Deployment's ReplicaFailure condition that holds now (False once pods are made)."""
    return [(d, c) for d in deployments for c in d.status.conditions
            if c.type == REPLICA_FAILURE and c.status == "True"]


def _recognised(facts: ClusterFacts, failing: list[tuple[Deployment, Condition]]) -> Refused:
    out: Refused = {}
    if not failing:
        return out
    recogniser = Recogniser(facts.catalog)
    for deployment, condition in failing:
        template = deployment.spec.template
        containers = [(c.name, c.image) for c in template.spec.containers]
        cid = recogniser.component_of([deployment.metadata.name], template.metadata.labels, containers)
        if cid is not None:
            out.setdefault(cid, []).append((deployment, condition))
    return out


def pinned_node(deployment: Deployment) -> str:
    """The node the Deployment's pods must run on ("" where the template pins none)."""
    spec = deployment.spec.template.spec
    return spec.node_name or spec.node_selector.get(HOSTNAME_LABEL, "")


def _any_refused(ctx: NodeContext) -> bool:
    """Whether any Deployment of the stack is refused pods (in nearly every bundle none:
    ``deployment_pods_refused`` is then called for none of the pod components)."""
    return bool(refused_deployments(ctx.facts))


@check(ALL_POD_COMPONENTS, may_find=_any_refused)
def deployment_pods_refused(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The component's Deployment for this node cannot have its pods created: the refusal its
    ReplicaFailure condition quotes. A Deployment pinned to a node (``nodeName``, a hostname
    selector) is that node's; one pinned to none may put its pods on any node, so it is the
    component's failure wherever the component runs."""
    for deployment, condition in refused_deployments(ctx.facts).get(component, ()):
        node = pinned_node(deployment)
        if node != ctx.name and (node or not ctx.stack_pods(component)):
            continue
        yield _refused_finding(ctx, component, deployment, condition)
        return


def _refused_finding(ctx: NodeContext, component: str, deployment: Deployment,
                     condition: Condition) -> Finding:
    """The refusal as a line of the component: its class (or the component's catalogued cause
    it matches) is the cause; failed while no replica is available, degraded while older ones
    still serve (a scale-up or rollout refused)."""
    meta = deployment.metadata
    message = condition.message or condition.reason
    status = Status.FAILED if deployment.status.available_replicas == 0 else Status.DEGRADED
    found = Decisive(1, message, 2)
    where = (f"cluster/deployments.json deployment {meta.namespace}/{meta.name} "
             f"status.conditions[{REPLICA_FAILURE}]")
    return as_catalogued(ctx.kb, line_finding(
        ctx.kb, component, status, found, where, verb=f"cannot create the pods of deployment {meta.name}",
        namespace=meta.namespace, deployment=meta.name, standalone="true"))
