"""A server that lacks the API its client calls, and the kubelet's eviction of a pod from a node
under pressure, are failure lines in their own words (no "error" on them): the kubelet's "CRI v1
runtime API is not implemented for endpoint" from a containerd too old for it
(kubernetes/kubernetes#113625), gRPC's status code Unimplemented, and the eviction message
"The node had condition: [DiskPressure]." (pkg/kubelet/eviction; a CUDA validator evicted on a
16 GB Tanzu node disk, HPE Japan's vSphere with Tanzu GPU notes). The same words at a level the
program calls normal, and the node's own condition turning False, stay silent."""

from __future__ import annotations

import pytest

from gpunode.decisive import severity
from gpunode.explain import explain_lines
from gpunode.kb import load_kb

KB = load_kb()


@pytest.mark.parametrize(
    ("line", "cls"),
    [
        ("CRI v1 runtime API is not implemented for endpoint", "error_config_invalid"),
        ('E1207 10:01:02.123456 812 remote_runtime.go:91] "Version from runtime service failed" '
         'err="rpc error: code = Unimplemented desc = unknown service runtime.v1.RuntimeService"',
         "error_config_invalid"),
        ("The node had condition: [DiskPressure].", "error_resource_exhausted"),
        ("The node had condition: [MemoryPressure].", "error_resource_exhausted"),
    ],
)
def test_the_line_is_decisive_with_its_class(line: str, cls: str) -> None:
    assert severity(line) >= 1
    assert explain_lines([line], KB).decisive_class == cls


@pytest.mark.parametrize(
    "line",
    [
        # the same words at info level: the program judged them normal
        'time="2026-12-07T10:01:02Z" level=info '
        'msg="GetPreferredAllocation method is not implemented, skipping"',
        # the kubelet's condition turning back (sim/nodes.py's reason text, real kubelet words)
        "Node gpu-wk-01 status is now: NodeHasNoDiskPressure",
        "kubelet has no disk pressure",
        # a feature that is not implemented, not a server refusing a call
        "Note: hot-plug is not implemented for this bus type",
    ],
)
def test_look_alikes_stay_silent(line: str) -> None:
    assert severity(line) == 0


def test_a_pressure_condition_the_node_stopped_reporting_is_no_exhaustion() -> None:
    """The node lifecycle controller's Unknown pressure (the kubelet stopped posting status) says
    nothing of the resource: the node is unreachable, not full."""
    line = "MemoryPressure=Unknown NodeStatusUnknown Kubelet stopped posting node status."
    assert explain_lines([line], KB).decisive_class != "error_resource_exhausted"
