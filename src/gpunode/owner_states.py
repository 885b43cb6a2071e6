"""The state labels stack components publish on their node, and the values that say failed (pure).

Kept apart from the check that reads them (``gpunode.checks.state_labels``) so that the live
collector, which reads a running owner's log where its label says failed, asks the same table
without importing the checks.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class StateLabel:
    """A node label in which ``owner`` (a catalog component) publishes the outcome of its
    last run, and the values that say the run failed."""

    owner: str
    failed: frozenset[str]
    #: the reason of the Warning events its setter records on the Node when a step fails
    #: (the words that say why the state is failed), or "" where it records none
    event_reason: str = ""


_UPGRADE_FAILED = frozenset({"upgrade-failed"})
#: The state labels of the stack (NVIDIA/mig-parted and the GPU Operator's mig-manager:
#: mig.config.state; NVIDIA/k8s-operator-libs pkg/upgrade consts: UpgradeStateLabelKeyFmt
#: 'nvidia.com/%s-driver-upgrade-state' with UpgradeStateFailed 'upgrade-failed', driver
#: name 'gpu' in the GPU Operator and 'ofed' in the Network Operator; its Warning events on the
#: Node, 'Failed to drain the node, ...', have the reason GetEventReason gives: '%sDriverUpgrade'
#: of the driver name in capitals; NVIDIA/vgpu-device-manager cmd/nvidia-k8s-vgpu-dm
#: getVGPUConfigStateValue: 'failed' when an apply returned an error; NVIDIA/k8s-cc-manager
#: main.py: set_cc_state_label(..., 'failed') when setting or verifying a GPU's mode failed).
_FAILED = frozenset({"failed"})
STATE_LABELS: Mapping[str, StateLabel] = {
    "nvidia.com/mig.config.state": StateLabel("mig-manager", _FAILED),
    "nvidia.com/vgpu.config.state": StateLabel("vgpu-device-manager", _FAILED),
    "nvidia.com/cc.mode.state": StateLabel("cc-manager", _FAILED),
    "nvidia.com/gpu-driver-upgrade-state": StateLabel("driver", _UPGRADE_FAILED, "GPUDriverUpgrade"),
    "nvidia.com/ofed-driver-upgrade-state": StateLabel("ofed", _UPGRADE_FAILED, "OFEDDriverUpgrade"),
}


def failed_states(labels: Mapping[str, str]) -> Iterator[tuple[str, str, StateLabel]]:
    """(label, value, its state label) for each state label on the node whose value says
    the owner's last run failed."""
    for label, state in STATE_LABELS.items():
        value = labels.get(label)
        if value is not None and value in state.failed:
            yield label, value, state
