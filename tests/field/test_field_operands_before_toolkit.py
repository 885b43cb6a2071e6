"""On CRI-O, operands asking for the nvidia RuntimeClass that wait in a container creation
error while the toolkit's container has not started are waiting for the handler the toolkit
writes (GPU Operator 25.10.0 known issue: Init:RunContainerError / Init:CreateContainerError
until the toolkit pod runs; CRI-O's "failed to find runtime handler nvidia from runtime list",
https://github.com/NVIDIA/gpu-operator/issues/2236). The look-alikes: the same operand states
with the toolkit running (their creation errors are something else), and on containerd."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

_OPERANDS: list[dict[str, Any]] = [
    {"kind": "pod-state", "component": "device-plugin", "state": "Init:RunContainerError", "restarts": 3},
    {"kind": "pod-state", "component": "gfd", "state": "Init:CreateContainerError", "restarts": 3},
]
_RULE = ("container-toolkit", "crio_no_nvidia_runtime_or_hook")


def _top(toolkit_state: str, platform: str) -> tuple[str, str] | None:
    evidence = [*_OPERANDS, {"kind": "pod-state", "component": "container-toolkit", "state": toolkit_state}]
    return top_pair(synthetic_case("x-before-toolkit", evidence, platform=platform, healthy=False))


def test_operands_waiting_for_a_toolkit_not_yet_started_on_crio() -> None:
    assert _top("PodInitializing", "crio") == _RULE


def test_a_running_toolkit_is_not_read_as_not_yet_configured() -> None:
    assert _top("Running", "crio") != _RULE


def test_containerd_nodes_are_not_read_as_crio() -> None:
    assert _top("PodInitializing", "ubuntu") != _RULE
