"""One node as the fleet sees it: what should make it like its peers, and what may differ.

Most of a profile comes from the cluster lists (labels, capacity, node info, the stack pods'
images), the same for every node whether its files were read or not. What only the node's
own files say (GPUs NVML sees, link widths, NVLinks, power limits, DCGM series, stale
markers) is taken in the node pass (``observe``, run where the node is judged, maybe a
worker process) and travels back as a small ``Observed``; a node judged from the lists
alone has none, and those aspects are not compared for it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from functools import lru_cache, partial
from itertools import compress
from operator import attrgetter, is_not, methodcaller
from typing import TYPE_CHECKING

import msgspec

from gpunode.gpus import physical_gpus_labelled
from gpunode.parse.nvlink import parse_nvlink_status
from gpunode.relazy import lazy_compile

if TYPE_CHECKING:
    from gpunode.checks.context import NodeContext
    from gpunode.facts import ClusterFacts
    from gpunode.model import NodeReport
    from gpunode.parse.nvidia_smi import NvidiaSmiReport
    from gpunode.probe.result import ProbeResult

#: Node pool labels of the managed platforms and common installers, most specific first.
POOL_LABELS: tuple[str, ...] = (
    "cloud.google.com/gke-nodepool",
    "eks.amazonaws.com/nodegroup",
    "alpha.eksctl.io/nodegroup-name",
    "karpenter.sh/nodepool",
    "karpenter.sh/provisioner-name",
    "kubernetes.azure.com/agentpool",
    "agentpool",
    "node.kubernetes.io/pool",
    "nodepool",
    "node-pool",
    "pool",
)
INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
#: GFD's product label carries the MIG layout or sharing after the product name.
_PRODUCT_SUFFIX = lazy_compile(r"-(MIG-.*|SHARED)$")
#: Labels that change with a controller's progress, not with what the node is.
VOLATILE_LABELS = frozenset({
    "nvidia.com/gpu-driver-upgrade-state",
    "nvidia.com/mig.config.state",
    "nvidia.com/gfd.timestamp",
})
GFD_TIMESTAMP_LABEL = "nvidia.com/gfd.timestamp"
GFD_PREFIX = "nvidia.com/"
NFD_PREFIX = "feature.node.kubernetes.io/"
#: Stack components whose image on the node is a version the fleet compares.
IMAGE_COMPONENTS: tuple[str, ...] = (
    "driver", "container-toolkit", "device-plugin", "gfd", "dcgm-exporter", "mig-manager",
)
DCGM_PREFIX = "DCGM_FI_"
#: Collected ``nvidia-smi nvlink -s`` (gpunode.checks.interconnect.NVLINK_STATUS).
NVLINK_STATUS_FILE = "nvidia-smi-nvlink-s.txt"


class Observed(msgspec.Struct, frozen=True, array_like=True, omit_defaults=True):
    """What the node's own files say that the fleet compares (None: not read)."""

    nvml_gpus: int | None = None
    pcie_width: int | None = None
    nvlinks: int | None = None
    power_limit_w: int | None = None
    driver: str | None = None
    cuda: str | None = None
    vbios: str | None = None
    product: str | None = None
    dcgm_families: tuple[str, ...] | None = None
    #: validation markers written before the driver last loaded (the probe's finding), and
    #: when the driver loaded (Unix seconds)
    stale_markers: tuple[str, ...] = ()
    driver_loaded_at: float | None = None
    #: when the MIG manager began the change it is making (its last "Updating to MIG config"
    #: line), read only while the node's MIG state is pending or rebooting
    mig_since: str | None = None
    #: a digest of the node's container runtime config files (gpunode.fleet.diff)
    runtime_config: str | None = None
    #: per GPU on an NVLink fabric, its ``<ClusterUUID>.<CliqueId>`` ("" for one with no
    #: clique); None where no GPU is on one or the fabric was not read (gpunode.fleet.domains)
    domains: tuple[str, ...] | None = None
    #: NVLinks active and present, from the probe or collected ``nvidia-smi nvlink -s``
    links: tuple[int, int] | None = None


NOTHING_OBSERVED = Observed()


def observe(ctx: NodeContext) -> Observed:
    """The node files' part of a profile: GPUs from the probe's NVML facts, else nvidia-smi;
    DCGM series, stale markers, the MIG change under way, the runtime config's digest."""
    obs = ctx.obs
    cmd = obs.cmd
    probe = ctx.probe if "gpunode-probe.json" in cmd else None
    if probe is None:  # (a collected bundle's nodes: nvidia-smi's GPUs, read in one pass)
        found, domains = _smi_gpus(ctx.nvidia_smi if "nvidia-smi-q.xml" in cmd else None)
        stale: tuple[str, ...] = ()
    else:
        found, domains = _gpus(ctx, probe), _gpu_domains(ctx, probe)
        stale = tuple(m.name for m in probe.host.validations if m.older_than_driver_load)
    families = (ctx._dcgm_families or {}) if "dcgm-exporter.prom" in obs.metrics else None
    rest = {
        "dcgm_families": None if families is None else _dcgm_names(families),
        "stale_markers": stale,
        "driver_loaded_at": probe.host.driver_loaded_at if probe and stale else None,
        "mig_since": _mig_since(ctx),
        "runtime_config": runtime_config_digest(obs.files),
        "domains": domains,
        "links": _links(ctx, probe) if probe is not None or NVLINK_STATUS_FILE in cmd else None,
    }
    if found is NOTHING_OBSERVED and not any(rest.values()):
        return NOTHING_OBSERVED
    return msgspec.structs.replace(found, **rest)


def _smi_gpus(smi: NvidiaSmiReport | None) -> tuple[Observed, tuple[str, ...] | None]:
    """``_gpus`` and ``_gpu_domains`` of nvidia-smi's GPUs (no probe), in one pass over them."""
    if smi is None:
        return NOTHING_OBSERVED, None
    gpus = smi.gpus  # (each field read in C: no loop over the GPUs a node)
    widths: list[int] = [*filter(_SET, map(_WIDTH, gpus))]
    limits: list[float] = [*filter(_SET, map(_POWER_LIMIT, gpus))]
    vbios: set[str] = set(filter(None, map(_VBIOS, gpus)))
    products: set[str] = set(filter(None, map(_PRODUCT, gpus)))
    domains: list[str] = []
    for g in () if _OFF_FABRIC.issuperset(map(_FABRIC_STATE, gpus)) else gpus:
        if g.fabric_state not in _OFF_FABRIC:
            domain = _domain(g.fabric_state, g.fabric_status, g.fabric_cluster_uuid, g.fabric_clique_id)
            if domain is not None:
                domains.append(domain)
    found = Observed(
        nvml_gpus=len(gpus),
        pcie_width=min(widths) if widths else None,
        power_limit_w=round(min(limits)) if limits else None,
        driver=smi.driver_version,
        cuda=smi.cuda_version,
        vbios=" / ".join(sorted(vbios)) if vbios else None,
        product=" / ".join(sorted(products)) if products else None,
    )
    return found, tuple(domains) if domains else None


def _gpus(ctx: NodeContext, probe: ProbeResult | None) -> Observed:
    if probe is not None and probe.nvml.init_ok:
        gpus = [g for g in probe.nvml.gpus if not g.lost]
        return Observed(
            nvml_gpus=len(gpus),
            pcie_width=_least([g.pcie_width_current for g in gpus]),
            nvlinks=sum(1 for g in gpus for link in g.nvlinks if link.active),
            power_limit_w=_least_int([g.power_limit_w for g in gpus]),
            driver=probe.nvml.driver_version,
            cuda=probe.nvml.cuda_driver_version,
            vbios=_joined([g.vbios_version for g in gpus]),
            product=_joined([g.name for g in gpus]),
        )
    smi = ctx.nvidia_smi if "nvidia-smi-q.xml" in ctx.obs.cmd else None
    if smi is None:
        return NOTHING_OBSERVED
    return Observed(
        nvml_gpus=len(smi.gpus),
        pcie_width=_least([g.pcie_width_current for g in smi.gpus]),
        power_limit_w=_least_int([g.power_limit_w for g in smi.gpus]),
        driver=smi.driver_version,
        cuda=smi.cuda_version,
        vbios=_joined([g.vbios_version for g in smi.gpus]),
        product=_joined([g.product_name for g in smi.gpus]),
    )


#: What nvidia-smi and NVML say of a GPU outside any NVLink fabric.
_OFF_FABRIC = frozenset({None, "", "N/A", "Not Supported", "[N/A]", "not_supported"})
_ZERO_UUID = "00000000-0000-0000-0000-000000000000"


def _gpu_domains(ctx: NodeContext, probe: ProbeResult | None) -> tuple[str, ...] | None:
    """Each fabric GPU's domain, from the probe's NVML facts, else ``nvidia-smi -q -x``."""
    fabric: list[tuple[str | None, str | None, str | None, object]]
    if probe is not None and probe.nvml.init_ok:
        fabric = [(g.fabric_state, g.fabric_status, g.fabric_cluster_uuid, g.fabric_clique_id)
                  for g in probe.nvml.gpus if not g.lost]
    elif (smi := ctx.nvidia_smi if "nvidia-smi-q.xml" in ctx.obs.cmd else None) is not None:
        fabric = [(g.fabric_state, g.fabric_status, g.fabric_cluster_uuid, g.fabric_clique_id)
                  for g in smi.gpus]
    else:
        return None
    out = [_domain(*f) for f in fabric if f[0] not in _OFF_FABRIC]
    known = [d for d in out if d is not None]
    return tuple(known) if known else None


def _domain(state: str | None, status: str | None, uuid: str | None, clique: object) -> str | None:
    """``<uuid>.<clique>`` for a registered GPU, "" for one on a fabric without a clique,
    None for one registered outside a multi-node domain (a zero cluster UUID)."""
    if state == "Completed" and status == "Success":
        if uuid in _OFF_FABRIC or uuid == _ZERO_UUID:
            return None
        return f"{uuid}.{clique}" if clique not in _OFF_FABRIC else ""
    return ""


def _links(ctx: NodeContext, probe: ProbeResult | None) -> tuple[int, int] | None:
    """NVLinks active and present on the node (None where none was read)."""
    if probe is not None and probe.nvml.init_ok:
        links = [lk.active for g in probe.nvml.gpus if not g.lost for lk in g.nvlinks]
    elif (text := ctx.obs.cmd.get(NVLINK_STATUS_FILE)):
        links = [lk.active for g in parse_nvlink_status(text) for lk in g.links]
    else:
        return None
    return (sum(links), len(links)) if links else None


def runtime_config_digest(files: Mapping[str, str]) -> str | None:
    """A short digest of the node's container runtime config files (path and text)."""
    picked = sorted(compress(files.items(), map(_runtime_config, files)))  # (in C: every node)
    return _digest(tuple(picked)) if picked else None


@lru_cache(maxsize=64)  # a pool's nodes share their runtime config files byte for byte
def _digest(picked: tuple[tuple[str, str], ...]) -> str:
    digest = hashlib.sha256()
    for path, text in picked:
        digest.update(path.encode() + b"\0" + text.encode() + b"\0")
    return digest.hexdigest()[:12]


def _runtime_config(path: str) -> bool:
    in_config_dir = path.startswith(("etc/containerd/", "etc/crio/", "var/lib/rancher/"))
    return (in_config_dir and path.endswith(".toml")) or path in {
        "etc/docker/daemon.json", "etc/nvidia-container-runtime/config.toml"}


MIG_STATE_LABEL = "nvidia.com/mig.config.state"
MIG_CHANGING = frozenset({"pending", "rebooting"})
_MIG_UPDATE = lazy_compile(r'^time="([^"]+)".*msg="Updating to MIG config')


def _mig_since(ctx: NodeContext) -> str | None:
    """When the MIG manager on the node began its current change (logrus ``time=``)."""
    node = ctx.node
    if node is None or node.metadata.labels.get(MIG_STATE_LABEL) not in MIG_CHANGING:
        return None
    found: str | None = None
    for sp in ctx.stack_pods("mig-manager"):
        for log in ctx.logs_of(sp.pod):
            for line in log.lines:
                match = _MIG_UPDATE.match(line)
                if match and (found is None or match.group(1) > found):
                    found = match.group(1)
    return found


def _dcgm_names(families: Mapping[str, object]) -> tuple[str, ...]:
    names = list(filter(_DCGM_NAME, families))  # (in C)
    names.sort()
    return tuple(names)


#: Readers in C for the node pass (a comprehension is a function of its own a node).
_DCGM_NAME = methodcaller("startswith", DCGM_PREFIX)
_SET = partial(is_not, None)
_WIDTH = attrgetter("pcie_width_current")
_POWER_LIMIT = attrgetter("power_limit_w")
_VBIOS = attrgetter("vbios_version")
_PRODUCT = attrgetter("product_name")
_FABRIC_STATE = attrgetter("fabric_state")


def _least(values: Sequence[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return min(known) if known else None


def _least_int(values: Sequence[float | None]) -> int | None:
    known = [v for v in values if v is not None]
    return round(min(known)) if known else None


def _joined(values: Sequence[str | None]) -> str | None:
    """One value where every GPU agrees, else all of them (a mixed node is itself odd)."""
    known = sorted({v for v in values if v})
    return " / ".join(known) if known else None


# --- the whole profile (main process) ---------------------------------------------------


class Profile(msgspec.Struct, frozen=True):
    """One reported node as the fleet compares it; unknown values are absent (a struct: one
    is made for each reported node, its fields set in C)."""

    name: str
    causes: frozenset[str]
    #: what should make it like its peers (None: unknown)
    keys: dict[str, str | None]
    #: values compared for equality (versions and images), counts compared for fewer,
    #: measures compared for deviation, key sets compared for missing keys
    versions: dict[str, str] = msgspec.field(default_factory=dict)
    counts: dict[str, int] = msgspec.field(default_factory=dict)
    measures: dict[str, float] = msgspec.field(default_factory=dict)
    sets: dict[str, frozenset[str]] = msgspec.field(default_factory=dict)
    #: what the failing nodes may share (correlations), known values only
    factors: dict[str, str] = msgspec.field(default_factory=dict)

    @property
    def failing(self) -> bool:
        return bool(self.causes)


def profile(facts: ClusterFacts, report: NodeReport, seen: Observed | None) -> Profile:
    """The node's profile from the lists, its report and what its files said."""
    node = facts.nodes.get(report.name)
    labels: Mapping[str, str] = node.metadata.labels if node is not None else {}
    seen = seen or NOTHING_OBSERVED
    keys = class_keys(labels)
    images = stack_images(facts, report.name)
    info = node.status.node_info if node is not None else None
    versions = _known({
        "driver": driver_version(labels) or seen.driver,
        "cuda": cuda_version(labels) or seen.cuda,
        "kernel": info.kernel_version if info else None,
        "os": info.os_image if info else None,
        "runtime": info.container_runtime_version if info else None,
        "kubelet": info.kubelet_version if info else None,
        "vbios": seen.vbios,
    })
    versions.update(zip(map(_IMAGE_KEYS.__getitem__, images), images.values(), strict=True))  # (each is set)
    status = node.status if node is not None else None
    counts = _known_int({
        "gpus.nvml": seen.nvml_gpus,
        "gpus.capacity": _resource(status.capacity if status else {}, "nvidia.com/gpu"),
        "gpus.allocatable": _resource(status.allocatable if status else {}, "nvidia.com/gpu"),
        "gpus.labelled": physical_gpus_labelled(labels),
        "pcie.width": seen.pcie_width,
        "nvlinks": seen.nvlinks,
    })
    measures = {"power.limit": float(seen.power_limit_w)} if seen.power_limit_w is not None else {}
    sets = label_sets(labels)
    if seen.dcgm_families is not None:
        sets["metrics.dcgm"] = frozenset(seen.dcgm_families)
    factors = dict(versions)
    factors.update(_known({
        "pool": keys.get("pool"),
        "instance_type": keys.get("instance_type"),
        "gpu_product": keys.get("product") or seen.product,
        "zone": _first(labels, ZONE_LABELS),
    }))
    causes = frozenset(rc.cause for rc in report.root_causes)
    return Profile(report.name, causes, keys, versions, counts, measures, sets, factors)


@lru_cache(maxsize=1024)  # bounded: watch and the agent judge again and again
def _label_sets(keys: frozenset[str]) -> tuple[frozenset[str], frozenset[str]]:
    nvidia = frozenset(k for k in keys if k.startswith(GFD_PREFIX) and k not in VOLATILE_LABELS)
    return nvidia, frozenset(k for k in keys if k.startswith(NFD_PREFIX))


def label_sets(labels: Mapping[str, str]) -> dict[str, frozenset[str]]:
    """The nvidia.com and NFD label keys; nodes of a class share their key sets, so each
    distinct set is split once."""
    nvidia, nfd = _label_sets(frozenset(labels))
    return {"labels.nvidia": nvidia, "labels.nfd": nfd}


def class_keys(labels: Mapping[str, str]) -> dict[str, str | None]:
    """What should make nodes alike: GPU product, pool, instance type, MIG and sharing.

    More keys (an NVLink domain) are added by registering a function in ``CLASS_KEYS``."""
    return {name: read(labels) for name, read in CLASS_KEYS.items()}


def _product(labels: Mapping[str, str]) -> str | None:
    product = labels.get("nvidia.com/gpu.product")
    return _PRODUCT_SUFFIX.sub("", product) if product else None


def _mig(labels: Mapping[str, str]) -> str | None:
    config = labels.get("nvidia.com/mig.config")
    strategy = labels.get("nvidia.com/mig.strategy")
    if config is None and strategy is None:
        return None
    return "/".join(v for v in (config, strategy) if v)


def _sharing(labels: Mapping[str, str]) -> str | None:
    strategy = labels.get("nvidia.com/gpu.sharing-strategy")
    config = labels.get("nvidia.com/device-plugin.config")
    if strategy is None and config is None:
        return None
    return "/".join(v for v in (strategy, config) if v)


#: Class key name → how it is read from the node's labels (None: unknown).
CLASS_KEYS = {
    "product": _product,
    "pool": lambda labels: _first(labels, POOL_LABELS),
    "instance_type": lambda labels: _first(labels, INSTANCE_TYPE_LABELS),
    "mig": _mig,
    "sharing": _sharing,
}


def driver_version(labels: Mapping[str, str]) -> str | None:
    """GFD's driver version labels (``cuda.driver-version.full``, else major.minor.rev)."""
    full = labels.get("nvidia.com/cuda.driver-version.full")
    if full:
        return full
    parts = [labels.get(f"nvidia.com/cuda.driver.{p}") for p in ("major", "minor", "rev")]
    return ".".join(p for p in parts if p) if parts[0] and parts[1] else None


def cuda_version(labels: Mapping[str, str]) -> str | None:
    """GFD's CUDA version labels (``cuda.runtime-version.full``, else major.minor)."""
    full = labels.get("nvidia.com/cuda.runtime-version.full")
    if full:
        return full
    major, minor = labels.get("nvidia.com/cuda.runtime.major"), labels.get("nvidia.com/cuda.runtime.minor")
    return f"{major}.{minor}" if major and minor else None


def stack_images(facts: ClusterFacts, node: str) -> dict[str, str]:
    """The image of each compared stack component's pod on the node (its first container)."""
    here = facts.pods_by_node.get(node, {})
    out: dict[str, str] = {}
    for component in IMAGE_COMPONENTS:
        for sp in here.get(component, ()):
            containers = sp.pod.spec.containers
            if containers and containers[0].image:
                out[component] = containers[0].image
                break
    return out


def _first(labels: Mapping[str, str], keys: Sequence[str]) -> str | None:
    """The first of ``keys`` set in ``labels``; asked three times for each node's profile,
    so a node that has none of them (a fleet without pool labels) is told by one C test."""
    if labels.keys().isdisjoint(keys):
        return None
    for key in keys:
        value = labels.get(key)
        if value:
            return value
    return None


def _resource(amounts: Mapping[str, str], name: str) -> int | None:
    return _int(amounts.get(name))


def _int(value: str | None) -> int | None:
    return int(value) if value is not None and value.isdigit() else None


def _known(values: Mapping[str, str | None]) -> dict[str, str]:
    return {k: v for k, v in values.items() if v}


#: A compared stack component's version key.
_IMAGE_KEYS = {component: f"image.{component}" for component in IMAGE_COMPONENTS}


def _known_int(values: Mapping[str, int | None]) -> dict[str, int]:
    return {k: v for k, v in values.items() if v is not None}
