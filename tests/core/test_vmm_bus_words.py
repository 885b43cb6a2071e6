"""QEMU refusing a device_add for the bus it names ("Bus '%s' not found", "Bus '%s' does not
support hotplugging": include/qapi/qmp/qerror.h), as a VM-isolated runtime (Kata Containers'
shim over QMP) relays it when it hot-plugs a passed-through GPU: the VM's PCIe topology is the
runtime's configuration (machine type, pcie_root_port, hotplug_vfio_on_root_bus), so the line is
the container runtime's and its class a configuration error. A VFIO device named by its PCI
address stays the sandbox device plugin's; a line that only mentions a bus is no error."""

from __future__ import annotations

import pytest

from gpunode.catalog import load_catalog
from gpunode.checks.decisive import Text, workload_names
from gpunode.checks.named import runtime_own_error
from gpunode.decisive import severity
from gpunode.kb import load_kb

CATALOG = load_catalog()
KB = load_kb()

#: kata-containers/kata-containers#4211: pcie_root_port left commented out in the Kata config
ROOT_PORT = "ctr: QMP command failed: Bus 'rp1' not found: not found"
#: kata-containers/runtime#2410: q35's root bus takes no hotplug without root ports
ROOT_BUS = "Bus 'pcie.0' does not support hotplugging: unknown"
#: the same wrapper as containerd's CRI relays it on a sandbox that cannot start
WRAPPED = ("Failed to create pod sandbox: rpc error: code = Unknown desc = failed to create shim task: "
           "QMP command failed: Bus 'pcie.1' does not support hotplugging: unknown")


def _names(line: str) -> str | None:
    return workload_names(CATALOG, Text("event pod ml/kata-0 reason=Failed count=1", [line], "cannot start",
                                        numbered=False, reason="Failed"), line)


@pytest.mark.parametrize("line", [ROOT_PORT, ROOT_BUS, WRAPPED])
def test_a_vm_bus_refusing_the_device_is_the_runtime_s_configuration(line: str) -> None:
    assert runtime_own_error(line)
    assert severity(line) >= 1
    assert _names(line) == "container-runtime"
    assert KB.class_of(line) == "error_config_invalid"


def test_a_vfio_device_named_by_address_stays_the_plugin_s() -> None:
    # kubevirt-gpu-device-plugin#147: the device the plugin handed over, already attached elsewhere
    line = "QMP command failed: vfio 0000:65:00.0: device is already attached"
    assert _names(line) == "sandbox-device-plugin"


@pytest.mark.parametrize(
    "line",
    [
        "Bus 'pcie.0' supports hotplugging: yes",
        "added pcie-root-port rp1 on bus 'pcie.0'",
        "Bus 001 Device 002: ID 8087:0024 Intel Corp. Integrated Rate Matching Hub",
    ],
)
def test_a_line_that_only_names_a_bus_is_no_error(line: str) -> None:
    assert not runtime_own_error(line)
    assert severity(line) == 0
