"""The SR-IOV network plugin's own errors, relayed by Docker from its remote network driver.

Docker calls a network plugin over its remote driver protocol and reports the plugin's error
as the method and the plugin's own text ("NetworkDriver.CreateNetwork: <Err>", moby
pkg/plugins/client.go: the service method, then the error the plugin returned). Mellanox's
SR-IOV network plugin (docker-sriov-plugin, ``docker network create -d sriov -o
netdevice=<PF>``) answers with a fixed set of errors (driver/driver.go, sriov.go,
sriov_helpers.go, dualport_sriov.go, dualport_sriov_helpers.go), read here as a set, each by
the layer it names:

* "SRIOV is disabled [ <pf> ]." (the PF's port has no VF netdevice at all) and "No vfs found
  for <netdev>": the PF's VFs were never created or probed, the RDMA link's
  ``sriov_vfs_missing``.
* "Fail to enable sriov: device [<name> ]not found" (no PCI device under
  /sys/class/net/<name>: a bond, a VLAN or a typo named as the PF), the options the network
  was created with ("valid modes are: passthrough and sriov", "sriov mode requires
  netdevice", "passthrough mode requires netdevice", "Invalid vlan id given", "vlan id out of
  range", "Invalid roceHopLimit", "Valid range of rocehoplimit is", "Network gateway config
  miss."): the network's configuration, the SR-IOV plugin's ``error_config_invalid``.
* "Fail to find physical port" and "fail to build port netdevice map" (the plugin maps the
  netdevice to its IB port with the ibdev2netdev tool it runs; no mapping came back): the
  plugin's own tool, its ``error_not_found``.
* "All devices in use [ <network> ]." (every VF of the PF handed out): the plugin's
  ``error_resource_exhausted``.

Its other errors ("SRIOV is unsuppported on <pf>", "Fail to enable sriov: sriov unsupported":
a netdevice with no SR-IOV capability, which a wrong device and a NIC whose firmware has
SR-IOV off both give) are left to other readings.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpunode.checks.base import check, reads
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import line_finding
from gpunode.decisive import MAX_LINE, Decisive
from gpunode.model import Finding, Status
from gpunode.relazy import lazy_compile

#: Docker's relay of a remote network driver's error: the protocol's method, then its text.
_RELAYED = lazy_compile(r"\bNetworkDriver\.\w+\s?: (?P<error>.+)$")
#: The plugin's errors (module docstring), in order, with the component and cause each names.
_ERRORS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (lazy_compile(r"^SRIOV is disabled \[|^No vfs found for \S"), "rdma-links", "sriov_vfs_missing"),
    (lazy_compile(r"^Fail to enable sriov: device (?:\S+ )?not found\b"
                  r"|^valid modes are: passthrough and sriov|^(?:sriov|passthrough) mode requires netdevice"
                  r"|^Invalid vlan id given|^vlan id out of range"
                  r"|^Invalid roceHopLimit|^Valid range of rocehoplimit is|^Network gateway config miss"),
     "sriov-device-plugin", "error_config_invalid"),
    (lazy_compile(r"^Fail to find physical port|^fail to build port netdevice map"),
     "sriov-device-plugin", "error_not_found"),
    (lazy_compile(r"^All devices in use \["), "sriov-device-plugin", "error_resource_exhausted"),
)
_JOURNAL = "journal-runtime.txt"


def plugin_error(line: str) -> tuple[str, str] | None:
    """The component and cause the SR-IOV network plugin's error relayed on ``line`` names."""
    relayed = _RELAYED.search(line) if "NetworkDriver." in line else None
    if relayed is None:
        return None
    error = relayed["error"].strip()
    return next(((component, cause) for pattern, component, cause in _ERRORS if pattern.search(error)), None)


def _findings(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The runtime journal's last line relaying the plugin's error that names ``component``."""
    split = ctx.text_lines("cmd", _JOURNAL)
    if split is None or "NetworkDriver." not in split[1]:
        return
    lines = split[0]
    for index in range(len(lines) - 1, -1, -1):
        said = plugin_error(lines[index])
        if said is None:
            continue
        if said[0] == component:
            found = Decisive(index + 1, lines[index].strip()[:MAX_LINE], 1)
            where = f"{ctx.obs.path_of('cmd', _JOURNAL)}:{index + 1}"
            yield line_finding(ctx.kb, component, Status.FAILED, found, where, line_class=said[1],
                               verb="refuses the SR-IOV container network", standalone="true",
                               seen_in="container-runtime")
        return


@check("sriov-device-plugin", may_find=reads(f"cmd/{_JOURNAL}"))
def sriov_network_plugin_config(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The SR-IOV network plugin's error about its network's configuration or its own tool."""
    yield from _findings(ctx, component)


@check("rdma-links", may_find=reads(f"cmd/{_JOURNAL}"))
def sriov_network_plugin_vfs(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The SR-IOV network plugin's error that the PF has no VFs."""
    yield from _findings(ctx, component)
