"""What a check sees of one node: cluster facts plus this node's observations.

Parsed forms of raw observations (nvidia-smi XML, containerd config, metric
scrapes) are computed on first use and cached, so several checks can read
them without parsing twice. Parse failures are kept as facts of their own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import chain, compress
from operator import attrgetter, methodcaller
from typing import TypeVar, cast

from gpunode.bundle.kube import Condition, ConfigMap, DaemonSet, Event, Node, Pod, Taint, Toleration
from gpunode.checks.operator import operator_sees_gpu
from gpunode.checks.placement import Awaited, awaited, selects
from gpunode.errors import ParseError
from gpunode.facts import ClusterFacts, LogFile, NodeObservations, StackPod
from gpunode.gpus import (
    GPU,
    PLUGIN_CONFIG_LABEL,
    SHARED,
    GpuResources,
    PluginSharing,
    dcgm_series_gpus,
    gpu_resources,
    physical_gpus_labelled,
    plugin_sharing,
    quantity,
    selected_plugin_config,
)
from gpunode.kb import KnowledgeBase, ascii_candidate_lines, candidate_lines, combined
from gpunode.lazy import cached_property
from gpunode.parse.containerd import (
    CONTAINERD_CONFIG_BY_DISTRIBUTION,
    CONTAINERD_CONFIG_PATHS,
    parse_containerd_config,
)
from gpunode.parse.crio import CRIO_CONFIG_PATHS, crio_drop_ins, parse_crio_config
from gpunode.parse.docker import DOCKER_DAEMON_JSON, parse_docker_daemon_json
from gpunode.parse.gpu_ref import bus_id_indices, normal_bus_id, short_bus_id
from gpunode.parse.kernel_log import KernelLog, parse_kernel_log
from gpunode.parse.modules import KernelModule, parse_modules
from gpunode.parse.nvidia_smi import GpuInfo, NvidiaSmiReport, parse_nvidia_smi_xml
from gpunode.parse.prom import Sample, parse_prometheus_text, split_families
from gpunode.parse.runtime_config import ContainerdConfig
from gpunode.platforms import GENERIC, Platform, detect
from gpunode.probe.result import ProbeResult, load_probe_json
from gpunode.runtimes import RuntimeSetup, from_containerd, from_crio, from_docker, runtime_kind

T = TypeVar("T")
DCGM_PER_GPU_PREFIX = "DCGM_FI_DEV_"
DCGM_FAMILIES_READ = 8  # enough to see every GPU; reading all would parse the whole scrape
DEFAULT_OPERATOR_NAMESPACE = "gpu-operator"


#: Readers in C for the node pass (a comprehension is a function of its own a node).
_PER_GPU = methodcaller("startswith", DCGM_PER_GPU_PREFIX)
_LABELS = attrgetter("labels")
_POD = attrgetter("pod")
_NAMESPACE = attrgetter("metadata.namespace")


@dataclass
class NodeContext:
    """Read-only view for checks; every property is a pure function of the facts."""

    facts: ClusterFacts
    name: str
    obs: NodeObservations
    kb: KnowledgeBase
    parse_errors: dict[str, str] = field(default_factory=dict)
    _dcgm_parsed: dict[str, list[Sample]] = field(default_factory=dict)
    _split: dict[tuple[str, str], tuple[list[str], str]] = field(default_factory=dict)
    _candidates: dict[tuple[str, str], list[int] | None] = field(default_factory=dict)
    _missing: dict[tuple[str, ...], tuple[str, ...]] = field(default_factory=dict)
    #: Values computed once per node for every component (signatures.py's event groups).
    memo: dict[str, object] = field(default_factory=dict)

    @cached_property
    def node(self) -> Node | None:
        return self.facts.nodes.get(self.name)

    @cached_property
    def _pods_here(self) -> dict[str, list[StackPod]]:
        """The node's stack pods by component (asked for by most checks of every component)."""
        return self.facts.pods_by_node.get(self.name, {})

    @cached_property
    def components_here(self) -> frozenset[str]:
        """The components with a stack pod on this node."""
        pods = self._pods_here
        return frozenset(compress(pods, pods.values()))  # (those with a pod; no comprehension a node)

    @cached_property
    def ready_condition(self) -> Condition | None:
        """The node's Ready condition (None without the node or the condition), read once a
        node for the kubelet's and the runtime's checks."""
        node = self.node
        if node is not None:
            for condition in node.status.conditions:
                if condition.type == "Ready":
                    return condition
        return None

    def observed(self, need: str) -> bool:
        """Whether an observation named in a check's ``needs`` is present."""
        kind, _, rest = need.partition("/")
        if kind == "cluster":
            return self.facts.has(rest)
        if kind == "node":
            return self.node is not None
        if kind == "cmd":
            return rest in self.obs.cmd
        if kind == "files":
            return rest in self.obs.files
        return kind == "metrics" and rest in self.obs.metrics

    def missing(self, needs: tuple[str, ...]) -> tuple[str, ...]:
        """The observations among ``needs`` this node lacks (many checks need the same)."""
        known = self._missing.get(needs)
        if known is None:
            known = self._missing[needs] = tuple([need for need in needs if not self.observed(need)])
        return known

    def text_lines(self, kind: str, name: str) -> tuple[list[str], str] | None:
        """A node file (``cmd`` or ``files``) as lines and the text they join back into,
        split once for the signature scans of every component that reads it."""
        key = (kind, name)
        if key not in self._split:
            table = self.obs.cmd if kind == "cmd" else self.obs.files
            text = table.get(name)
            if text is None:
                return None
            lines = text.splitlines()
            self._split[key] = (lines, "\n".join(lines))
        return self._split[key]

    def text_candidates(self, kind: str, name: str, patterns: tuple[str, ...]) -> list[int] | None:
        """Indexes of the lines of a node file (``text_lines``) where one of ``patterns`` may
        match (``kb.candidate_lines``); None without the file. ``patterns`` are all the
        signatures of that file, whatever their component, so the file is searched once per
        node, and split into lines only where something may match."""
        key = (kind, name)
        if key in self._candidates:
            return self._candidates[key]
        table = self.obs.cmd if kind == "cmd" else self.obs.files
        text = table.get(name)
        found: list[int] | None = None
        if text is not None:
            joined = _joined_lines(text)
            if joined is not None:
                found = ascii_candidate_lines(joined, patterns)
            else:
                joined = self.text_lines(kind, name)[1]  # type: ignore[index]
                found = sorted({i for regex in combined(patterns) for i in candidate_lines(joined, regex)})
        self._candidates[key] = found
        return found

    @cached_property
    def operator_sees_gpu(self) -> bool:
        """Whether the GPU Operator treats this node as a GPU node (operator.py), asked for
        each of its operands without a pod here."""
        node = self.node
        return node is not None and operator_sees_gpu(node.metadata.labels)

    @cached_property
    def pods_complete(self) -> bool:
        """``ClusterFacts.pods_complete``, asked for each component without a pod here."""
        return self.facts.pods_complete

    def stack_pods(self, component: str) -> list[StackPod]:
        return self._pods_here.get(component, [])

    def replaced_by(self, component: str) -> StackPod | None:
        """A pod on this node of a component that does ``component``'s job instead (catalog
        ``replaces``: HAMi's, Volcano's or GKE's plugin, the DRA driver's ``gpus`` container
        for NVIDIA's device plugin); None when none runs here."""
        for entry in self.facts.catalog.replacers(component):
            for sp in self.stack_pods(entry.id):
                names = {c.name for c in sp.pod.spec.containers}
                if not entry.replaces_containers or names & set(entry.replaces_containers):
                    return sp
        return None

    def events_for_pod(self, pod: Pod) -> list[Event]:
        return self.facts.events_for("Pod", pod.metadata.namespace, pod.metadata.name)

    def node_events(self) -> list[Event]:
        return self.facts.events_for("Node", "", self.name)

    def logs_of(self, pod: Pod) -> tuple[LogFile, ...]:
        key = pod.metadata.namespace, pod.metadata.name
        return self.obs.logs.get(key) or self.facts.cluster_logs.get(key, ())

    def current_logs(self, component: str) -> Iterator[tuple[Pod, LogFile]]:
        """Each log of the component's pods on this node that its running containers wrote
        (not a previous container's), with its pod: what the component says now."""
        for sp in self.stack_pods(component):
            for log in self.logs_of(sp.pod):
                if not log.previous:
                    yield sp.pod, log

    def workload_logs(self) -> Iterator[tuple[Pod, LogFile]]:
        """Each collected log of the GPU workload pods on this node, with its pod."""
        for pod in self.facts.logged_workloads_by_node.get(self.name, ()):
            for log in self.logs_of(pod):
                yield pod, log

    def cluster_side_pods(self, component: str) -> list[StackPod]:
        """The component's cluster-wide pods that run elsewhere (nfd-master for nfd):
        what they log about every node is this node's evidence too."""
        return [sp for sp in self.facts.cluster_side.get(component, ())
                if sp.pod.spec.target_node != self.name]

    def daemonsets_targeting(self, component: str) -> list[DaemonSet]:
        """This component's DaemonSets whose node selector and tolerations fit this node."""
        node = self.node
        sets = self.facts.daemonsets.get(component)
        if node is None or not sets:
            return []
        return [ds for ds in sets if _targets(ds, node)]

    def awaited_labels(self, component: str) -> Awaited | None:
        """A DaemonSet of the component kept off this node only by labels another component
        (NFD, GFD, the GPU Operator) should have set (gpunode.checks.placement)."""
        node = self.node
        sets = self.facts.daemonsets.get(component)
        if node is None or not sets:
            return None
        return awaited(self.facts.catalog, sets, node.metadata.labels)

    @cached_property
    def labels_expected_from(self) -> frozenset[str]:
        """Label-setting components expected to label this node: NFD where its worker runs
        or targets the node; GFD likewise; the GPU Operator where it runs."""
        out = {c for c in ("nfd", "gfd") if self.stack_pods(c) or self.daemonsets_targeting(c)}
        if self.facts.cluster_pods.get("gpu-operator") or self.facts.cluster_policies:
            out.add("gpu-operator")
        return frozenset(out)

    def untolerated_taint(self, component: str) -> tuple[DaemonSet, Taint] | None:
        """A DaemonSet of the component that selects this node but does not tolerate a taint."""
        node = self.node
        if node is None:
            return None
        for ds in self.facts.daemonsets.get(component, ()):
            if (taint := blocking_taint(ds, node)) is not None:
                return ds, taint
        return None

    @cached_property
    def platform(self) -> Platform:
        """The node's platform profile (GKE, EKS, OpenShift, K3s, ...; generic when none)."""
        return platform_of(self.node)

    @cached_property
    def operator_namespace(self) -> str:
        for policy in self.facts.cluster_policies:
            namespace = getattr(policy.status, "namespace", "")
            if namespace:
                return str(namespace)
        for pods in self.facts.cluster_pods.get("gpu-operator", []), self.stack_pods("driver"):
            for sp in pods:
                return sp.pod.metadata.namespace
        return DEFAULT_OPERATOR_NAMESPACE

    @cached_property
    def cluster_policy_spec(self) -> dict[str, object]:
        return dict(self.facts.cluster_policies[0].spec) if self.facts.cluster_policies else {}

    def operand_enabled(self, section: str) -> bool | None:
        """ClusterPolicy ``spec.<section>.enabled``; None when there is no ClusterPolicy."""
        if not self.facts.cluster_policies:
            return None
        value = self.cluster_policy_spec.get(section)
        if isinstance(value, dict) and "enabled" in value:
            return bool(value["enabled"])
        return True

    @cached_property
    def node_reporting(self) -> bool:
        """False when the kubelet stopped reporting: pod status is then stale."""
        ready = self.ready_condition
        return ready is None or ready.status == "True"

    def _parsed(self, key: str, text: str | None, parse: Callable[[str], T]) -> T | None:
        if text is None:
            return None
        ahead = self.obs.parsed.get(key) if self.obs.parsed else None
        if ahead is not None:  # parsed from this very text before the node pass (bundle/ahead.py)
            value, error = ahead
            if error is not None:
                self.parse_errors[key] = error
            return cast("T | None", value)
        try:
            return parse(text)
        except ParseError as exc:
            self.parse_errors[key] = str(exc)
            return None

    @cached_property
    def nvidia_smi(self) -> NvidiaSmiReport | None:
        text = self.obs.cmd.get("nvidia-smi-q.xml")
        return self._parsed("cmd/nvidia-smi-q.xml", text, parse_nvidia_smi_xml)

    @property
    def smi_gpus(self) -> tuple[GpuInfo, ...]:
        """The GPUs the node's ``nvidia-smi -q -x`` lists; none without it."""
        smi = self.nvidia_smi
        return smi.gpus if smi is not None else ()

    @property
    def smi_bus_ids(self) -> set[str]:
        """The bus addresses (bus:device.function, no PCI domain) of the GPUs nvidia-smi lists."""
        listed = (normal_bus_id(g.pci_bus_id) for g in self.smi_gpus if g.pci_bus_id)
        return {short_bus_id(bus_id) for bus_id in listed if bus_id}

    @property
    def gpu_product_label(self) -> str:
        """GFD's name for the node's GPUs (``nvidia.com/gpu.product``); "" without it."""
        node = self.node
        return node.metadata.labels.get("nvidia.com/gpu.product", "") if node is not None else ""

    @cached_property
    def kernel_log(self) -> KernelLog | None:
        return self._parsed("cmd/dmesg.txt", self.obs.cmd.get("dmesg.txt"), parse_kernel_log)

    @cached_property
    def modules(self) -> dict[str, KernelModule] | None:
        text = self.obs.cmd.get("lsmod.txt") or self.obs.files.get("proc/modules")
        return self._parsed("cmd/lsmod.txt", text, parse_modules)

    @cached_property
    def dcgm_samples(self) -> list[Sample] | None:
        text = self.obs.metrics.get("dcgm-exporter.prom")
        return self._parsed("metrics/dcgm-exporter.prom", text, parse_prometheus_text)

    @cached_property
    def _dcgm_families(self) -> dict[str, str] | None:
        text = self.obs.metrics.get("dcgm-exporter.prom")
        return split_families(text) if text is not None else None

    def dcgm_metric(self, name: str) -> list[Sample] | None:
        """Samples of one DCGM metric (None without a scrape); parses only that family."""
        families = self._dcgm_families
        if families is None:
            return None
        if name not in self._dcgm_parsed:
            text = families.get(name, "")
            self._dcgm_parsed[name] = (
                self._parsed("metrics/dcgm-exporter.prom", text, parse_prometheus_text) or []
            )
        return self._dcgm_parsed[name]

    @cached_property
    def dcgm_gpus(self) -> tuple[set[str], list[str]] | None:
        """Distinct GPUs in the DCGM scrape and the per-GPU families they were counted over.

        A GPU is its ``gpu`` label (else ``UUID``) in any ``DCGM_FI_DEV_*`` family: a vGPU
        guest exports no temperature but a dozen other per-GPU families.
        """
        families = self._dcgm_families
        if families is None:
            return None
        names = sorted(filter(_PER_GPU, families))[:DCGM_FAMILIES_READ]  # (in C: no generator a node)
        series = map(_LABELS, chain.from_iterable(filter(None, map(self.dcgm_metric, names))))
        return dcgm_series_gpus(series), names

    @cached_property
    def node_exporter_samples(self) -> list[Sample] | None:
        text = self.obs.metrics.get("node-exporter.prom")
        return self._parsed("metrics/node-exporter.prom", text, parse_prometheus_text)

    @cached_property
    def containerd(self) -> ContainerdConfig | None:
        names = self.obs.files
        files = dict(zip(map("/".__add__, names), names.values(), strict=True))
        for path in self._containerd_candidates():  # (a loop: no generator a node)
            if path in files:
                return self._parsed(f"files{path}", files[path],
                                    partial(_containerd, files, path, self.containerd_major))
        return None

    @cached_property
    def containerd_major(self) -> int | None:
        """containerd's major version from ``containerd://2.0.2``; None when not known."""
        node = self.node
        version = node.status.node_info.container_runtime_version if node else ""
        scheme, _, rest = version.partition("://")
        head = rest.lstrip("v").split(".", 1)[0]
        return int(head) if scheme == "containerd" and head.isdigit() else None

    @cached_property
    def runtime_kind(self) -> str | None:
        """containerd, cri-o or docker, from the node's containerRuntimeVersion."""
        node = self.node
        return runtime_kind(node.status.node_info.container_runtime_version) if node else None

    @cached_property
    def runtime_setup(self) -> RuntimeSetup | None:
        """The runtime config of the node's own runtime; None when absent or unparseable.

        A Docker node is judged by daemon.json and a CRI-O node by crio.conf, never by a
        containerd config that happens to lie on the disk. Parse errors land in
        ``runtime_setup_error``.
        """
        kind = self.runtime_kind
        if kind == "docker":
            return self._docker_setup()
        if kind == "cri-o":
            return self._crio_setup()
        config = self.containerd
        if config is not None:
            return _containerd_setup(config)
        return self._crio_setup() if kind is None and self.runtime_setup_error is None else None

    @property
    def runtime_setup_error(self) -> tuple[str, str] | None:
        """(bundle path, parse error) of the runtime config that could not be read."""
        for key, error in self.parse_errors.items():
            if key.startswith("files/"):
                return f"nodes/{self.name}/{key}", error
        return None

    def _docker_setup(self) -> RuntimeSetup | None:
        rel = DOCKER_DAEMON_JSON.lstrip("/")
        config = self._parsed(f"files/{rel}", self.obs.files.get(rel), parse_docker_daemon_json)
        return from_docker(config) if config else None

    def _crio_setup(self) -> RuntimeSetup | None:
        files = {"/" + p: t for p, t in self.obs.files.items()}
        for path in CRIO_CONFIG_PATHS:
            if path in files or crio_drop_ins(files, path):
                config = self._parsed(f"files{path}", path, lambda p: parse_crio_config(files, p))
                return from_crio(config) if config else None
        return None

    @cached_property
    def probe(self) -> ProbeResult | None:
        """The node probe's facts (``cmd/gpunode-probe.json``), decoded once for all probe checks."""
        text = self.obs.cmd.get("gpunode-probe.json")
        return self._parsed("cmd/gpunode-probe.json", text, load_probe_json)

    @cached_property
    def gpu_indices(self) -> dict[str, int]:
        """PCI bus id (``0000:2a:00.0``) -> the index ``nvidia-smi -i`` takes: NVML's own
        numbering from the probe, else the order of ``nvidia-smi -q -x`` (it lists GPUs by
        index); empty when neither was collected."""
        probe = self.probe
        if probe is not None and probe.nvml.gpus:
            return {
                bus: gpu.index
                for gpu in probe.nvml.gpus
                if gpu.pci_bus_id and (bus := normal_bus_id(gpu.pci_bus_id))
            }
        smi = self.nvidia_smi
        return bus_id_indices(g.pci_bus_id for g in smi.gpus) if smi is not None else {}

    def _containerd_candidates(self) -> tuple[str, ...]:
        """Config paths, the node's own distribution first (a k3s node may keep a stale
        /etc/containerd/config.toml that k3s never reads)."""
        flavour = self._distribution()
        return CONTAINERD_CONFIG_PATHS if flavour is None else CONTAINERD_CONFIG_BY_DISTRIBUTION[flavour]

    def _distribution(self) -> str | None:
        """k3s/rke2 from the kubelet version, else the probe's runtime processes."""
        node = self.node
        kubelet = node.status.node_info.kubelet_version if node else ""
        for flavour, marker in _KUBELET_FLAVOURS:
            if marker in kubelet:
                return flavour
        probe = self.probe
        if probe is not None:
            names = [name for name, up in probe.host.processes.items() if up]
            for flavour in ("k3s", "rke2", "microk8s"):
                if any(flavour in name for name in names):
                    return flavour
        return None

    @cached_property
    def gpu_resources(self) -> GpuResources | None:
        """How the node's device plugin counts its GPUs (whole, MIG, shared), from capacity,
        GFD's labels and, where they do not say sharing, the plugin's own config: applied
        only where the capacity is that many replicas of at least the GPUs seen."""
        node = self.node
        if node is None:
            return None
        labels, capacity = node.metadata.labels, node.status.capacity
        base = gpu_resources(labels, capacity)
        if base.sharing != "none" or base.physical is None:
            return base
        config = self.plugin_sharing
        if config is None or config.replicas == 1:
            return base
        whole = quantity(capacity.get(GPU)) + quantity(capacity.get(SHARED))
        seen = self._seen_gpus
        if whole % config.replicas or (seen and whole // config.replicas < seen):
            return base  # the config is not (yet) in effect: the plugin still serves whole GPUs
        return gpu_resources(labels, capacity, config)

    @cached_property
    def plugin_sharing(self) -> PluginSharing | None:
        """The sharing the device plugin's own config sets on this node; None when no
        config was found (not collected, or no key can be told for the node)."""
        node = self.node
        label = node.metadata.labels.get(PLUGIN_CONFIG_LABEL) if node else None
        for config_map, default in self._plugin_config_maps():
            key = selected_plugin_config(config_map.data, label, default)
            found = plugin_sharing(config_map.data[key]) if key is not None else None
            if found is not None:
                return found
        return None

    def _plugin_config_maps(self) -> Iterator[tuple[ConfigMap, str | None]]:
        """ConfigMaps the node's device plugin reads its config from, with the default key:
        those its pods mount, and the GPU Operator's ``spec.devicePlugin.config``."""
        name, default = self._policy_plugin_config()
        pods = list(map(_POD, self.stack_pods("device-plugin")))
        namespaces = set(map(_NAMESPACE, pods))
        for pod in pods:
            for mounted in pod.spec.config_maps:
                found = self.facts.config_map(pod.metadata.namespace, mounted)
                if found is not None:
                    yield found, default
        if name:
            for config_map in self.facts.config_maps:
                meta = config_map.metadata
                if meta.name == name and (not namespaces or meta.namespace in namespaces):
                    yield config_map, default

    def _policy_plugin_config(self) -> tuple[str | None, str | None]:
        """ClusterPolicy ``spec.devicePlugin.config`` name and default key."""
        for policy in self.facts.cluster_policies:
            plugin = policy.spec.get("devicePlugin")
            config = plugin.get("config") if isinstance(plugin, dict) else None
            if isinstance(config, dict) and config.get("name"):
                default = config.get("default")
                return str(config["name"]), str(default) if default else None
        return None, None

    @cached_property
    def gpu_count_ambiguous(self) -> str | None:
        """Why the capacity cannot be read as physical GPUs: a whole multiple of the GPUs
        seen with nothing saying sharing (no GFD sharing label, no plugin config found)
        is shared replicas as likely as missing GPUs. None when it can be read."""
        resources = self.gpu_resources
        seen = self._seen_gpus
        if resources is None or resources.mode != "whole" or not resources.physical or not seen:
            return None
        if resources.physical <= seen or resources.physical % seen or self.plugin_sharing is not None:
            return None
        return (
            f"{GPU} capacity {resources.physical} is {resources.physical // seen} x {seen} GPUs seen: "
            "time-slicing/MPS replicas or missing GPUs; no GFD sharing label and no device-plugin "
            "config (ConfigMap) found to tell"
        )

    @cached_property
    def expected_gpus(self) -> int | None:
        """Physical GPUs the node should have: the largest count of *physical* GPUs any
        source reports (GFD's count and the capacity only where they count whole GPUs,
        see gpus.py), so MIG instances and shared replicas are never taken for GPUs. A
        capacity that may be shared replicas (``gpu_count_ambiguous``) does not count."""
        capacity = None if self.gpu_count_ambiguous else self._capacity_gpus()
        return max(filter(None, (self._label_gpus, capacity, self._smi_gpus())), default=None)

    @cached_property
    def _seen_gpus(self) -> int | None:
        """Physical GPUs GFD or nvidia-smi counted (not the capacity)."""
        return max(filter(None, (self._label_gpus, self._smi_gpus())), default=None)

    @cached_property
    def allocatable_resources(self) -> GpuResources | None:
        """``gpus.gpu_resources`` of the node's labels and allocatable resources (None without
        the node object): read by the device plugin's check and the node report's usable GPUs."""
        node = self.node
        return None if node is None else gpu_resources(node.metadata.labels, node.status.allocatable)

    @cached_property
    def expected_units(self) -> int | None:
        """Devices the device plugin should advertise: the capacity, or physical GPUs times
        the sharing replicas where the capacity counts whole or shared GPUs."""
        resources = self.gpu_resources
        if resources is None:
            return self.expected_gpus
        physical = self.expected_gpus
        if resources.mode in ("whole", "shared") and physical:
            return max(resources.advertised, physical * resources.replicas)
        return resources.advertised or None

    @cached_property
    def _label_gpus(self) -> int | None:
        node = self.node
        return physical_gpus_labelled(node.metadata.labels) if node else None

    def _capacity_gpus(self) -> int | None:
        resources = self.gpu_resources
        return resources.physical if resources else None

    def _smi_gpus(self) -> int | None:
        smi = self.nvidia_smi
        return smi.attached_gpus if smi else None


#: Distributions whose kubelet version says so (``v1.31.4+k3s1``), with what says it.
_KUBELET_FLAVOURS = (("k3s", "+k3s"), ("rke2", "+rke2"))


def _containerd(files: dict[str, str], path: str, major: int | None, _text: str = "") -> ContainerdConfig:
    """Parsed once per distinct set of files and containerd version: a fleet's nodes
    mostly share one or two configs. (``_text``: the file's, as ``_parsed`` passes it.)"""
    key = (path, major, tuple(sorted(files.items())))
    known = _CONTAINERD_SEEN.get(key)
    if known is None:
        try:
            known = parse_containerd_config(files, path, major)
        except ParseError as exc:
            known = exc
        if len(_CONTAINERD_SEEN) >= _CONTAINERD_SEEN_MAX:
            _CONTAINERD_SEEN.clear()
        _CONTAINERD_SEEN[key] = known
    if isinstance(known, ParseError):
        raise ParseError(str(known))
    return known


#: Parsed containerd configs by (path, containerd major version, files); bounded so odd
#: fleets cannot grow it.
_CONTAINERD_SEEN: dict[tuple[str, int | None, tuple[tuple[str, str], ...]],
                       ContainerdConfig | ParseError] = {}
_CONTAINERD_SEEN_MAX = 64


def _containerd_setup(config: ContainerdConfig) -> RuntimeSetup:
    """The runtime setup of a parsed config, made once per config: nodes that share one
    (``_containerd``) share its setup and the NVIDIA runtimes it lists."""
    known = _SETUPS.get(id(config))
    if known is None or known[0] is not config:
        if len(_SETUPS) >= _CONTAINERD_SEEN_MAX:
            _SETUPS.clear()
        known = _SETUPS[id(config)] = (config, from_containerd(config))
    return known[1]


#: By the config's id: the config and its setup.
_SETUPS: dict[int, tuple[ContainerdConfig, RuntimeSetup]] = {}


#: Line breaks of ``str.splitlines`` besides ``\n`` in ASCII text.
_OTHER_BREAKS = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e")


def _joined_lines(text: str) -> str | None:
    """``"\n".join(text.splitlines())`` without splitting, where that is ``text`` less its
    last line break (ASCII text whose only breaks are ``\n``); None otherwise."""
    if not text.isascii():
        return None
    for brk in _OTHER_BREAKS:  # (a loop: no generator for each file of each node)
        if brk in text:
            return None
    return text[:-1] if text.endswith("\n") else text


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


_BLOCKING = ("NoSchedule", "NoExecute")


def _selects(ds: DaemonSet, node: Node) -> bool:
    return selects(ds.spec.template.spec, node.metadata.labels)


def blocking_taint(ds: DaemonSet, node: Node) -> Taint | None:
    """The first NoSchedule/NoExecute taint of ``node`` that ``ds`` selects the node for but
    does not tolerate (the DaemonSet controller then wants no pod there), else None."""
    if not _selects(ds, node):
        return None
    tolerations = ds.spec.template.spec.tolerations
    blocking = (t for t in node.spec.taints if t.effect in _BLOCKING and not _tolerated(t, tolerations))
    return next(blocking, None)


def _targets(ds: DaemonSet, node: Node) -> bool:
    """Approximates the DaemonSet controller: nodeSelector, required node affinity and
    NoSchedule/NoExecute taints."""
    if not _selects(ds, node):
        return False
    tolerations = ds.spec.template.spec.tolerations
    return all(t.effect not in _BLOCKING or _tolerated(t, tolerations) for t in node.spec.taints)


# The DaemonSet controller adds tolerations for these itself.
_DAEMONSET_TOLERATED = frozenset(
    {
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
        "node.kubernetes.io/disk-pressure",
        "node.kubernetes.io/memory-pressure",
        "node.kubernetes.io/pid-pressure",
        "node.kubernetes.io/unschedulable",
        "node.kubernetes.io/network-unavailable",
    }
)


def _tolerated(taint: Taint, tolerations: Sequence[Toleration]) -> bool:
    if taint.key in _DAEMONSET_TOLERATED:
        return True
    for tol in tolerations:
        if tol.effect and tol.effect != taint.effect:
            continue
        if tol.operator == "Exists" and (not tol.key or tol.key == taint.key):
            return True
        if tol.key == taint.key and tol.value == taint.value:
            return True
    return False


def platform_of(node: Node | None) -> Platform:
    """A node's platform profile from its labels and versions (generic without a node)."""
    if node is None:
        return GENERIC
    info = node.status.node_info
    return detect(node.metadata.labels, info.kubelet_version, info.os_image, info.container_runtime_version)
