"""Operands the MIG manager left at paused-for-mig-change once its change was over
(NVIDIA/mig-parted#485): the MIG manager's doing, read from the node's labels and, while the
state still says pending, from the MIG manager's loop back at waiting for the next
nvidia.com/mig.config change (mig-parted cmd/nvidia-mig-manager main.go). Look-alikes: a
change still under way (its log stops at 'Updating to MIG config'), a failed change (the
state label's own reading), and a node whose operands are not paused."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

PAUSED = {f"nvidia.com/gpu.deploy.{operand}": "paused-for-mig-change"
          for operand in ("device-plugin", "gpu-feature-discovery", "dcgm", "dcgm-exporter")}
STARTED = ('time="2026-03-02T10:00:00Z" level=info msg="Waiting for change to '
           '\'nvidia.com/mig.config\' label"\n'
           'time="2026-03-02T10:00:00Z" level=info msg="Updating to MIG config: all-1g.5gb"\n'
           'time="2026-03-02T10:00:01Z" level=info msg="Shutting down all GPU clients in Kubernetes by '
           'disabling their component-specific nodeSelector labels"\n')
RETURNED = STARTED + ('time="2026-03-02T10:05:01Z" level=info msg="Waiting for change to '
                      '\'nvidia.com/mig.config\' label"\n')


def _node(state: str, log: str | None, labels: dict[str, str] | None = None) -> list[dict[str, Any]]:
    given = {"nvidia.com/mig.strategy": "mixed", "nvidia.com/mig.config.state": state,
             **(PAUSED if labels is None else labels)}
    evidence: list[dict[str, Any]] = [
        {"kind": "node-labels", "labels": given},
        {"kind": "pod-missing", "component": "device-plugin"},
        {"kind": "pod-missing", "component": "gfd"},
        {"kind": "pod-missing", "component": "dcgm-exporter"},
    ]
    if log is not None:
        evidence.append({"kind": "log", "component": "mig-manager", "text": log})
    return evidence


def _top(evidence: list[dict[str, Any]]) -> tuple[str, str] | None:
    node = {"gpu_node": {"gpu": "A100", "gpus": 4}}
    return top_pair(synthetic_case("x-mig-paused", evidence, cluster=node))


def test_operands_left_paused_after_the_change_returned_are_the_mig_managers() -> None:
    assert _top(_node("pending", RETURNED)) == ("mig-manager", "selector_label_missing")


def test_operands_left_paused_after_a_change_that_succeeded() -> None:
    assert _top(_node("success", RETURNED)) == ("mig-manager", "selector_label_missing")


def test_a_change_under_way_is_no_failure() -> None:
    top = _top(_node("pending", STARTED))
    assert top is None or top[0] != "mig-manager"


def test_a_failed_change_keeps_the_state_labels_reading() -> None:
    top = _top(_node("failed", RETURNED))
    assert top is not None and top[1] != "selector_label_missing"


def test_operands_not_paused_say_nothing_of_the_mig_manager() -> None:
    top = _top(_node("success", RETURNED, labels={}))
    assert top is None or top[0] != "mig-manager"
