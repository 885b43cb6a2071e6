"""A startup taint its owner never removed.

Some node agents are deployed with a taint the node is created with (Karpenter's
``startupTaints``, a node group's registration taints) and that the agent itself removes once
it is ready on the node, so no workload lands there before it: the AWS EBS and EFS CSI node
plugins remove ``ebs.csi.aws.com/agent-not-ready`` / ``efs.csi.aws.com/agent-not-ready``
(kubernetes-sigs/aws-ebs-csi-driver#1949; kubernetes-sigs/aws-efs-csi-driver#1320: a driver
that raced the node lifecycle controller and never verified the removal left the taint on a
GPU node for weeks, chanzuckerberg/cztack#893). The taint's key names its owner: a key
``<domain>/agent-not-ready`` whose domain is a CSI driver's (a ``csi`` label) is the CSI node
plugin's. While that plugin's pod is not ready the taint is doing its job; once the pod runs
ready and the taint is still there, the plugin failed to lift it, and every pod that does not
tolerate it (the GPU operands and the GPU workloads) is kept off the node on its account.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpunode.checks.base import check, pods_here
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import line_finding
from gpunode.decisive import Decisive
from gpunode.model import Finding, Status
from gpunode.startup_taints import left_startup_taint


@check("csi-node", needs=("node",), may_find=pods_here("csi-node"))
def startup_taint_left(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The CSI node plugin runs ready on the node but its startup taint is still there."""
    node = ctx.node
    if node is None:
        return
    taint = left_startup_taint(node, component, [sp.pod for sp in ctx.stack_pods(component)])
    if taint is None:
        return
    said = f"{taint.key}={taint.value}:{taint.effect}" if taint.value else f"{taint.key}:{taint.effect}"
    yield line_finding(ctx.kb, component, Status.FAILED, Decisive(1, said, 2), f"node/{ctx.name} spec.taints",
                       verb="left its startup taint on the node while its pod runs ready",
                       line_class="error_unclassified")
