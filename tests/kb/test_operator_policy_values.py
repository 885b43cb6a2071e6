"""The GPU Operator's own words for operand values in the ClusterPolicy that it cannot use
(an image path it cannot build) name the ClusterPolicy as what to correct: that line is
``clusterpolicy_invalid`` while the operator runs, whatever operand it names."""

from __future__ import annotations

import pytest

from gpunode.kb import decisive_hit, load_kb

_OPERATOR = "gpu-operator"


@pytest.mark.parametrize(
    "line",
    [
        # gpu-operator 1.7 (object_controls.go), as logged by the controller
        "Failed to apply transformation 'nvidia-dcgm-exporter' with error: 'Invalid values for building "
        "container image path provided, please update the ClusterPolicy instance'\t"
        '{"Daemonset": "nvidia-dcgm-exporter"}',
        # gpu-operator 22.9 and later (api/v1/clusterpolicy_types.go imagePath)
        '{"level":"error","ts":1700000000.1,"logger":"controllers.ClusterPolicy","msg":"Failed to reconcile '
        'state-container-toolkit: empty image path provided through both ClusterPolicy CR and ENV '
        'CONTAINER_TOOLKIT_IMAGE"}',
    ],
)
def test_operator_lines_naming_the_policy_values_are_clusterpolicy_invalid(line: str) -> None:
    kb = load_kb()
    cause = kb.catalogued_in(_OPERATOR, line)
    assert cause is not None and cause.code == "clusterpolicy_invalid"
    decisive = [m for m in cause.match if m.while_running]
    assert any(decisive_hit(["starting", line], cause, m) for m in decisive)


@pytest.mark.parametrize(
    "line",
    [
        'INFO\tcontrollers.ClusterPolicy\tFound Resource, updating...\t{"DaemonSet": "nvidia-dcgm-exporter"}',
        '{"level":"info","logger":"controllers.ClusterPolicy","msg":"Couldn\'t create DaemonSet",'
        '"DaemonSet":"nvidia-driver-daemonset","Error":"DaemonSet.apps \\"x\\" is invalid"}',
        'ERROR\tcontrollers.ClusterPolicy\tFailed to get NodeList\t{"error": "context deadline exceeded"}',
    ],
)
def test_the_operators_other_lines_are_not(line: str) -> None:
    cause = load_kb().catalogued_in(_OPERATOR, line)
    assert cause is None or cause.code != "clusterpolicy_invalid"
