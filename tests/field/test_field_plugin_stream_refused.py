"""The kubelet refusing a device plugin's device list (gpunode.checks.plugin_stream): its
journal's 'ListAndWatch ended unexpectedly for device plugin' with a gRPC code other than a
plugin going away (ResourceExhausted: 'grpc: received message larger than max', one fake
device per MiB of GPU memory over the kubelet's 4 MiB limit) is the failure of the plugin
serving that resource, though its pod runs Ready with nothing wrong in its own log.

Sources: Project-HAMi/volcano-vgpu-device-plugin#99 and #134 (the kubelet's structured form,
resource="volcano.sh/vgpu-memory"), kubernetes/kubernetes#127049 (foo.com/gpu-mem, a plugin
no catalogued component is: the node's only running plugin). Look-alikes: the stream of a
plugin that restarted ending Unavailable ('transport is closing', kubernetes/kubernetes#102829)
is routine, and a refusal followed by the resource's registration again is a new stream."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

from gpunode.checks.plugin_stream import refused_streams

#: Project-HAMi/volcano-vgpu-device-plugin#134's journal line.
VOLCANO_134 = ('Jun 05 10:59:27 cn-linux-005 kubelet[55792]: E0605 10:59:27.878147   55792 client.go:90] '
               '"ListAndWatch ended unexpectedly for device plugin" err="rpc error: code = ResourceExhausted '
               'desc = grpc: received message larger than max (9052428 vs. 4194304)" '
               'resource="volcano.sh/vgpu-memory"')
#: Project-HAMi/volcano-vgpu-device-plugin#99's (klog only).
VOLCANO_99 = ('E0116 16:52:03.819472  175650 client.go:88] '
              '"ListAndWatch ended unexpectedly for device plugin" err="rpc error: code = ResourceExhausted '
              'desc = grpc: received message larger than max '
              '(23264648 vs. 4194304)" resource="volcano.sh/vgpu-memory"')
#: kubernetes/kubernetes#127049's.
K8S_127049 = ('"listAndWatch ended unexpectedly for device plugin" err="rpc error: code = ResourceExhausted '
              'desc = grpc: received message larger than max (14958030 vs. 4194304)" '
              'resource="foo.com/gpu-mem"')
#: #134's registration line before the refusal.
REGISTERED = ('Jun 05 10:59:27 cn-linux-005 kubelet[55792]: I0605 10:59:27.803910   55792 server.go:157] '
              '"Got registration request from device plugin with resource" '
              'resourceName="volcano.sh/vgpu-memory"')
#: A restarted plugin's old stream, in the kubelet's older form.
RESTARTED = ("E0609 17:29:07.793600   10110 endpoint.go:106] listAndWatch ended unexpectedly for device "
             "plugin nvidia.com/gpu with error rpc error: code = Unavailable desc = transport is closing")


def _node(component: str, journal: str) -> list[dict[str, Any]]:
    return [{"kind": "pod-state", "component": component, "state": "Running", "restarts": 0},
            {"kind": "node-cmd", "name": "journal-kubelet.txt", "text": journal + "\n"}]


def test_a_refused_device_list_is_the_serving_plugin_s() -> None:
    for i, (component, journal) in enumerate((("volcano-device-plugin", f"{REGISTERED}\n{VOLCANO_134}"),
                                              ("volcano-device-plugin", VOLCANO_99),
                                              ("device-plugin", K8S_127049))):
        case = synthetic_case(f"x-stream-{i}", _node(component, journal), healthy=False)
        assert top_pair(case) == (component, "error_resource_exhausted"), journal


def test_a_restart_or_a_new_registration_is_no_refusal() -> None:
    assert refused_streams([RESTARTED]) == {}
    assert refused_streams([VOLCANO_134, REGISTERED]) == {}
    assert refused_streams([REGISTERED, VOLCANO_134]) == {"volcano.sh/vgpu-memory": 1}
    case = synthetic_case("x-stream-restart", _node("device-plugin", RESTARTED))
    assert top_pair(case) is None
