"""Operands the MIG manager paused for a MIG change that is no longer under way.

To change a node's MIG layout the MIG manager (NVIDIA/mig-parted's nvidia-mig-manager, run
by the GPU Operator) stops every GPU client first: it sets the node's
``nvidia.com/mig.config.state`` to ``pending``, turns each operand's
``nvidia.com/gpu.deploy.<operand>`` label from ``true`` to ``paused-for-mig-change`` (the
operands' DaemonSets select ``true``, so their pods leave), applies the layout, and as its
last step sets those labels back and the state to ``success`` or ``failed``. Its main loop
then logs ``Waiting for change to 'nvidia.com/mig.config' label`` and blocks until the
label changes (mig-parted cmd/nvidia-mig-manager main.go: each pass logs that line, then
``Updating to MIG config: <name>`` and runs the change).

A node still holding operands at ``paused-for-mig-change`` once the change is over was
left so by the MIG manager: the device plugin, GFD, DCGM and its exporter never come back
and the node offers no GPU, and the MIG manager waits for a label change that nothing will
make (NVIDIA/mig-parted#485: it gave up evicting the GPU clients and returned without
restoring them; fixed by mig-parted#484). The change is over when the state says it ended
(``success``), or, while the state still reads ``pending`` or ``rebooting``, when the MIG
manager's own log shows its loop back at waiting after its last ``Updating to MIG config``.
A change under way (no such waiting line after it, or no log of the MIG manager here) is a
transition, not a failure; a ``failed`` state is the state label's own reading
(checks.state_labels), whose decisive line says more than the labels it left.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpunode.checks.base import check, problem
from gpunode.checks.context import NodeContext
from gpunode.checks.operator import OPERANDS
from gpunode.model import Evidence, Finding
from gpunode.relazy import lazy_compile

MIG_STATE = "nvidia.com/mig.config.state"
DEPLOY_PREFIX = "nvidia.com/gpu.deploy."
PAUSED = "paused-for-mig-change"
#: The MIG manager's states while a change is under way.
_CHANGING = frozenset({"pending", "rebooting"})
#: The MIG manager's loop: back at waiting for the next label change, or starting a change.
_WAITING = lazy_compile(r"Waiting for change to '?nvidia\.com/mig\.config'? label")
_UPDATING = lazy_compile(r"Updating to MIG config\b")
#: The catalog component each operand deploy label keeps on or off the node.
_OPERAND_OF = {label: component for component, (label, _) in OPERANDS.items()}


@check("mig-manager", needs=("node", "cluster/pods"))
def operands_left_paused(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """Operand deploy labels at paused-for-mig-change, their pods gone from the node, after
    the MIG manager's change ended: the MIG manager did not give the node its operands back."""
    node = ctx.node
    if node is None:
        return
    labels = node.metadata.labels
    if PAUSED not in labels.values():
        return  # (in C: most nodes)
    paused = sorted(k for k, v in labels.items() if k.startswith(DEPLOY_PREFIX) and v == PAUSED)
    state = labels.get(MIG_STATE)
    if not paused or state is None or state == "failed":
        return
    gone = [k for k in paused if k in _OPERAND_OF and not ctx.stack_pods(_OPERAND_OF[k])]
    if not gone:
        return  # (the operands gpunode knows still run: the pause has not taken effect)
    if state in _CHANGING:
        if not _manager_idle(ctx, component):
            return
        why = "the MIG manager's log is back at waiting for the next nvidia.com/mig.config change"
    else:
        why = "the MIG change ended"
    shown = ", ".join(f"{k}={PAUSED}" for k in paused)
    ev = Evidence(f"node/{ctx.name} metadata.labels", f"{shown}; {MIG_STATE}={state}; {why}")
    yield problem(component, "selector_label_missing", ev, specificity=40, label=gone[0],
                  setter=component, waiting=", ".join(k.removeprefix(DEPLOY_PREFIX) for k in gone))


def _manager_idle(ctx: NodeContext, component: str) -> bool:
    """The current log of the MIG manager here shows its loop waiting for a label change
    after its last change began: that change returned."""
    for _, log in ctx.current_logs(component):
        last = None
        for line in log.lines:
            if _UPDATING.search(line):
                last = "updating"
            elif _WAITING.search(line) and last is not None:
                last = "waiting"
        if last == "waiting":
            return True
    return False
