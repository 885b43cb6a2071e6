"""States that pasted text shows without any error word: a port or link that is down, an
extended resource advertised at zero, a node's capacity without one, the CRI plugin
disabled in a containerd config, GPU Operator deploy labels with no value, NFD PCI labels
without the vendor label; and the scheduling facts and configuration keys a person reads in
``kubectl describe``/``get`` output and config files: a taint, a DaemonSet that wants no node,
a pod row stuck starting, a deploy label set to false, a label value the API refuses, a device
count asked above what is available, containerd's default runtime or a miscased key, pause
images that differ between kubelet and runtime, the toolkit's CONTAINERD_CONFIG on a file
k3s/RKE2 regenerate, a fabric registration that never completed.

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

from gpunode.relazy import lazy_compile


@dataclass(frozen=True)
class StateLine:
    """A line (1-based ``line_no``) that shows a failed state, and the class it falls in
    (None: read the line's own words for its class)."""

    line_no: int
    line: str
    line_class: str | None = None


#: ibstat's port fields (``State: Down``, ``Physical state: Polling``) in a state that carries
#: no traffic: Initializing/Armed wait for a subnet manager, Polling/Disabled have no link.
_IBSTAT = lazy_compile(
    r"^\s*(?:State|Physical state):\s*(?:Down|Polling|Disabled|Initializing|Init|Armed|Sleep|"
    r"LinkErrorRecovery|PortConfigurationTraining)\s*$")
#: ibdev2netdev: ``mlx5_3 port 1 ==> net1 (Down)``.
_IBDEV2NETDEV = lazy_compile(r"^\s*\S+ port \d+ ==> \S+ \(Down\)\s*$")
#: ``nvidia-smi nvlink -s``: ``Link 3: <inactive>`` (an active link prints its speed).
_NVLINK = lazy_compile(r"^\s*Link \d+: <inactive>\s*$")
#: An extended resource (a domain and a name) advertised at zero: ``"rdma/hca": "0"``,
#: ``nvidia.com/gpu:  0`` (describe's Capacity/Allocatable, the node's JSON), or a node
#: field's path set to zero (``allocatable.nvidia.com/gpu = 0``: the path says it is a
#: resource, so ``=`` is read there and not after a bare name, which a label uses).
#: A resource's name has no dot but in a MIG profile (``mig-1g.10gb``); a label's name most
#: often has one (``cuda.runtime.minor: "0"`` is a label, not a resource).
_RESOURCE_ZERO = lazy_compile(
    r'^\s*"?(?:(?P<path>(?:status\.)?(?:allocatable|capacity)\.))?'
    r'[a-z0-9][a-z0-9.-]{0,100}/(?:[A-Za-z0-9_-]{1,100}|mig-\d{1,2}g\.\d{1,4}gb)"?'
    r'\s*(?(path)[:=]|:)\s*"?0"?,?\s*$')
#: describe's resource block heads and its entries (``  cpu:  32``).
_RESOURCE_HEAD = lazy_compile(r"^\s*(?:Capacity|Allocatable):\s*$")
_RESOURCE_ENTRY = lazy_compile(r"^\s+(?P<name>[A-Za-z0-9_./-]{1,200}):\s+\S{1,40}\s*$")
#: containerd's ``disabled_plugins`` listing the CRI plugin: the kubelet has no runtime.
_CRI_DISABLED = lazy_compile(r'^\s*disabled_plugins\s*=\s*\[[^\]]{0,400}"(?:io\.containerd\.grpc\.v1\.)?cri"')
#: A GPU Operator deploy label with no value (it reads "true" or "false").
_DEPLOY_EMPTY = lazy_compile(r'nvidia\.com/gpu\.deploy\.[\w.-]{1,60}(?:: ""|: \'\'|=(?:,|\s|$))')
#: NFD's PCI labels: ``pci-<class>_<vendor>[_<device>]`` or ``pci-<vendor>``.
_NFD_PCI = lazy_compile(r"feature\.node\.kubernetes\.io/pci-(?P<fields>[0-9a-f_]{1,40})\.present")

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


# --- scheduling facts: taints, DaemonSet counts, pod rows, label values ---

#: A Kubernetes qualified name (a label's or a taint's key): an optional DNS prefix and ``/``.
_KEY = r"(?:[a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?/)?[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
#: A taint as ``kubectl describe node`` (``Taints:`` and its continuation lines), ``kubectl
#: taint`` and the cloud consoles print it: ``key[=value]:Effect``, alone on its line.
#: PreferNoSchedule keeps no pod away, so it is not read.
_TAINT = lazy_compile(
    rf"^\s*(?:Taints:\s+)?(?:-\s+)?{_KEY}(?:=[A-Za-z0-9_.-]{{0,63}})?:(?:NoSchedule|NoExecute)\s*$")
#: A GPU (or other extended) resource the node advertises above zero (describe's entry, JSON).
_RESOURCE_ADVERTISED = lazy_compile(
    r'^\s*"?[a-z0-9][a-z0-9.-]{0,100}/[A-Za-z0-9_.-]{1,100}"?\s*:\s*"?[1-9]\d*"?,?\s*$')


def _taint(lines: Sequence[str]) -> StateLine | None:
    """A taint that keeps pods without a matching toleration off the node.

    Given alone (a node's taints pasted where a DaemonSet has no pod there), the taint is the
    scheduling fact to check first: its class's next steps compare it with the DaemonSet's
    tolerations. Where the same text shows the node advertising an extended resource above
    zero, the device plugin's pod runs there despite the taint (it tolerates it), so the taint
    is read as the node's normal dedication, not as the failure."""
    if any(_RESOURCE_ADVERTISED.match(line) for line in lines):
        return None
    for index, line in enumerate(lines):
        if _TAINT.match(line):
            return StateLine(index + 1, line.strip(), "taint_not_tolerated")
    return None


#: ``kubectl describe daemonset``'s count, ``kubectl get daemonset``'s row (NAME, DESIRED,
#: CURRENT, READY, UP-TO-DATE, AVAILABLE, NODE SELECTOR, AGE; a NAMESPACE column first with
#: ``-A``) and its DESIRED column quoted with its value.
_DS_DESCRIBED = lazy_compile(r"^\s*Desired Number of Nodes Scheduled:\s*(?P<desired>\d+)\s*$")
_DS_ROW = lazy_compile(r"^\s*(?:[a-z0-9][-a-z0-9.]{0,252}\s+){1,2}(?P<desired>\d+)(?:\s+\d+){4}\s+\S+\s+"
                       r"\d+[smhdy](?:\d+[smhd])?(?:\s|$)")
_DS_COLUMN = lazy_compile(r"\bDESIRED\s*[:=]?\s*(?P<desired>\d+)\b")


def _daemonset_places_none(lines: Sequence[str]) -> StateLine | None:
    """A DaemonSet that wants no pod on any node: no node passes its selector, affinity and
    taints. Read only where no DaemonSet in the text wants one: in a listing where others
    place pods, a zero is an optional operand with no node for it (a MIG manager on a
    cluster without MIG), not a failure. Class ``pod_missing``: its next steps describe the
    DaemonSet (selector, tolerations) and the node."""
    first: int | None = None
    for index, line in enumerate(lines):
        found = _DS_DESCRIBED.match(line) or _DS_ROW.match(line) or _DS_COLUMN.search(line)
        if found is None:
            continue
        if int(found["desired"]) > 0:
            return None
        first = index if first is None else first
    return None if first is None else StateLine(first + 1, lines[first].strip(), "pod_missing")


#: ``kubectl get pods`` row (NAME, READY, STATUS, RESTARTS, AGE; NAMESPACE first with ``-A``)
#: whose pod has not started its containers; RESTARTS may carry ``(5m ago)``.
_POD_ROW = lazy_compile(r"^\s*(?:[a-z0-9][-a-z0-9.]{0,252}\s+){1,2}\d+/\d+\s+"
                        r"(?P<status>Init:\d+/\d+|Pending|ContainerCreating|PodInitializing)\s+\d+"
                        r"(?:\s+\([^)]{1,20}\))?\s+(?P<age>(?:\d+[smhdy]){1,2})(?:\s|$)")
_AGE_PART = lazy_compile(r"(\d+)([smhdy])")
_AGE_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "y": 31536000}
#: A pod still starting after this long is stuck, not starting (an image pull, a validation
#: wait of the GPU Operator's init containers take a minute or two).
STUCK_AFTER_S = 300
_STUCK_CLASS = {"Pending": "pod_pending", "ContainerCreating": "container_create_failed"}


def _pod_stuck_starting(lines: Sequence[str]) -> StateLine | None:
    """A pod row still in an init container, Pending or creating its containers after
    ``STUCK_AFTER_S``: the class of the state (an init container waits on a lower layer, a
    pending pod is unscheduled, a creation fails in the runtime) and its next steps."""
    for index, line in enumerate(lines):
        found = _POD_ROW.match(line)
        if found is None:
            continue
        age = sum(int(n) * _AGE_SECONDS[unit] for n, unit in _AGE_PART.findall(found["age"]))
        if age >= STUCK_AFTER_S:
            status = found["status"]
            return StateLine(index + 1, line.strip(), _STUCK_CLASS.get(status, "init_blocked"))
    return None


#: A device count that asked for more than there was (``Requested: 4, Available: 0``).
_REQUESTED = lazy_compile(
    r"\bRequested:?\s*(?P<req>\d+)\s*[,;]?\s*Available:?\s*(?P<avail>\d+)", re.IGNORECASE)


def _requested_over_available(lines: Sequence[str]) -> StateLine | None:
    for index, line in enumerate(lines):
        found = _REQUESTED.search(line)
        if found is not None and int(found["avail"]) < int(found["req"]):
            return StateLine(index + 1, line.strip(), "error_resource_exhausted")
    return None


#: A GPU Operator deploy label set to false: the operand's DaemonSet selects ``=true``.
_DEPLOY_OFF = lazy_compile(r'nvidia\.com/gpu\.deploy\.[\w.-]{1,60}(?:=false\b|:\s*["\']?false\b)')


def _deploy_label_off(lines: Sequence[str]) -> StateLine | None:
    """An operand turned off on the node by its deploy label: where it is expected, that label
    is why its DaemonSet places no pod (``selector_label_missing``: the label it selects is
    not there as it needs it)."""
    for index, line in enumerate(lines):
        if _DEPLOY_OFF.search(line):
            return StateLine(index + 1, line.strip(), "selector_label_missing")
    return None


#: A label assignment as ``--show-labels``, describe's ``Labels:`` and ``--node-labels`` print
#: it (``key=value``, comma-separated): only keys with a DNS prefix, so that shell variables
#: and flags (``NVIDIA_VISIBLE_DEVICES=all``) are not read as labels.
_LABEL = lazy_compile(r"(?:^|[\s,{])(?P<key>[a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?/"
                      r"[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)=(?P<value>[^,\s]{0,200})")
#: What the API server accepts as a label's value (63 characters at most).
_LABEL_VALUE = lazy_compile(r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?")
#: A taint's or toleration's ``value:Effect`` is not a label's value.
_EFFECT_TAIL = lazy_compile(r":(?:NoSchedule|PreferNoSchedule|NoExecute)$")


def _label_value_invalid(lines: Sequence[str]) -> StateLine | None:
    """A label value the API server refuses (parentheses, spaces turned into other
    characters, more than 63 characters): the labeller's node update fails, so the node
    keeps none of the labels it was to get in that update."""
    for index, line in enumerate(lines):
        for found in _LABEL.finditer(line):
            value = found["value"].rstrip("\"'`]}.")
            if not _EFFECT_TAIL.search(value) and not _LABEL_VALUE.fullmatch(value):
                return StateLine(index + 1, line.strip(), _CONFIG)
    return None


# --- configuration keys that set a stack setting ---

#: containerd's CRI default runtime given by name: a name that is not NVIDIA's.
_DEFAULT_RUNTIME = lazy_compile(r"""^\s*default_runtime_name\s*=\s*["'](?P<name>[\w.-]{1,60})["']\s*$""")


def _default_runtime_not_nvidia(lines: Sequence[str]) -> StateLine | None:
    """containerd's default runtime set to another runtime (runc, crun): a GPU pod that asks
    for no RuntimeClass starts without the NVIDIA hook. Class ``nvidia_not_default_runtime``,
    whose fix names both ways out (make nvidia the default, or ask for its RuntimeClass)."""
    for index, line in enumerate(lines):
        found = _DEFAULT_RUNTIME.match(line)
        if found is not None and "nvidia" not in found["name"].lower():
            return StateLine(index + 1, line.strip(), "nvidia_not_default_runtime")
    return None


#: Keys of containerd's CRI config and runc options as containerd reads them. TOML keys are
#: case-sensitive and containerd ignores a key it does not know, so ``binaryName`` is a
#: setting that silently does nothing. Keys spelt in more than one case in containerd's
#: tables (``root``/``Root``) are left out.
_CONTAINERD_KEYS = frozenset({
    "BinaryName", "SystemdCgroup", "NoPivotRoot", "NoNewKeyring", "ShimCgroup", "IoUid", "IoGid",
    "CriuImagePath", "CriuWorkPath", "default_runtime_name", "runtime_type", "sandbox_image",
    "snapshotter", "privileged_without_host_devices", "enable_cdi", "cdi_spec_dirs",
    "disabled_plugins", "config_path",
})
_FOLDED_KEYS = {k.lower(): k for k in _CONTAINERD_KEYS}
_TOML_KEY = lazy_compile(r"^\s*(?P<key>[A-Za-z_]{2,40})\s*=")


def _config_key_miscased(lines: Sequence[str]) -> StateLine | None:
    for index, line in enumerate(lines):
        key = found["key"] if (found := _TOML_KEY.match(line)) is not None else ""
        if key not in _CONTAINERD_KEYS and key.lower() in _FOLDED_KEYS:
            return StateLine(index + 1, line.strip(), _CONFIG)
    return None


#: k3s and RKE2 write their containerd config from a template at every start; the file they
#: write (``config.toml``, ``config-v3.toml`` for containerd 2) is not the one to edit.
_GENERATED_CONFIG = lazy_compile(
    r"/var/lib/rancher/(?:k3s|rke2)/agent/etc/containerd/config(?:-v3)?\.toml(?![.\w])")


def _toolkit_config_regenerated(lines: Sequence[str]) -> StateLine | None:
    """The toolkit's ``CONTAINERD_CONFIG`` (its env in the ClusterPolicy or chart values, on
    its line, or as ``name:``/``value:`` lines) set to the config k3s/RKE2 regenerate: the
    nvidia runtime it adds is lost when the distribution restarts containerd."""
    for index, line in enumerate(lines):
        if "CONTAINERD_CONFIG" not in line:
            continue
        for offset, text in enumerate(lines[index:index + 3]):
            if _GENERATED_CONFIG.search(text):
                return StateLine(index + offset + 1, text.strip(), "containerd_config_wrong_path")
    return None


#: The pause image as the kubelet is told it (its flag) and as the runtime uses it (containerd's
#: ``sandbox_image``, CRI-O's ``pause_image``).
_KUBELET_PAUSE = lazy_compile(r"--pod-infra-container-image[= ](?P<image>[\w./:@-]{1,300})")
_RUNTIME_PAUSE = lazy_compile(
    r"""^\s*(?:sandbox_image|pause_image)\s*=\s*["'](?P<image>[\w./:@-]{1,300})["']""")


def _pause_images_differ(lines: Sequence[str]) -> StateLine | None:
    """The kubelet's pause image differs from the one the runtime starts sandboxes with: the
    kubelet's image garbage collection spares only its own, so the runtime's is removed when
    the disk fills and every new pod then needs a registry to start (an air-gapped node
    cannot). Only read where the text gives both."""
    kubelet = runtime = None
    for index, line in enumerate(lines):
        if kubelet is None and (found := _KUBELET_PAUSE.search(line)) is not None:
            kubelet = found["image"]
        if runtime is None and (found := _RUNTIME_PAUSE.match(line)) is not None:
            runtime = index, found["image"]
    if kubelet is None or runtime is None or runtime[1] == kubelet:
        return None
    return StateLine(runtime[0] + 1, lines[runtime[0]].strip(), _CONFIG)


#: ``nvidia-smi -q``'s Fabric state of a GPU on an NVSwitch system that never completed its
#: fabric registration (Fabric Manager absent or not done): ``State : In Progress``.
_FABRIC_STATE = lazy_compile(r"^\s*State\s{2,}: (?:In Progress|Not Started)\s*$")


def _fabric_not_done(lines: Sequence[str]) -> StateLine | None:
    for index, line in enumerate(lines):
        if _FABRIC_STATE.match(line):
            return StateLine(index + 1, line.strip(), "fabric_manager_not_running")
    return None


#: A row of nvidia-smi's GPU table (``| ... | ... |``) with a field printed as ``ERR!``: the value
#: its NVML query could not read from the GPU ("|ERR!  ERR! ERR!  1W / N/A | ... |", a fan, a
#: temperature or the power draw: NVIDIA/open-gpu-kernel-modules#1193, Azure/azhpc-diagnostics#77).
#: A healthy row prints numbers or N/A there.
_SMI_ERR_ROW = lazy_compile(r"^\s*\|(?=[^\n]*(?<![^\s|])ERR!(?![^\s|]))[^\n]*\|\s*$")


def _smi_field_unread(lines: Sequence[str]) -> StateLine | None:
    for index, line in enumerate(lines):
        if _SMI_ERR_ROW.match(line):
            return StateLine(index + 1, line.strip(), "error_device")
    return None


_READERS: tuple[Callable[[Sequence[str]], StateLine | None], ...] = (
    _cri_disabled, _deploy_label_empty, _nfd_vendor_label_missing, _port_down, _resource_zero,
    _capacity_without_extended, _requested_over_available, _fabric_not_done,
    _default_runtime_not_nvidia, _config_key_miscased, _pause_images_differ, _toolkit_config_regenerated,
    _deploy_label_off, _label_value_invalid, _daemonset_places_none, _pod_stuck_starting, _taint,
    _smi_field_unread,
)


def state_line(lines: Sequence[str]) -> StateLine | None:
    """The first line, by the readers above in order, that shows a failed state."""
    for reader in _READERS:
        found = reader(lines)
        if found is not None:
            return found
    return None
