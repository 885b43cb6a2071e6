"""A component's own verdict on the node: the state label it publishes.

The MIG manager writes the outcome of its last apply to the node
(``nvidia.com/mig.config.state``: ``pending``, ``rebooting``, ``success`` or
``failed``) and then keeps running, waiting for the next change of the config label:
its pod is ready and shows no state, so a failed apply was read as healthy. A state
label saying ``failed`` is the component's own word that its job failed; the decisive
line of its current log (the general rules, ``gpunode.decisive``) says why, and the
finding is that line's class (or a catalogued cause of the component it matches). With
no error line in the log the label alone names no cause, and nothing is added.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import as_catalogued, line_finding
from gpunode.decisive import decisive_line
from gpunode.model import Evidence, Finding, Status

#: Node labels in which a component publishes the outcome of its last run, and the value
#: that says it failed (NVIDIA/mig-parted, deployments/gpu-operator: mig.config.state).
STATE_LABELS: Mapping[str, tuple[str, str]] = {
    "nvidia.com/mig.config.state": ("mig-manager", "failed"),
}


def state_label_findings(ctx: NodeContext, failing: set[str]) -> Iterator[Finding]:
    """A failed finding for each component not already failing whose state label on this
    node says ``failed``, quoting the decisive line of its current log."""
    labels = ctx.node.metadata.labels if ctx.node is not None else {}
    for label, (component, failed) in STATE_LABELS.items():
        if labels.get(label) != failed or component in failing:
            continue
        for sp in ctx.stack_pods(component):
            found = next(((log, line) for log in ctx.logs_of(sp.pod) if not log.previous
                          if (line := decisive_line(log.lines, ctx.kb.class_of)) is not None), None)
            if found is None:
                continue
            log, line = found
            stated = Evidence(f"node/{ctx.name} metadata.labels[{label}]", f"{label}={failed}")
            yield as_catalogued(ctx.kb, line_finding(
                ctx.kb, component, Status.FAILED, line, f"{log.path}:{line.line_no}", verb="reports failed",
                evidence=(stated,), standalone="true", namespace=log.namespace, pod=log.pod,
                container=log.container))
            break
