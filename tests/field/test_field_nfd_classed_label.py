"""NFD's default label fields [class, vendor] name an NVIDIA GPU pci-0302_10de (or pci-0300_10de).
Only later GPU Operator releases read those forms beside the vendor-only pci-10de.present
(gpuNodeLabels in controllers/state_manager.go), and every such release keeps
nvidia.com/gpu.present in sync with the NVIDIA PCI label it reads. A node with the class+vendor
label alone and no gpu.present is one the operator in use did not read as a GPU node
(NVIDIA/gpu-operator#78, #114): NFD's label form is the fault. The same label beside the
operator's gpu.present (a release that reads it), the vendor-only label, or an administrator's
gpu.present=false is no such fault."""

from __future__ import annotations

from typing import Any

import pytest
from case import synthetic_case
from scoreboard import top_pair

from gpunode.checks.operator import classed_form_passed_over

_CLASSED = "feature.node.kubernetes.io/pci-0302_10de.present"
_VENDOR = "feature.node.kubernetes.io/pci-10de.present"
_PRESENT = "nvidia.com/gpu.present"


def _labels(labels: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"kind": "node-labels", "labels": labels}]


def test_a_classed_label_the_operator_did_not_take_up_is_nfd_s_label_form() -> None:
    case = synthetic_case("x-classed", _labels({_VENDOR: None, _CLASSED: "true", _PRESENT: None}),
                          healthy=False)
    assert top_pair(case) == ("nfd", "nfd_pci_label_missing")


def test_the_3d_controller_and_vga_forms_both_count() -> None:
    vga = "feature.node.kubernetes.io/pci-0300_10de.present"
    case = synthetic_case("x-classed-vga", _labels({_VENDOR: None, vga: "true", _PRESENT: None}),
                          healthy=False)
    assert top_pair(case) == ("nfd", "nfd_pci_label_missing")


@pytest.mark.parametrize("labels", [
    {_VENDOR: None, _CLASSED: "true"},  # the operator set gpu.present from it: a release that reads it
    {_VENDOR: "true", _CLASSED: "true", _PRESENT: None},  # the vendor-only form: every release
])
def test_a_classed_label_the_operator_reads_stays_healthy(labels: dict[str, Any]) -> None:
    assert top_pair(synthetic_case("x-classed-read", _labels(labels))) is None


def test_the_shape_of_the_reading() -> None:
    assert classed_form_passed_over({_CLASSED: "true"})
    assert not classed_form_passed_over({_CLASSED: "true", _PRESENT: "true"})
    assert not classed_form_passed_over({_CLASSED: "true", _PRESENT: "false"})  # an administrator's choice
    assert not classed_form_passed_over({_CLASSED: "true", _VENDOR: "true"})
    assert not classed_form_passed_over({_CLASSED: "false"})
    assert not classed_form_passed_over({})


def test_operands_without_their_state_labels_wait_on_nfd_not_the_operator() -> None:
    # The operator that did not read the node as a GPU node also removed its gpu.deploy.* labels,
    # so its operands have no pod there: NFD's label form is why, not the operator.
    labels: dict[str, Any] = {_VENDOR: None, _CLASSED: "true", _PRESENT: None}
    for operand in ("driver", "container-toolkit", "device-plugin", "gpu-feature-discovery",
                    "dcgm-exporter", "operator-validator", "dcgm", "node-status-exporter", "mig-manager"):
        labels[f"nvidia.com/gpu.deploy.{operand}"] = None
    evidence = [*_labels(labels), {"kind": "pod-missing", "component": "device-plugin"}]
    case = synthetic_case("x-classed-operands", evidence, healthy=False)
    assert top_pair(case) == ("nfd", "nfd_pci_label_missing")
