"""What a node's GPU evidence and GPU resources mean (pure; one place for every check).

*Is it a GPU node?* Only GPU evidence says so: ``nvidia.com/gpu*``/``nvidia.com/mig-*``
resources, NFD's PCI vendor 10de labels in any form NFD writes, the GPU Operator's
``nvidia.com/gpu.present``/``gpu.deploy.*`` labels, GFD's labels, a cloud's accelerator
label or GPU instance type (data/gpu_signals.toml: true before any GPU software ran), a
GPU-stack pod bound to the node, or GPU facts in its bundle folder. A folder with only a node-exporter
scrape is not evidence.

*How many GPUs?* Kubernetes counts what the device plugin advertises, which is not
always physical GPUs: MIG ``single`` advertises MIG instances as ``nvidia.com/gpu`` (and
GFD's ``nvidia.com/gpu.count`` counts them), MIG ``mixed`` advertises
``nvidia.com/mig-<profile>``, time-slicing and MPS multiply the count by
``replicas`` (or rename it ``nvidia.com/gpu.shared``), and a vGPU guest sees vGPUs.
:class:`GpuResources` reads the labels and capacity once and says which number
counts what, so checks compare like with like.

*Shared how many times?* GFD labels ``nvidia.com/gpu.replicas``; the device plugin
itself reads its config file (``version: v1``, ``sharing.timeSlicing``/``sharing.mps``
``resources[].replicas``) from a ConfigMap: the GPU Operator's
``spec.devicePlugin.config`` (``name``, ``default``), or the plugin chart's own
ConfigMap, one config per key, the node's ``nvidia.com/device-plugin.config`` label
choosing the key. :func:`plugin_sharing` reads such a config.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources as package_data
from operator import methodcaller
from typing import Any

import msgspec

from gpunode.datatoml import load_data_toml
from gpunode.errors import BundleError
from gpunode.relazy import lazy_compile

GPU = "nvidia.com/gpu"
SHARED = "nvidia.com/gpu.shared"
MIG_PREFIX = "nvidia.com/mig-"
GPU_STACK_COMPONENTS = frozenset(
    {
        "driver",
        "container-toolkit",
        "device-plugin",
        "gfd",
        "dcgm-exporter",
        "mig-manager",
        "validator",
        "fabric-manager",
        # the other ways to hand out GPUs, where their charts place them on GPU nodes only
        # (Volcano's plugin has no selector: it runs on every node)
        "dra-kubelet-plugin",
        "compute-domain-daemon",
        "hami-device-plugin",
        "gke-device-plugin",
    }
)
_GPU_FOLDER_FILES = frozenset(
    {
        "cmd/nvidia-smi-q.xml",
        "cmd/nvidia-smi.txt",
        "cmd/gpunode-probe.json",
        "metrics/dcgm-exporter.prom",
        "files/proc/driver/nvidia/version",
    }
)
_VALIDATIONS = "files/run/nvidia/validations/"
# feature.node.kubernetes.io/pci-<class>_<vendor>[_<device>...].<present|sriov.capable>
_NFD_PCI = lazy_compile(r"^feature\.node\.kubernetes\.io/pci-([0-9a-fA-F_]+)\.(?:present|sriov\.capable)$")
NVIDIA_PCI_VENDOR = "10de"


def is_gpu_folder_file(inner: str) -> bool:
    """A path inside ``nodes/<node>/`` that only a GPU node has."""
    return inner in _GPU_FOLDER_FILES or inner.startswith(_VALIDATIONS)


def nfd_nvidia_label(key: str) -> bool:
    """An NFD PCI label whose vendor field is NVIDIA's (10de), in any form NFD writes."""
    match = _NFD_PCI.match(key)
    return match is not None and NVIDIA_PCI_VENDOR in match.group(1).lower().split("_")


def gpu_evidence(
    labels: Mapping[str, str],
    resources: Mapping[str, str],
    stack_components: Iterable[str],
    folder_files: Iterable[str],
) -> list[str]:
    """Each piece of GPU evidence found, said plainly; empty when there is none."""
    return list(_evidence(labels, resources, stack_components, folder_files))


def has_gpu_evidence(
    labels: Mapping[str, str],
    resources: Mapping[str, str],
    stack_components: Iterable[str],
    folder_files: Iterable[str],
) -> bool:
    """Whether ``gpu_evidence`` finds any (it stops at the first piece)."""
    return next(_evidence(labels, resources, stack_components, folder_files), None) is not None


def _evidence(
    labels: Mapping[str, str],
    resources: Mapping[str, str],
    stack_components: Iterable[str],
    folder_files: Iterable[str],
) -> Iterator[str]:
    yield from (f"resource {k}" for k in sorted(resources) if k.startswith((GPU, MIG_PREFIX)))
    for key, value in sorted(labels.items()):
        if value != "true":
            continue
        if (
            nfd_nvidia_label(key)
            or key == "nvidia.com/gpu.present"
            or key.startswith("nvidia.com/gpu.deploy.")
        ):
            yield f"label {key}=true"
    if "nvidia.com/gpu.product" in labels:
        yield f"label nvidia.com/gpu.product={labels['nvidia.com/gpu.product']}"
    yield from cloud_gpu_evidence(labels)
    yield from (f"{c} pod on the node" for c in sorted(set(stack_components) & GPU_STACK_COMPONENTS))
    yield from (f"node folder {f}" for f in folder_files)


class CloudLabel(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A label a cloud puts on its GPU nodes (any value, or only ``value``)."""

    key: str
    cloud: str
    source: str
    value: str | None = None


class InstanceType(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Instance types that come with NVIDIA GPUs, as a regex (``unless``: look-alikes)."""

    pattern: str
    cloud: str
    source: str
    unless: str | None = None


class GpuSignals(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    label: tuple[CloudLabel, ...] = ()
    instance_type: tuple[InstanceType, ...] = ()


INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")


def parse_gpu_signals(text: str, origin: str = "gpu_signals.toml") -> GpuSignals:
    """Decode and validate the cloud GPU signals; errors name the file and the entry."""
    try:
        signals = msgspec.convert(load_data_toml(text), GpuSignals)
    except (tomllib.TOMLDecodeError, msgspec.ValidationError) as exc:
        raise BundleError(f"{origin}: invalid GPU signals: {exc}") from exc
    for entry in signals.instance_type:
        for pattern in (entry.pattern, entry.unless):
            try:
                re.compile(pattern or "")
            except re.error as exc:
                raise BundleError(f"{origin}: instance type {entry.pattern!r}: bad regex: {exc}") from exc
    return signals


@cache
def gpu_signals() -> GpuSignals:
    """The shipped signals (data/gpu_signals.toml), read on first use."""
    text = package_data.files("gpunode").joinpath("data/gpu_signals.toml").read_text("utf-8")
    return parse_gpu_signals(text)


def cloud_gpu_evidence(labels: Mapping[str, str]) -> Iterator[str]:
    """A cloud's word that the node has NVIDIA GPUs: its accelerator label or a GPU
    instance type (nothing here depends on GPU software having run on the node)."""
    signals = gpu_signals()
    for entry in signals.label:
        value = labels.get(entry.key)
        if value and (entry.value is None or value.lower() == entry.value):
            yield f"label {entry.key}={value} ({entry.cloud} GPU node)"
    kind = next((labels[key] for key in INSTANCE_TYPE_LABELS if labels.get(key)), "")
    if kind:
        rule = next((r for r in signals.instance_type if re.search(r.pattern, kind)
                     and not (r.unless and re.search(r.unless, kind))), None)
        if rule is not None:
            yield f"instance type {kind} ({rule.cloud} GPU instance)"


def gpu_node_absent_evidence(has_folder: bool) -> str:
    """What was looked for and not found, for a node that is not a GPU node."""
    folder = "its node folder holds no GPU facts" if has_folder else "no node folder"
    return (
        "no nvidia.com/gpu or nvidia.com/mig-* resource, no NFD pci-10de label, no "
        "nvidia.com/gpu.present, gpu.deploy.* or GFD label, no cloud accelerator label or GPU "
        "instance type, no GPU-stack pod on it, and "
        f"{folder} (nvidia-smi output, probe JSON, DCGM scrape, driver version)"
    )


def quantity(value: str | None) -> int:
    """A Kubernetes integer quantity or label; anything else counts as 0."""
    try:
        return int(value or 0)
    except ValueError:
        return 0


@dataclass(frozen=True)
class GpuResources:
    """How this node's device plugin and GFD count GPUs (from labels and capacity)."""

    mode: str  # "whole" | "mig-single" | "mig-mixed" | "shared"
    sharing: str  # "none" | "time-slicing" | "mps"
    replicas: int
    advertised: int  # units under nvidia.com/gpu, .shared and mig-* in the given table
    physical: int | None  # physical GPUs these numbers imply; None when they cannot say
    vgpu: bool

    @property
    def describe(self) -> str:
        """Mode in words, for evidence."""
        parts = [self.mode]
        if self.sharing != "none":
            parts.append(f"{self.sharing} x{self.replicas}")
        if self.vgpu:
            parts.append("vGPU guest")
        return ", ".join(parts)


PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"
_SHARING_KEYS = (("timeSlicing", "time-slicing"), ("mps", "mps"))


@dataclass(frozen=True)
class PluginSharing:
    """What a device-plugin config says about sharing ``nvidia.com/gpu``."""

    strategy: str  # "none" | "time-slicing" | "mps"
    replicas: int
    renamed: bool = False


NOT_SHARED = PluginSharing("none", 1)


def plugin_sharing(text: str) -> PluginSharing | None:
    """The sharing a device-plugin config file sets for ``nvidia.com/gpu``; NOT_SHARED for
    a config that shares nothing, None for text that is no device-plugin config."""
    import yaml  # only where a config is read: ``probe`` judges a node without YAML

    from gpunode.limits import bounded_yaml

    try:
        doc: Any = bounded_yaml(text, "device-plugin config")
    except (yaml.YAMLError, ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or not ({"flags", "sharing"} & set(doc)):
        return None
    sharing = doc.get("sharing")
    for key, strategy in _SHARING_KEYS:
        section = sharing.get(key) if isinstance(sharing, dict) else None
        if not isinstance(section, dict):
            continue
        for entry in section.get("resources") or ():
            if not isinstance(entry, dict) or entry.get("name") != GPU:
                continue
            replicas = quantity(str(entry.get("replicas", "")))
            if replicas > 1:
                renamed = section.get("renameByDefault") is True or bool(entry.get("rename"))
                return PluginSharing(strategy, replicas, renamed)
    return NOT_SHARED


def selected_plugin_config(keys: Iterable[str], node_label: str | None, default: str | None) -> str | None:
    """The config key the plugin uses on a node: the node's ``nvidia.com/device-plugin.config``
    label, else the default, else the only config there is; None when none can be told
    (a label naming no key makes the plugin fail, not fall back)."""
    names = list(keys)
    if node_label:
        return node_label if node_label in names else None
    if default:
        return default if default in names else None
    return names[0] if len(names) == 1 else None


def gpu_resources(
    labels: Mapping[str, str], table: Mapping[str, str], config: PluginSharing | None = None
) -> GpuResources:
    """Read the node's GPU mode from GFD labels and resource names in ``table``
    (capacity or allocatable), and what its numbers mean. ``config``: the sharing of the
    device plugin's own config, which decides where GFD's labels do not say sharing."""
    mig = _mig_strategy(labels, table)
    sharing = labels.get(_STRATEGY) or labels.get(_SHARED_STRATEGY) or "none"
    replicas = max(quantity(labels.get(_REPLICAS) or labels.get(_SHARED_REPLICAS)), 1)
    if sharing == "none" and replicas == 1 and config is not None and config.replicas > 1:
        sharing, replicas = config.strategy, config.replicas
    if sharing == "none" and (replicas > 1 or SHARED in table):
        sharing = "time-slicing"
    advertised = 0
    for name, value in table.items():
        if name.startswith(_UNITS):
            advertised += quantity(value)
    vgpu = labels.get("nvidia.com/vgpu.present") == "true"
    if mig == "single":
        return GpuResources("mig-single", sharing, replicas, advertised, None, vgpu)
    if mig == "mixed":
        return GpuResources("mig-mixed", sharing, replicas, advertised, None, vgpu)
    whole = quantity(table.get(GPU)) + quantity(table.get(SHARED))
    mode = "shared" if sharing != "none" else "whole"
    physical = whole // replicas if whole else None
    return GpuResources(mode, sharing, replicas, advertised, physical, vgpu)


_STRATEGY, _SHARED_STRATEGY = f"{GPU}.sharing-strategy", f"{SHARED}.sharing-strategy"
_REPLICAS, _SHARED_REPLICAS = f"{GPU}.replicas", f"{SHARED}.replicas"
#: Resource names that count devices: nvidia.com/gpu, nvidia.com/gpu.shared, nvidia.com/mig-*.
_UNITS = (GPU, MIG_PREFIX)


def dcgm_series_gpus(series: Iterable[Mapping[str, str]]) -> set[str]:
    """The GPUs a DCGM exporter serves, from the labels of its per-GPU series in any family:
    ``gpu`` (else ``UUID``). A GPU is present if any of its series is: a vGPU guest exports
    no DCGM_FI_DEV_GPU_TEMP but the other families, and MIG instances carry their GPU's
    index, so this counts the physical GPUs (or vGPUs) the node's other counts compare to."""
    rows = [*series]
    named = [*map(_GPU_LABEL, rows)]
    if all(named):  # (most scrapes: every series names its GPU; in C, no generator a node)
        return set(named)
    found = (labels.get("gpu") or labels.get("UUID") for labels in rows)
    return set(filter(None, found))  # (those named)


_GPU_LABEL = methodcaller("get", "gpu")


def _label(labels: Mapping[str, str], suffix: str) -> str | None:
    """``nvidia.com/gpu.<suffix>``, or the renamed ``nvidia.com/gpu.shared.<suffix>``."""
    return labels.get(f"{GPU}.{suffix}") or labels.get(f"{SHARED}.{suffix}")


def _mig_strategy(labels: Mapping[str, str], table: Mapping[str, str]) -> str:
    """How MIG shows in the numbers: single, mixed or none.

    The strategy label alone is not enough: ``mig.strategy=single`` on GPUs without MIG
    enabled advertises whole GPUs. MIG single shows in GFD's product (``…-MIG-1g.10gb``)
    and slice labels; MIG mixed in ``nvidia.com/mig-*`` resources or labels.
    """
    product = labels.get("nvidia.com/gpu.product", "")
    if "-MIG-" in product or "nvidia.com/gpu.slices.gi" in labels:
        return "single"
    # (no Python frame a key: a node's labels are walked here six times a node)
    if any(map(_IS_MIG, table)) or any(map(_IS_MIG, labels)):
        return "mixed"
    return "none"


_IS_MIG = methodcaller("startswith", MIG_PREFIX)


def physical_gpus_labelled(labels: Mapping[str, str]) -> int | None:
    """GFD's ``nvidia.com/gpu.count`` where it counts physical GPUs: whole GPUs and
    time-slicing/MPS (renamed or not); not MIG, where it counts instances or only the
    GPUs without MIG."""
    if _mig_strategy(labels, {}) != "none":
        return None
    return quantity(_label(labels, "count")) or None


def mig_instances_labelled(labels: Mapping[str, str]) -> int | None:
    """MIG instances GFD counted: gpu.count (single) or the sum of mig-<profile>.count (mixed)."""
    strategy = _mig_strategy(labels, {})
    if strategy == "single":
        return quantity(labels.get("nvidia.com/gpu.count")) or None
    total = sum(quantity(v) for k, v in labels.items() if k.startswith(MIG_PREFIX) and k.endswith(".count"))
    return total or None


def gfd_labels_as_gpu(labels: Mapping[str, str]) -> dict[str, str]:
    """GFD's labels with renamed-shared keys (``nvidia.com/gpu.shared.product``) read as
    ``nvidia.com/gpu.product`` where that is absent, so one set of checks fits both."""
    out = dict(labels)
    prefix = f"{SHARED}."
    for key, value in labels.items():
        if key.startswith(prefix):
            out.setdefault(f"{GPU}.{key[len(prefix) :]}", value)
    return out
