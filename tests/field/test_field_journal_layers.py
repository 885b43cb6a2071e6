"""The kubelet's journal names the layer below it (issue 20): a node that stopped posting
its status because the container runtime does not serve the CRI API, or because k3s could
not render containerd's config, is the runtime's failure, not the kubelet's."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import top_pair

from gpunode.catalog import load_catalog

STOPPED = {"kind": "node-condition", "type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
           "message": "Kubelet stopped posting node status."}


def _case(journal: str) -> Case:
    raw: dict[str, Any] = {
        "id": "x-journal-layers", "source": "https://example.org/x", "title": "t", "platform": "generic",
        "evidence": [STOPPED, {"kind": "node-cmd", "name": "journal-kubelet.txt", "text": journal}],
        "expect": {"healthy": False}}
    return msgspec.convert(raw, Case)


def test_a_runtime_that_does_not_serve_cri_v1_is_the_runtime_s_configuration() -> None:
    # NVIDIA/nvidia-container-toolkit#410: containerd's config disabled its CRI plugin.
    journal = ('Mar 15 10:36:59 gpu-wk-01 kubelet[3268247]: E0315 10:36:59.697373 3268247 run.go:74] '
               '"command failed" err="failed to run Kubelet: validate service connection: CRI v1 runtime API '
               'is not implemented for endpoint \\"unix:///run/containerd/containerd.sock\\": rpc error: '
               'code = Unimplemented desc = unknown service runtime.v1.RuntimeService"\n')
    assert top_pair(_case(journal)) == ("container-runtime", "error_config_invalid")


def test_k3s_failing_to_render_containerd_s_config_is_the_runtime_s() -> None:
    # k3s-io/k3s#8754: the nvidia runtime template of a k3s upgrade.
    journal = ('Nov 01 10:03:02 docker2 k3s[1314]: time="2023-11-01T10:03:02+01:00" level=fatal '
               'msg="template: compiled_template:119:21: executing \\"compiled_template\\" at '
               '<.SystemdCgroup>: can\'t evaluate field SystemdCgroup in type '
               'templates.ContainerdRuntimeConfig"\n')
    assert top_pair(_case(journal)) == ("container-runtime", "error_unclassified")


def test_a_runtime_socket_that_is_absent_names_the_runtime() -> None:
    line = "dial unix /run/containerd/containerd.sock: connect: no such file or directory"
    assert load_catalog().named_in(line) == "container-runtime"
    assert load_catalog().named_in("open /run/containerd-sock-backup: no such file or directory") is None


#: bottlerocket-os/bottlerocket#4250: the host-run plugin restarted as the kubelet created its
#: socket, and its ListAndWatch stream broke; the node never advertised nvidia.com/gpu.
_LIST_AND_WATCH = (
    'Oct 17 12:05:33 ip-10-0-1-2.ec2.internal kubelet[1655]: I1017 12:05:33.309607    1655 server.go:144] '
    '"Got registration request from device plugin with resource" resourceName="nvidia.com/gpu"\n'
    'Oct 17 12:05:33 ip-10-0-1-2.ec2.internal kubelet[1655]: E1017 12:05:33.335816    1655 client.go:90] '
    '"ListAndWatch ended unexpectedly for device plugin" err="rpc error: code = Unavailable desc = error '
    'reading from server: EOF" resource="nvidia.com/gpu"\n'
    'Oct 17 12:05:33 ip-10-0-1-2.ec2.internal kubelet[1655]: I1017 12:05:33.734727    1655 '
    'kubelet_node_status.go:76] "Successfully registered node" node="ip-10-0-1-2.ec2.internal"\n')


def _host_plugin_case(capacity: dict[str, str], journal: str | None) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "node-info", "fields": {"osImage": "Bottlerocket OS 1.25.0 (aws-k8s-1.30-nvidia)"}},
        {"kind": "node-capacity", "resources": capacity}]
    if journal is not None:
        evidence.append({"kind": "node-cmd", "name": "journal-kubelet.txt", "text": journal})
    raw: dict[str, Any] = {
        "id": "x-host-plugin", "source": "https://example.org/x", "title": "t", "platform": "eks",
        "cluster": {"driver_mode": "host", "components": [], "gpu_node": {"gpus": 1}},
        "evidence": evidence, "expect": {"healthy": False}}
    return msgspec.convert(raw, Case)


def test_a_host_plugin_whose_gpus_never_reach_the_node_is_read_in_the_kubelet_s_journal() -> None:
    case = _host_plugin_case({"nvidia.com/gpu": "0"}, _LIST_AND_WATCH)
    assert top_pair(case) == ("device-plugin", "device_plugin_registration_failed")


def test_a_host_plugin_node_silent_about_plugins_and_without_the_resource_stays_healthy() -> None:
    # a source that leaves the GPU resource out is no failure of the plugin
    assert top_pair(_host_plugin_case({}, None)) is None


def test_a_kubelet_that_goes_on_after_failing_to_read_its_checkpoint_is_degraded() -> None:
    # kubernetes/kubernetes#102882: the device manager of a 1.20 kubelet cannot read the
    # checkpoint a 1.19 kubelet wrote, and says it goes on with stale allocations
    line = ('Jun 15 07:31:49 gpu-wk-01 kubelet[4852]: W0615 07:31:49.744770    4852 manager.go:244] Continue '
            'after failing to read checkpoint file. Device allocation info may NOT be up-to-date. Err: json: '
            'cannot unmarshal array into Go struct field PodDevicesEntry.Data.PodDeviceEntries.DeviceIDs of '
            'type checkpoint.DevicesPerNUMA\n')
    raw: dict[str, Any] = {
        "id": "x-kubelet-went-on", "source": "https://example.org/x", "title": "t", "platform": "generic",
        "evidence": [{"kind": "node-cmd", "name": "journal-kubelet.txt", "text": line}],
        "expect": {"healthy": False}}
    assert top_pair(msgspec.convert(raw, Case)) == ("kubelet", "error_config_invalid")
    said = {**raw, "evidence": [{"kind": "node-cmd", "name": "journal-kubelet.txt",
                                 "text": line.replace("Continue after failing", "Read")}]}
    assert top_pair(msgspec.convert(said, Case)) is None
