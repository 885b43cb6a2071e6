"""A cluster component's error naming a node label it could not find is the label's setter's
failure (checks.label_unfound): the GPU Operator's "unable to retrieve OS name from label
feature.node.kubernetes.io/system-os_release.ID" (NVIDIA/gpu-operator controllers,
getGPUNodeOSTag) on a node NFD left without its os_release labels is NFD's, whose system
source was off (Vikaspogu/home-ops@e6af032). The same line while the node carries the label,
and the operator's healthy "Setting node label" lines, blame nobody's labelling."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.checks.label_unfound import unfound_label

OS_ID = "feature.node.kubernetes.io/system-os_release.ID"
LINE = f"failed to retrieve GPU node OS info: unable to retrieve OS name from label {OS_ID}"


def _case(text: str, *, label_gone: bool) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "log", "component": "gpu-operator", "container": "gpu-operator", "text": text + "\n"}]
    if label_gone:
        evidence.insert(0, {"kind": "node-labels", "labels": {OS_ID: None}})
    return synthetic_case("x-label-unfound", evidence, cluster={"driver_mode": "host"})


def test_operator_missing_nfd_label_is_nfds() -> None:
    assert top_pair(_case(LINE, label_gone=True)) == ("nfd", "node_labels_missing")


def test_same_line_while_node_carries_the_label_is_not_nfds() -> None:
    top = top_pair(_case(LINE, label_gone=False))
    assert top is None or top[0] != "nfd"


def test_setting_a_label_is_no_alarm() -> None:
    healthy = ('{"level":"info","msg":"Setting node label","NodeName":"gpu-0",'
               '"Label":"nvidia.com/gpu.deploy.driver","Value":"true"}')
    assert top_pair(_case(healthy, label_gone=True)) is None


def test_unfound_label_shape() -> None:
    assert unfound_label(LINE) == OS_ID
    assert unfound_label("missing label feature.node.kubernetes.io/kernel-version.full") == (
        "feature.node.kubernetes.io/kernel-version.full")
    assert unfound_label('label "nvidia.com/gpu.product" not found on node gpu-0') == "nvidia.com/gpu.product"
    assert unfound_label("Setting node label nvidia.com/gpu.deploy.driver=true") is None
    assert unfound_label("unable to retrieve OS name from the node") is None
