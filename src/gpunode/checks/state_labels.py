"""A component's own verdict on the node: the state label it publishes.

Stack components write the outcome of their work on the node as a label, and then keep
running: the MIG manager its last apply (``nvidia.com/mig.config.state``: ``pending``,
``rebooting``, ``success`` or ``failed``), the vGPU device manager its last vGPU layout
(``nvidia.com/vgpu.config.state``: ``success`` or ``failed``), the Confidential Computing
manager its last CC mode change (``nvidia.com/cc.mode.state``: the mode set, or
``failed``), the operators' driver upgrade controller
(NVIDIA/k8s-operator-libs, ``nvidia.com/<driver>-driver-upgrade-state``: a chain of
``*-required`` steps, ``upgrade-done`` or ``upgrade-failed``) for the GPU driver
(``gpu``) and the Network Operator's OFED driver (``ofed``). Their pods are ready and
show no state, so a failed run was read as healthy. A state label whose value says
failed is the owner's own word that its job failed: the Warning event its setter records
on the Node for the step that failed (the upgrade controller's), else the decisive line of
its logs (the
general rules, ``gpunode.decisive``; the current log first, where the running component
wrote its last run, then a previous one) says why, and the finding is that line's class
(or a catalogued cause of the owner it matches). With no error line the label alone is
the owner's state (``state_reported_failed``, degraded), never healthy; a step in
progress, a success or an absent label says nothing.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpunode.checks.base import problem
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import as_catalogued, line_finding
from gpunode.decisive import Decisive, decisive_line
from gpunode.facts import LogFile
from gpunode.model import Evidence, Finding, Status
from gpunode.owner_states import STATE_LABELS, StateLabel, failed_states

__all__ = ["STATE_LABELS", "StateLabel", "failed_states", "state_label_findings"]


#: The verb of the title while the line quoted is the owner's.
_VERB = "reports failed"


def state_label_findings(ctx: NodeContext, failing: set[str]) -> Iterator[Finding]:
    """A finding for each owner not already failing whose state label on this node says its
    last run failed: the decisive line of its logs with its class, else the state itself."""
    labels = ctx.node.metadata.labels if ctx.node is not None else {}
    for label, value, state in failed_states(labels):
        component = state.owner
        if component in failing or component in ctx.platform.not_used:
            continue
        stated = Evidence(f"node/{ctx.name} metadata.labels[{label}]", f"{label}={value}")
        warned = _warned(ctx, state.event_reason)
        if warned is not None:
            where, line = warned
            yield as_catalogued(ctx.kb, line_finding(ctx.kb, component, Status.FAILED, line, where,
                                                     verb=_VERB, evidence=(stated,), standalone="true"))
            continue
        said = _said(ctx, component)
        if said is None:
            yield problem(component, "state_reported_failed", stated, status=Status.DEGRADED,
                          node=ctx.name, label=label, value=value, standalone="true")
            continue
        log, line = said
        yield as_catalogued(ctx.kb, line_finding(
            ctx.kb, component, Status.FAILED, line, f"{log.path}:{line.line_no}", verb=_VERB,
            evidence=(stated,), standalone="true", namespace=log.namespace, pod=log.pod,
            container=log.container))


def _warned(ctx: NodeContext, reason: str) -> tuple[str, Decisive] | None:
    """The decisive line of the last Warning event with ``reason`` on this Node (the state
    label's setter saying which step failed), with where it is; None without one."""
    if not reason:
        return None
    warnings = [ev for ev in ctx.node_events() if ev.type == "Warning" and ev.reason == reason]
    for ev in sorted(warnings, key=lambda ev: ev.last_timestamp or ev.event_time or "", reverse=True):
        line = decisive_line(ev.message.splitlines(), ctx.kb.class_of)
        if line is not None:
            return f"event node/{ctx.name} {reason}", line
    return None


def _said(ctx: NodeContext, component: str) -> tuple[LogFile, Decisive] | None:
    """The first log of the owner's pods on this node with a decisive line: current logs
    first (a running owner writes its last run there), then previous ones."""
    logs = [log for sp in ctx.stack_pods(component) for log in ctx.logs_of(sp.pod)]
    for log in sorted(logs, key=lambda log: log.previous):
        line = decisive_line(log.lines, ctx.kb.class_of)
        if line is not None:
            return log, line
    return None
