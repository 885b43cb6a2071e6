"""The kubelet's plugin watcher failing to register a socket under plugins_registry/ that names a
CSI driver, in each step its journal names (pluginmanager operation_generator.go: 'RegisterPlugin
error -- ' then 'dial failed', 'failed to get plugin info using RPC GetInfo' or 'no handler
registered for plugin type: <type>', 'at socket <path>'): the CSI node plugin did not register
(csi-node, csi_registration_failed). A DRA or other plugin's socket, and the kubelet's line for
a plugin it registered, are not read so.

Sources: kubernetes/kubernetes pkg/kubelet/pluginmanager/operationexecutor/operation_generator.go
(the messages), https://kubernetes-csi.github.io/docs/node-driver-registrar.html (the registration
socket under plugins_registry/, the driver's own socket under plugins/<driver>/),
https://github.com/kubernetes-sigs/vsphere-csi-driver/issues/220 (the driver's csi.sock put under
plugins_registry/, 'unknown service pluginregistration.Registration')."""

from __future__ import annotations

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

_HEAD = "May 14 19:50:28 gpu-wk-01 kubelet[5195]: E0514 19:50:28.985525    5195 goroutinemap.go:150] "

FAILED = {
    "getinfo": _HEAD + 'Operation for "/var/lib/kubelet/plugins_registry/ebs.csi.aws.com-reg.sock" failed. '
               'Error: "RegisterPlugin error -- failed to get plugin info using RPC GetInfo at socket '
               '/var/lib/kubelet/plugins_registry/ebs.csi.aws.com-reg.sock, err: rpc error: code = '
               'DeadlineExceeded desc = context deadline exceeded"',
    "dial": _HEAD + 'Error: "RegisterPlugin error -- dial failed at socket /var/lib/kubelet/plugins_registry/'
            'csi.vsphere.vmware.com/csi.sock, err: failed to dial socket"',
}

QUIET = {
    "registered": "May 14 19:50:29 gpu-wk-01 kubelet[5195]: I0514 19:50:29.1 5195 csi_plugin.go:100] "
                  "kubernetes.io/csi: Register new plugin with name: ebs.csi.aws.com at endpoint: "
                  "/var/lib/kubelet/plugins/ebs.csi.aws.com/csi.sock",
    "dra-socket": _HEAD + 'Error: "RegisterPlugin error -- failed to get plugin info using RPC GetInfo at '
                  'socket /var/lib/kubelet/plugins_registry/gpu.nvidia.com-reg.sock, err: EOF"',
}


def _kubelet(name: str, line: str, *, healthy: bool) -> Case:
    return synthetic_case(f"csi-watcher-{name}", [
        {"kind": "node-cmd", "name": "journal-kubelet.txt", "text": line + "\n"}], healthy=healthy)


@pytest.mark.parametrize("name", sorted(FAILED))
def test_a_csi_socket_the_watcher_fails_is_the_csi_registration(name: str) -> None:
    assert top_pair(_kubelet(name, FAILED[name], healthy=False)) == ("csi-node", "csi_registration_failed")


@pytest.mark.parametrize("name", sorted(QUIET))
def test_a_registered_plugin_or_another_socket_is_not(name: str) -> None:
    pair = top_pair(_kubelet(name, QUIET[name], healthy=True))
    assert pair is None or pair[0] != "csi-node", pair
