"""The SR-IOV network plugin's own errors relayed by Docker (gpunode.checks.sriov_network_plugin):
read as the plugin's set, each by the layer it names (the PF without VFs: rdma-links'
sriov_vfs_missing; the network's options: the plugin's configuration; its port mapping tool:
not found; its VFs all handed out: exhausted).

Sources: Mellanox/docker-sriov-plugin's driver sources (driver/driver.go, sriov.go,
sriov_helpers.go, dualport_sriov.go, dualport_sriov_helpers.go: each error's text and the
check that returns it) and its README (the network's netdevice, mode and vlan options); moby's
pkg/plugins/client.go (a plugin's error relayed as its service method and text,
"NetworkDriver.CreateNetwork: <Err>"). Look-alikes: another network plugin's error relayed
the same way, the plugin's "SRIOV is unsuppported" (a wrong device or firmware with SR-IOV off
alike) and the runtime's normal lines stay silent."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

from gpunode.checks.sriov_network_plugin import plugin_error

_RELAY = "Error response from daemon: NetworkDriver.CreateNetwork: "


def _journal(case_id: str, text: str) -> Any:
    evidence = [{"kind": "node-cmd", "name": "journal-runtime.txt", "text": text + "\n"}]
    return synthetic_case(case_id, evidence, platform="docker")


def test_the_plugin_s_errors_by_the_layer_they_name() -> None:
    assert plugin_error(_RELAY + "SRIOV is disabled [ ens2f0 ].") == ("rdma-links", "sriov_vfs_missing")
    assert plugin_error(_RELAY + "No vfs found for ens2f0") == ("rdma-links", "sriov_vfs_missing")
    for text in ("Fail to enable sriov: device not found", "Fail to enable sriov: device bond0 not found",
                 "sriov mode requires netdevice", "vlan id out of range",
                 "valid modes are: passthrough and sriov"):
        assert plugin_error(_RELAY + text) == ("sriov-device-plugin", "error_config_invalid"), text
    assert plugin_error(_RELAY + "fail to build port netdevice map") == (
        "sriov-device-plugin", "error_not_found")
    assert plugin_error("NetworkDriver.CreateEndpoint: All devices in use [ 3f2a ].") == (
        "sriov-device-plugin", "error_resource_exhausted")


def test_other_plugins_and_shared_words_say_nothing() -> None:
    assert plugin_error(_RELAY + "SRIOV is unsuppported on ib0") is None
    assert plugin_error(_RELAY + "Fail to enable sriov: sriov unsupported") is None
    assert plugin_error(_RELAY + "network with name weave already exists") is None
    assert plugin_error("Fail to find physical port") is None  # not relayed by Docker


def test_the_journal_line_is_read_on_the_node() -> None:
    assert top_pair(_journal("x-sriov-vfs", _RELAY + "SRIOV is disabled [ ens2f0 ].")) == (
        "rdma-links", "sriov_vfs_missing")
    assert top_pair(_journal("x-sriov-port", _RELAY + "Fail to find physical port")) == (
        "sriov-device-plugin", "error_not_found")


def test_a_runtime_journal_without_the_plugin_s_errors_is_healthy() -> None:
    quiet = ('time="2024-05-02T10:01:12Z" level=info msg="Loading containers: done."\n'
             'time="2024-05-02T10:01:13Z" level=info msg="API listen on /run/docker.sock"')
    assert top_pair(_journal("x-sriov-quiet", quiet)) is None
