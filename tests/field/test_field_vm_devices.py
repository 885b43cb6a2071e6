"""KubeVirt's launcher finding no device for a VM's GPUs ("failed to create GPU host-devices:
the number of GPU/s do not match the number of devices: ... Device: []") where the resource
it asked for is advertised by a plugin made for containers: that plugin hands no PCI or
mediated device, so it is the plugin at fault (kubevirt/kubevirt#14387: NVIDIA's device
plugin serving nvidia.com/gpu to a VM; Project-HAMi/HAMi#605: HAMi's). Where the VM plugin
(the sandbox device plugin) runs, the same words are KubeVirt's own configuration
(kubevirt/kubevirt#6459, NVIDIA/gpu-operator#556) and nothing is said; a launcher that
created its host device (NVIDIA/kubevirt-gpu-device-plugin#50) is healthy."""

from __future__ import annotations

from typing import Any

import pytest
from case import synthetic_case
from scoreboard import top_pair

# kubevirt/kubevirt#14387 (virt-handler's relay of the launcher's error, two GPUs)
_TWO_GPUS = ('{"component":"virt-launcher","kind":"","level":"error","msg":"Synchronizing the '
             'VirtualMachineInstance failed.","name":"vm-rg-dv-gpu","namespace":"default",'
             '"pos":"vm.go:2053",'
             '"reason":"server error. command SyncVMI failed: \\"failed to create GPU host-devices: '
             'the number of GPU/s do not match the number of devices:\\\\nGPU: [{gpu1 nvidia.com/gpu <nil> } '
             '{gpu2 nvidia.com/gpu <nil> }]\\\\nDevice: []\\"","timestamp":"2025-04-01T03:27:02.386077Z"}')
# NVIDIA/gpu-operator#556 (the launcher's own line)
_ONE_GPU = ('{"component":"virt-launcher","kind":"","level":"error","msg":"Failed to sync vmi","name":'
            '"win10-tesla-m6","namespace":"default","pos":"server.go:202","reason":"failed to create GPU '
            'host-devices: the number of GPU/s do not match the number of devices:\\nGPU: [{gpu1 '
            'nvidia.com/gpu <nil> }]\\nDevice: []","timestamp":"2023-07-21T15:42:58.783365Z"}')
# NVIDIA/kubevirt-gpu-device-plugin#50 (the host device was created)
_CREATED = ('{"component":"virt-launcher","level":"warning","msg":"MDEV_PCI_RESOURCE_NVIDIA_COM_GPU not '
            'set for resource nvidia.com/gpu","pos":"addresspool.go:50",'
            '"timestamp":"2022-06-28T10:05:14.307305Z"}\n'
            '{"component":"virt-launcher","level":"info","msg":"host-device created: 0000:01:00.0","pos":'
            '"hostdev.go:85","timestamp":"2022-06-28T10:05:14.307367Z"}\n')


def _vm(line: str, plugin: str | None) -> list[dict[str, Any]]:
    evidence: list[dict[str, Any]] = []
    if plugin is not None:
        evidence.append({"kind": "pod-state", "component": plugin, "state": "Running"})
    if plugin == "sandbox-device-plugin":  # it advertises the passed-through GPU by its device name
        evidence.append({"kind": "node-capacity", "resources": {"nvidia.com/TU104GL_TESLA_T4": "1"}})
    evidence += [
        {"kind": "workload", "name": "virt-launcher-vm-x7k2p", "namespace": "default", "container": "compute",
         "image": "quay.io/kubevirt/virt-launcher:v1.3.1", "resources": {"limits": {"nvidia.com/gpu": "1"}},
         "state": "Running"},
        {"kind": "log", "object": {"kind": "Pod", "name": "virt-launcher-vm-x7k2p", "namespace": "default"},
         "container": "compute", "text": line + "\n"},
    ]
    return evidence


@pytest.mark.parametrize(("line", "plugin", "blamed"), [
    (_TWO_GPUS, None, "device-plugin"),                  # NVIDIA's container plugin alone
    (_ONE_GPU, "hami-device-plugin", "hami-device-plugin"),  # HAMi, which replaces it, beside it
])
def test_container_plugin_hands_no_vm_device(line: str, plugin: str | None, blamed: str) -> None:
    case = synthetic_case("x-vm-no-device", _vm(line, plugin), healthy=False)
    assert top_pair(case) == (blamed, "error_not_found")


@pytest.mark.parametrize(("line", "plugin"), [
    (_ONE_GPU, "sandbox-device-plugin"),  # the VM plugin runs: KubeVirt's own configuration
    (_CREATED, None),                     # the device was created
])
def test_look_alikes_stay_healthy(line: str, plugin: str | None) -> None:
    case = synthetic_case("x-vm-fine", _vm(line, plugin))
    assert top_pair(case) is None
