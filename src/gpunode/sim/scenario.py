"""Scenario files: the declarative description of a simulated cluster and its faults.

Decoded strictly with msgspec (unknown keys are errors), then checked for things
a schema cannot say (fault types exist, faults name GPU nodes, names are unique).
Every problem becomes one `UsageError` line naming the file and the field.
"""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path
from typing import Literal

import msgspec
import yaml

from gpunode.errors import UsageError
from gpunode.limits import bounded_yaml
from gpunode.relazy import lazy_compile

FaultScope = Literal["node", "cluster"]
# Fault type -> where it applies. gpunode.sim.faults registers each fault here as it is
# defined, and gpunode.sim loads it before any scenario can be read, so the check below
# needs no import of the faults (which sit above the world this module describes).
FAULT_SCOPES: dict[str, FaultScope] = {}

DriverMode = Literal["operator", "host"]
Runtime = Literal["containerd", "containerd2", "crio"]
Cni = Literal["cilium", "calico"]
GpuModel = Literal["H100-SXM-80GB", "H200-SXM-141GB", "A100-SXM4-80GB"]
OsName = Literal["ubuntu22.04", "ubuntu24.04", "rhel9.4"]
Component = Literal[
    "gpu-operator",
    "network-operator",
    "nfd",
    "node-exporter",
    "logging-agent",
    "otel-agent",
    "csi-node",
    "dcgm-exporter",
    "gfd",
    "mig-manager",
    "validator",
    "sriov-device-plugin",
]
# Every component a scenario deploys unless it lists its own; the SR-IOV device plugin
# is opt-in (a NicClusterPolicy enables it with a sriovDevicePlugin section).
ALL_COMPONENTS: tuple[Component, ...] = (
    "gpu-operator",
    "network-operator",
    "nfd",
    "node-exporter",
    "logging-agent",
    "otel-agent",
    "csi-node",
    "dcgm-exporter",
    "gfd",
    "mig-manager",
    "validator",
)


class _Strict(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """Base: unknown keys in a scenario are mistakes, not extensions."""


class ControlPlane(_Strict, frozen=True):
    count: int = 3
    prefix: str = "mgmt-"
    taint: bool = True


GpuMode = Literal["whole", "mig-single", "mig-mixed", "time-slicing", "mps", "vgpu"]


class GpuNode(_Strict, frozen=True):
    name: str
    gpu: GpuModel = "H100-SXM-80GB"
    gpus: int = 8
    nics: int = 2
    os: OsName = "ubuntu22.04"
    kernel: str = "5.15.0-131-generic"
    gpu_mode: GpuMode = "whole"
    replicas: int = 4  # time-slicing / MPS replicas per GPU
    #: the NVLink domain (``<ClusterUUID>.<CliqueId>``) GFD labels the node in
    #: (``nvidia.com/gpu.clique``) and its GPUs register in (nvidia-smi's ``<fabric>``)
    nvlink_domain: str = ""
    #: what the GPUs report where it differs from the label (a tray left out of its domain)
    gpu_nvlink_domain: str | None = None


class Scale(_Strict, frozen=True):
    """Generate many identical GPU nodes (benchmarks); the first gpu_nodes entry is the model."""

    gpu_node_count: int
    pods_per_node: int = 20
    node_prefix: str = "gpu-"
    logs: bool = False
    node_data: bool = False


class Cluster(_Strict, frozen=True):
    name: str
    api_server: str
    kubernetes_version: str = "v1.31.4"
    control_plane: ControlPlane = ControlPlane()
    gpu_nodes: tuple[GpuNode, ...] = ()
    driver_mode: DriverMode = "operator"
    cdi: bool = True
    runtime: Runtime = "containerd"
    cni: Cni = "cilium"
    components: tuple[Component, ...] = ALL_COMPONENTS
    workloads: int = 0
    scale: Scale | None = None


class Fault(_Strict, frozen=True):
    type: str
    node: str | None = None


class Scenario(_Strict, frozen=True):
    name: str
    cluster: Cluster
    description: str = ""
    faults: tuple[Fault, ...] = ()

    def has(self, component: Component) -> bool:
        """Whether the scenario deploys `component`."""
        return component in self.cluster.components


_NAME_RE = lazy_compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_PATH_RE = lazy_compile(r"`\$((?:\.[A-Za-z_0-9]+|\[\d+\])*)`")


def scenario_dir() -> resources.abc.Traversable:
    """The package folder holding the bundled scenario files."""
    return resources.files("gpunode.sim").joinpath("scenarios")


def list_scenarios() -> list[tuple[str, str]]:
    """Bundled scenarios as (name, description), sorted by name."""
    found: list[tuple[str, str]] = []
    for entry in scenario_dir().iterdir():
        if entry.name.endswith(".yaml"):
            scenario = _decode(entry.read_text(encoding="utf-8"), entry.name)
            found.append((scenario.name, scenario.description))
    return sorted(found)


#: GPU nodes beyond which a scenario is a benchmark, not something ``demo`` runs: building it
#: in memory and judging it take gigabytes (scale-5000: 2.9 GiB to build, 890 MiB to judge,
#: past the 416 MiB a run may grow by default; docs/scenarios.md).
DEMO_MAX_GPU_NODES = 1000


def not_for_demo(scenario: Scenario) -> str | None:
    """Why ``demo`` does not run ``scenario`` (a benchmark fleet), with what to run instead;
    None when it does."""
    scale = scenario.cluster.scale
    if scale is None or scale.gpu_node_count <= DEMO_MAX_GPU_NODES:
        return None
    return (f"{scenario.name}: a benchmark of {scale.gpu_node_count:,} GPU nodes, not a demo (building it "
            f"takes gigabytes of memory); write it with 'gpunode sim {scenario.name} -o DIR' and judge it "
            "with 'GPUNODE_MAX_MEMORY_MIB=1024 gpunode diagnose --from DIR' (docs/scenarios.md)")


def demo_scenarios() -> list[tuple[str, str]]:
    """``list_scenarios`` without the benchmarks ``demo`` does not run."""
    return [(name, text) for name, text in list_scenarios() if not_for_demo(load_scenario(name)) is None]


def load_scenario(path_or_name: str | Path) -> Scenario:
    """Load a scenario from a file path or by bundled name (e.g. `falcon-ai-broken`)."""
    text, label = _read_source(path_or_name)
    scenario = _decode(text, label)
    _check(scenario, label)
    return scenario


def parse_scenario(text: str, label: str = "<scenario>") -> Scenario:
    """Decode and check scenario YAML given as text (`label` names it in errors)."""
    scenario = _decode(text, label)
    _check(scenario, label)
    return scenario


def scenario_from_data(raw: object, label: str = "<scenario>") -> Scenario:
    """Decode and check a scenario given as the plain data its YAML reads into (what a
    program that edits a scenario holds), as strictly as `parse_scenario` and with the same
    errors, without writing it out as YAML and reading it back."""
    scenario = _convert(raw, label)
    _check(scenario, label)
    return scenario


def _read_source(path_or_name: str | Path) -> tuple[str, str]:
    """Text and display label of a scenario file or bundled scenario name."""
    path = Path(path_or_name)
    if path.suffix in (".yaml", ".yml") or path.exists():
        try:
            return path.read_text(encoding="utf-8"), str(path)
        except OSError as exc:
            raise UsageError(f"{path}: cannot read scenario: {exc.strerror}") from exc
    bundled = scenario_dir().joinpath(f"{path_or_name}.yaml")
    if not bundled.is_file():
        names = ", ".join(name for name, _ in list_scenarios())
        raise UsageError(f"unknown scenario {str(path_or_name)!r} (bundled: {names})")
    return bundled.read_text(encoding="utf-8"), f"{path_or_name}.yaml"


@functools.lru_cache(maxsize=256)
def _decode(text: str, label: str) -> Scenario:
    """YAML text to a Scenario; one-line UsageError naming the field on failure. Kept per
    text: a Scenario is frozen all the way down, and the field corpus reads the same few
    bundled scenarios hundreds of times (a failure is not kept, so it is raised again)."""
    try:
        raw = bounded_yaml(text, label)
    except ValueError as exc:  # an alias bomb, nesting past the limit: one line naming it
        raise UsageError(str(exc)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise UsageError(f"{label}:{where} invalid YAML: {getattr(exc, 'problem', exc)}") from exc
    return _convert(raw, label)


def _convert(raw: object, label: str) -> Scenario:
    """Plain data to a Scenario; one-line UsageError naming the field on failure."""
    try:
        return msgspec.convert(raw, Scenario)
    except msgspec.ValidationError as exc:
        raise UsageError(f"{label}: {_field_message(str(exc))}") from exc


def _field_message(message: str) -> str:
    """Rewrite msgspec's `... - at `$.a.b`` into `a.b: ...`."""
    match = _PATH_RE.search(message)
    if match is None:
        return message
    field = match.group(1).lstrip(".") or "(top level)"
    text = message[: match.start()].rstrip(" -")
    return f"{field}: {text}"


def _check(scenario: Scenario, label: str) -> None:
    """Semantic checks a schema cannot express."""
    cluster = scenario.cluster
    if not _NAME_RE.match(scenario.name):
        raise UsageError(f"{label}: name: {scenario.name!r} is not a DNS-1123 label")
    if not cluster.gpu_nodes:
        raise UsageError(f"{label}: cluster.gpu_nodes: at least one GPU node is needed")
    _check_numbers(cluster, label)
    _check_node_names(cluster, label)
    _check_faults(scenario, label)


def _check_numbers(cluster: Cluster, label: str) -> None:
    """Counts must be in ranges a real cluster can have."""
    if not 1 <= cluster.control_plane.count <= 9:
        raise UsageError(f"{label}: cluster.control_plane.count: must be 1..9")
    if cluster.workloads < 0:
        raise UsageError(f"{label}: cluster.workloads: must be >= 0")
    for i, node in enumerate(cluster.gpu_nodes):
        if not 1 <= node.gpus <= 8:
            raise UsageError(f"{label}: cluster.gpu_nodes[{i}].gpus: must be 1..8")
        if not 0 <= node.nics <= 8:
            raise UsageError(f"{label}: cluster.gpu_nodes[{i}].nics: must be 0..8")
    if cluster.scale is not None and not 1 <= cluster.scale.gpu_node_count <= 20000:
        raise UsageError(f"{label}: cluster.scale.gpu_node_count: must be 1..20000")


def _check_node_names(cluster: Cluster, label: str) -> None:
    """GPU node names are DNS labels and unique, and do not collide with control planes."""
    seen: set[str] = set()
    cp = {f"{cluster.control_plane.prefix}{i:02d}" for i in range(1, cluster.control_plane.count + 1)}
    for i, node in enumerate(cluster.gpu_nodes):
        if not _NAME_RE.match(node.name):
            raise UsageError(f"{label}: cluster.gpu_nodes[{i}].name: {node.name!r} is not valid")
        if node.name in seen or node.name in cp:
            raise UsageError(f"{label}: cluster.gpu_nodes[{i}].name: {node.name!r} is used twice")
        seen.add(node.name)


def _check_faults(scenario: Scenario, label: str) -> None:
    """Each fault is a known type and names a GPU node exactly when it is node-scoped."""
    gpu_names = {node.name for node in scenario.cluster.gpu_nodes}
    for i, fault in enumerate(scenario.faults):
        where = f"{label}: faults[{i}]"
        scope = FAULT_SCOPES.get(fault.type)
        if scope is None:
            raise UsageError(f"{where}.type: unknown fault {fault.type!r} (see docs/scenarios.md)")
        if scope == "node" and fault.node not in gpu_names:
            raise UsageError(f"{where}.node: {fault.type} needs one of the GPU nodes, got {fault.node!r}")
        if scope == "cluster" and fault.node is not None:
            raise UsageError(f"{where}.node: {fault.type} is cluster-wide and takes no node")
