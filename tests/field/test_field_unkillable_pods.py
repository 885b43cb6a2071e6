"""A stack pod being deleted that the kubelet cannot kill is the failure of the layer its
words name: CRI-O's 'failed to find runtime handler <name> from runtime list ...' (its own
format, cri-o internal/oci) for the nvidia handler the toolkit removed under running pods
(NVIDIA/nvidia-container-toolkit#1360) is the toolkit's; another handler (gVisor's runsc),
a kill that names no layer, or the same words on a pod not being deleted change nothing
here. Bundles built from real-shaped evidence."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import top_pair


def _case(*evidence: dict[str, Any]) -> Case:
    raw = {"id": "x-unkillable", "source": "https://example.org/x", "title": "t", "platform": "crio",
           "cluster": {"runtime": "crio"}, "evidence": list(evidence), "expect": {"healthy": True}}
    return msgspec.convert(raw, Case)


TERMINATING = {"kind": "pod-state", "component": "dcgm-exporter", "state": "Terminating"}


def _kill_failed(message: str) -> dict[str, Any]:
    return {"kind": "event", "component": "dcgm-exporter", "type": "Warning", "reason": "FailedKillPod",
            "message": message}


_HANDLER = ("error killing pod: failed to \"KillPodSandbox\" for \"4b1e\" with KillPodSandboxError: "
            "\"rpc error: code = Unknown desc = failed to find runtime handler {} from runtime list "
            "map[crun:0xc000a1 runc:0xc000a2]\"")


def test_a_removed_nvidia_handler_keeps_a_pod_from_being_killed() -> None:
    assert top_pair(_case(TERMINATING, _kill_failed(_HANDLER.format("nvidia")))) == (
        "container-toolkit", "error_not_found")


def test_another_handler_names_no_stack_layer() -> None:
    assert top_pair(_case(TERMINATING, _kill_failed(_HANDLER.format("runsc")))) is None


def test_a_kill_that_names_no_layer_is_left_to_the_pod() -> None:
    timeout = ("error killing pod: failed to \"KillPodSandbox\" for \"4b1e\" with KillPodSandboxError: "
               "\"rpc error: code = DeadlineExceeded desc = context deadline exceeded\"")
    assert top_pair(_case(TERMINATING, _kill_failed(timeout))) is None


def test_a_pod_not_being_deleted_is_not_read_so() -> None:
    running = {"kind": "pod-state", "component": "dcgm-exporter", "state": "Running"}
    assert top_pair(_case(running, _kill_failed(_HANDLER.format("nvidia")))) is None
