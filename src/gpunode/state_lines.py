"""States that pasted text shows without any error word: a port or link that is down, an
extended resource advertised at zero, a node's capacity without one, the CRI plugin
disabled in a containerd config, GPU Operator deploy labels with no value, NFD PCI labels
without the vendor label.

``gpunode explain`` answers such text with the line that shows the state (never silence);
what a value means is read from the format that prints it (ibstat, ibdev2netdev,
``nvidia-smi nvlink -s``, ``kubectl describe node``, a containerd config, node labels), so
a healthy value of the same field (``State: Active``, ``(Up)``, ``25.781 GB/s``,
``nvidia.com/gpu: 8``, ``disabled_plugins = []``, ``"true"``) gives nothing. ``diagnose``
reads the same facts from the objects themselves, not from these lines.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class StateLine:
    """A line (1-based ``line_no``) that shows a failed state, and the class it falls in
    (None: read the line's own words for its class)."""

    line_no: int
    line: str
    line_class: str | None = None


#: ibstat's port fields (``State: Down``, ``Physical state: Polling``) in a state that carries
#: no traffic: Initializing/Armed wait for a subnet manager, Polling/Disabled have no link.
_IBSTAT = re.compile(
    r"^\s*(?:State|Physical state):\s*(?:Down|Polling|Disabled|Initializing|Init|Armed|Sleep|"
    r"LinkErrorRecovery|PortConfigurationTraining)\s*$")
#: ibdev2netdev: ``mlx5_3 port 1 ==> net1 (Down)``.
_IBDEV2NETDEV = re.compile(r"^\s*\S+ port \d+ ==> \S+ \(Down\)\s*$")
#: ``nvidia-smi nvlink -s``: ``Link 3: <inactive>`` (an active link prints its speed).
_NVLINK = re.compile(r"^\s*Link \d+: <inactive>\s*$")
#: An extended resource (a domain and a name) advertised at zero: ``"rdma/hca": "0"``,
#: ``nvidia.com/gpu:  0`` (describe's Capacity/Allocatable, the node's JSON).
#: A resource's name has no dot but in a MIG profile (``mig-1g.10gb``); a label's name most
#: often has one (``cuda.runtime.minor: "0"`` is a label, not a resource).
_RESOURCE_ZERO = re.compile(
    r'^\s*"?[a-z0-9][a-z0-9.-]{0,100}/(?:[A-Za-z0-9_-]{1,100}|mig-\d{1,2}g\.\d{1,4}gb)"?\s*:\s*"?0"?,?\s*$')
#: describe's resource block heads and its entries (``  cpu:  32``).
_RESOURCE_HEAD = re.compile(r"^\s*(?:Capacity|Allocatable):\s*$")
_RESOURCE_ENTRY = re.compile(r"^\s+(?P<name>[A-Za-z0-9_./-]{1,200}):\s+\S{1,40}\s*$")
#: containerd's ``disabled_plugins`` listing the CRI plugin: the kubelet has no runtime.
_CRI_DISABLED = re.compile(r'^\s*disabled_plugins\s*=\s*\[[^\]]{0,400}"(?:io\.containerd\.grpc\.v1\.)?cri"')
#: A GPU Operator deploy label with no value (it reads "true" or "false").
_DEPLOY_EMPTY = re.compile(r'nvidia\.com/gpu\.deploy\.[\w.-]{1,60}(?:: ""|: \'\'|=(?:,|\s|$))')
#: NFD's PCI labels: ``pci-<class>_<vendor>[_<device>]`` or ``pci-<vendor>``.
_NFD_PCI = re.compile(r"feature\.node\.kubernetes\.io/pci-(?P<fields>[0-9a-f_]{1,40})\.present")

_CONFIG = "error_config_invalid"


def _port_down(lines: Sequence[str]) -> StateLine | None:
    for index, line in enumerate(lines):
        if _IBSTAT.match(line) or _IBDEV2NETDEV.match(line) or _NVLINK.match(line):
            return StateLine(index + 1, line.strip())
    return None


def _resource_zero(lines: Sequence[str]) -> StateLine | None:
    for index, line in enumerate(lines):
        if _RESOURCE_ZERO.match(line):
            return StateLine(index + 1, line.strip())
    return None


def _capacity_without_extended(lines: Sequence[str]) -> StateLine | None:
    """A whole Capacity or Allocatable block that lists cpu and memory but no extended
    resource (``nvidia.com/gpu``): no device plugin registered one on this node."""
    for index, line in enumerate(lines):
        if not _RESOURCE_HEAD.match(line):
            continue
        names = []
        for entry in lines[index + 1:]:
            found = _RESOURCE_ENTRY.match(entry)
            if found is None:
                break
            names.append(found["name"])
        if {"cpu", "memory"} <= set(names) and not any("/" in name for name in names):
            return StateLine(index + 1, line.strip())
    return None


def _cri_disabled(lines: Sequence[str]) -> StateLine | None:
    for index, line in enumerate(lines):
        if _CRI_DISABLED.match(line):
            return StateLine(index + 1, line.strip(), _CONFIG)
    return None


def _deploy_label_empty(lines: Sequence[str]) -> StateLine | None:
    for index, line in enumerate(lines):
        if _DEPLOY_EMPTY.search(line):
            return StateLine(index + 1, line.strip(), _CONFIG)
    return None


def _nfd_vendor_label_missing(lines: Sequence[str]) -> StateLine | None:
    """NFD PCI labels naming NVIDIA (10de) among their fields, none of them a label the
    GPU Operator selects GPU nodes by: ``pci-10de`` or ``pci-<class>_10de`` (NFD's default
    class and vendor fields). With the device field added (``pci-10de_2237``) it finds none."""
    first: int | None = None
    for index, line in enumerate(lines):
        for found in _NFD_PCI.finditer(line):
            fields = found["fields"].split("_")
            if fields[-1] == "10de" and len(fields) <= 2:
                return None
            if first is None and "10de" in fields:
                first = index
    return None if first is None else StateLine(first + 1, lines[first].strip(), _CONFIG)


_READERS: tuple[Callable[[Sequence[str]], StateLine | None], ...] = (
    _cri_disabled, _deploy_label_empty, _nfd_vendor_label_missing, _port_down, _resource_zero,
    _capacity_without_extended,
)


def state_line(lines: Sequence[str]) -> StateLine | None:
    """The first line, by the readers above in order, that shows a failed state."""
    for reader in _READERS:
        found = reader(lines)
        if found is not None:
            return found
    return None
