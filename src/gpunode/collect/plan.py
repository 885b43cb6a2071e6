"""Which node-scoped extras to fetch, decided from the slim pods and nodes alone.

Pure functions: they name the API calls (logs, execs, scrapes) and where each
answer goes in the bundle, so the policy is testable without a server. Only
GPU-stack pods are considered, and logs only where something is wrong.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from gpunode.collect.classify import cluster_scoped, component_of
from gpunode.collect.mounts import host_path
from gpunode.collect.slim import Container, ContainerStatus, Node, Pod
from gpunode.collect.targets import (
    CONTAINERD_CONFIG_DEFAULT,
    CONTAINERD_DROP_IN_DEFAULT,
    DEFAULT_METRICS_PORTS,
    DOCKER_DAEMON_JSON,
    DRIVER_PROC_FILES,
    KEEP_FAILED_OUTPUT,
    METRICS_COMPONENTS,
    MOFED_COMMANDS,
    NODE_COMMANDS,
    PRIVILEGED_COMMANDS,
    VALIDATIONS_DIR,
)
from gpunode.gpus import gpu_evidence, nfd_nvidia_label
from gpunode.owner_states import failed_states
from gpunode.relazy import lazy_compile

LOG_TAIL_LINES = 500
LOG_LIMIT_BYTES = 256 * 1024
#: Waiting reasons that mean the container never ran, so it has no log to read.
_NEVER_RAN = frozenset({"ContainerCreating", "PodInitializing", "ErrImagePull",
                        "ImagePullBackOff", "InvalidImageName", "CreateContainerConfigError"})
#: Device plugins look healthy while advertising nothing: their logs say why.
_DEVICE_PLUGINS = frozenset({"device-plugin", "rdma-device-plugin", "sriov-device-plugin"})
#: Node components whose log is read while they run: the SR-IOV Network Operator's config
#: daemon keeps running, ready, after a policy it could not apply (VFs it could not create or
#: configure), and only its log says why.
_READ_RUNNING = frozenset({"sriov-config-daemon"})
_DEVICE_RESOURCE_PREFIXES = ("nvidia.com/", "rdma/")
#: nvidia-smi runs in the driver pod; with a host driver, in one of these instead.
_HOST_DRIVER_FALLBACK = ("device-plugin", "container-toolkit")


@dataclass(frozen=True)
class LogTarget:
    namespace: str
    pod: str
    container: str
    previous: bool
    node: str = ""
    #: read from the log's start (limitBytes alone), not its last lines: what a program
    #: says once as it starts (NCCL's transport choice)
    head: bool = False

    @property
    def bundle_path(self) -> str:
        suffix = ".previous.log" if self.previous else ".log"
        return f"logs/{self.namespace}/{self.pod}/{self.container}{suffix}"


@dataclass(frozen=True)
class ExecTarget:
    node: str
    namespace: str
    pod: str
    container: str
    argv: tuple[str, ...]
    bundle_path: str
    keep_failed_output: bool = False
    unpack_tar: bool = False


@dataclass(frozen=True)
class ScrapeTarget:
    node: str
    namespace: str
    pod: str
    port: int
    bundle_path: str
    component: str = ""
    container: str = ""


@dataclass(frozen=True)
class StackPod:
    """A GPU-stack pod with the component the catalog gave it."""

    component: str
    pod: Pod


def stack_pods(pods: Iterable[Pod]) -> list[StackPod]:
    found = []
    for pod in pods:
        component = component_of(pod)
        if component:
            found.append(StackPod(component, pod))
    return found


def plugin_config_maps(stack: Iterable[StackPod], policy_names: Iterable[str]) -> set[tuple[str, str]]:
    """(namespace, name) of the ConfigMaps the device plugin reads its config from: those
    its pods mount, and those the ClusterPolicy names (in the plugin's namespaces, or in
    every stack namespace while no plugin pod runs)."""
    entries = list(stack)
    plugins = [e.pod for e in entries if e.component == "device-plugin"]
    found = {
        (pod.metadata.namespace, v.config_map.name)
        for pod in plugins
        for v in pod.spec.volumes
        if v.config_map is not None and v.config_map.name
    }
    namespaces = {p.metadata.namespace for p in plugins} or {e.pod.metadata.namespace for e in entries}
    found.update((ns, name) for name in policy_names for ns in namespaces)
    return found


def by_node(stack: Iterable[StackPod]) -> dict[str, dict[str, list[Pod]]]:
    """node -> component -> pods on it (pods not yet scheduled are left out)."""
    table: dict[str, dict[str, list[Pod]]] = defaultdict(lambda: defaultdict(list))
    for entry in stack:
        if entry.pod.spec.node_name:
            table[entry.pod.spec.node_name][entry.component].append(entry.pod)
    return table


def gpu_nodes(nodes: Iterable[Node], stack_by_node: dict[str, dict[str, list[Pod]]]) -> list[str]:
    """Nodes with GPU evidence (gpus.gpu_evidence): resources, labels or GPU-stack pods."""
    names = set()
    for node in nodes:
        status = node.status
        components = stack_by_node.get(node.metadata.name, {})
        resources = {**status.capacity, **status.allocatable}
        if gpu_evidence(node.metadata.labels, resources, components, ()):
            names.add(node.metadata.name)
    for name, components in stack_by_node.items():
        if gpu_evidence({}, {}, components, ()):
            names.add(name)
    return sorted(names)


def short_nodes(nodes: Iterable[Node]) -> set[str]:
    """Nodes advertising fewer GPU/RDMA devices than they have, or none of one kind."""
    short = set()
    for node in nodes:
        capacity, allocatable = node.status.capacity, node.status.allocatable
        for name, value in allocatable.items():
            if name.startswith(_DEVICE_RESOURCE_PREFIXES) and (
                    _count(value) == 0 or _count(value) < _count(capacity.get(name, value))):
                short.add(node.metadata.name)
    return short


def _count(quantity: str) -> int:
    return int(quantity) if quantity.isdigit() else 0


#: GFD's labels: the physical GPU count (MIG and sharing left out) and the multi-node NVLink
#: domain (<ClusterUUID>.<CliqueId>) a node's GPUs registered in.
GPU_COUNT_LABEL = "nvidia.com/gpu.count"
CLIQUE_LABEL = "nvidia.com/gpu.clique"


def link_nodes(nodes: Iterable[Node], stack_by_node: dict[str, dict[str, list[Pod]]]) -> dict[str, str]:
    """GPU links the cluster lists show a node has but cannot judge, by node: NVLink where
    GPUs can be joined (two or more on the node, or GFD's multi-node NVLink domain label),
    InfiniBand/RoCE where RDMA devices are advertised (``rdma/*``) or a MOFED/DOCA driver
    pod runs. Their state (links up, error counters, fabric registration, port state) is
    only in the node's own files or a gpunode agent's facts, never in a list. A Mellanox
    PCI label alone is no such sign: cloud VMs' Ethernet NICs carry it too."""
    found = {}
    for node in nodes:
        labels, capacity = node.metadata.labels, node.status.capacity
        why = []
        gpus = _count(labels.get(GPU_COUNT_LABEL, "")) or _count(capacity.get("nvidia.com/gpu", ""))
        if labels.get(CLIQUE_LABEL):
            why.append(f"NVLink domain {labels[CLIQUE_LABEL]}")
        elif gpus >= 2:
            why.append(f"{gpus} GPUs (NVLink)")
        rdma = sorted(k for k in capacity if k.startswith("rdma/"))
        if rdma:
            why.append(f"RDMA ({rdma[0]})")
        elif "ofed" in stack_by_node.get(node.metadata.name, {}):
            why.append("RDMA (MOFED driver pod)")
        if why:
            found[node.metadata.name] = ", ".join(why)
    return found


def state_failed_owners(nodes: Iterable[Node]) -> dict[str, frozenset[str]]:
    """For each node whose state labels say a component's last run failed (the MIG
    manager's or the vGPU device manager's layout, the CC manager's mode, a driver
    upgrade: ``gpunode.owner_states``), the components that say so. They keep
    running, ready, and only their log says why."""
    found = {}
    for node in nodes:
        owners = frozenset(state.owner for _, _, state in failed_states(node.metadata.labels))
        if owners:
            found[node.metadata.name] = owners
    return found


def log_targets(stack: Iterable[StackPod], nodes: Sequence[str] = (),
                short: set[str] | None = None,
                failed: Mapping[str, frozenset[str]] | None = None) -> list[LogTarget]:
    """Logs of GPU-stack containers that fail, restart or hold a pod in init — and, while
    they run, of device plugins on nodes that advertise fewer devices than they have
    (``short``), of the components whose state label on their node says their last run
    failed (``failed``, from ``state_failed_owners``), of the
    SR-IOV config daemon (``_READ_RUNNING``), and of
    the operators, whatever the nodes: an operator whose every reconcile fails stays
    running and ready, and only its log says why. (A node component's cluster-wide pod,
    nfd-master, is not read here but by ``nfd_master_logs``, only on a symptom: its log
    changes every node's judgement.)"""
    wanted = set(nodes)
    targets = []
    for entry in stack:
        pod = entry.pod
        operator = cluster_scoped(entry.component)
        if wanted and pod.spec.node_name not in wanted and not operator:
            continue
        node = pod.spec.node_name
        quiet = operator or entry.component in _READ_RUNNING or (
            entry.component in _DEVICE_PLUGINS and node in (short or set())) or (
            entry.component in (failed or {}).get(node, ()))
        for status in _troubled(pod, include_running=quiet):
            meta = pod.metadata
            node = pod.spec.node_name
            targets.append(LogTarget(meta.namespace, meta.name, status.name, False, node))
            if status.restart_count > 0:
                targets.append(LogTarget(meta.namespace, meta.name, status.name, True, node))
    return targets


#: NCCL_DEBUG levels at which NCCL logs the transport it chose ("NET/IB : Using ...",
#: "NET/IB : No device found.", "NET/Socket : Using ...", "Using network Socket" are INFO
#: lines): below them a GPU job's log does not say, so it is not read.
_NCCL_VERBOSE = frozenset({"INFO", "TRACE"})
#: GPU workloads per node whose log start is read for NCCL's transport.
NCCL_LOGS_PER_NODE = 2


def nccl_verbose(pod: Pod) -> bool:
    """A pod some container of which runs NCCL at INFO or TRACE (``NCCL_DEBUG`` in its env)."""
    return any(_nccl_verbose(c) for c in pod.spec.containers)


def _nccl_verbose(container: Container) -> bool:
    return any(e.name == "NCCL_DEBUG" and (e.value or "").strip().upper() in _NCCL_VERBOSE
               for e in container.env)


def nccl_log_targets(pods: Iterable[Pod], nodes: Iterable[str]) -> list[LogTarget]:
    """The start of the logs of running workload containers that run NCCL at INFO or TRACE on
    ``nodes`` (at most ``NCCL_LOGS_PER_NODE`` pods a node): NCCL names its transport as it
    initialises, so a job that fell back to sockets on a node with InfiniBand/RoCE says so
    there while it runs, failing nothing (checks: nccl_socket_fallback)."""
    wanted = set(nodes)
    taken: dict[str, int] = defaultdict(int)
    targets = []
    for pod in pods:
        node = pod.spec.node_name
        if node not in wanted or taken[node] >= NCCL_LOGS_PER_NODE or component_of(pod):
            continue
        running = {s.name for s in pod.status.container_statuses if s.state.running is not None}
        names = [c.name for c in pod.spec.containers if c.name in running and _nccl_verbose(c)]
        if names:
            taken[node] += 1
            targets += [LogTarget(pod.metadata.namespace, pod.metadata.name, name, False, node, head=True)
                        for name in names]
    return targets


#: Owners of a node component's cluster-wide pods (nfd-master), as ``facts`` counts them.
_CLUSTER_OWNERS = frozenset({"ReplicaSet", "StatefulSet", "Deployment"})


def nfd_label_gaps(nodes: Iterable[Node], candidates: Iterable[str]) -> list[str]:
    """GPU nodes among ``candidates`` that carry no NFD label of the NVIDIA PCI vendor: what
    nfd-master publishes (or drops, and logs why) is missing there."""
    wanted = set(candidates)
    return sorted(
        n.metadata.name for n in nodes
        if n.metadata.name in wanted and not any(nfd_nvidia_label(k) for k in n.metadata.labels)
    )


def nfd_master_logs(stack: Iterable[StackPod], gaps: Sequence[str]) -> list[LogTarget]:
    """The current log of every running nfd-master container (the Deployment's pod, not the
    workers nor nfd-gc), only while some GPU node lacks NFD's NVIDIA label (``gaps``): its
    log speaks of every node (labels it refuses, nodes it may not update), so a healthy
    fleet, all labelled, never pays for it."""
    if not gaps:
        return []
    return [
        LogTarget(sp.pod.metadata.namespace, sp.pod.metadata.name, status.name, False, sp.pod.spec.node_name)
        for sp in stack
        if sp.component == "nfd" and "master" in sp.pod.metadata.name
        and any(o.kind in _CLUSTER_OWNERS for o in sp.pod.metadata.owner_references)
        for status in sp.pod.status.container_statuses
        if status.state.running
    ]


def _troubled(pod: Pod, *, include_running: bool = False) -> list[ContainerStatus]:
    inits = [s for s in pod.status.init_container_statuses if _init_stuck(s)]
    mains = [s for s in pod.status.container_statuses
             if _main_failing(s, pod.status.phase) or (include_running and s.state.running)]
    return inits + mains


def _init_stuck(status: ContainerStatus) -> bool:
    state = status.state
    if state.terminated:
        return state.terminated.exit_code != 0
    if state.waiting:
        return status.restart_count > 0 or state.waiting.reason not in _NEVER_RAN
    return state.running is not None  # an init container still running holds the pod


def _main_failing(status: ContainerStatus, phase: str) -> bool:
    state = status.state
    if status.restart_count > 0:
        return True
    if state.terminated:
        return state.terminated.exit_code != 0
    if state.waiting:
        return state.waiting.reason not in _NEVER_RAN
    return phase == "Running" and state.running is not None and not status.ready


def _running(pod: Pod, container: str) -> bool:
    return pod.status.phase == "Running" and any(
        s.name == container and s.state.running for s in pod.status.container_statuses)


def _first_running(pods: Iterable[Pod], prefer: str = "") -> tuple[Pod, Container] | None:
    """The first running container, the ``prefer``-named one first (sidecars come later)."""
    for pod in pods:
        ordered = sorted(pod.spec.containers, key=lambda c: c.name != prefer)
        for container in ordered:
            if _running(pod, container.name):
                return pod, container
    return None


def exec_targets(node: str, components: dict[str, list[Pod]]) -> list[ExecTarget]:
    """nvidia-smi (and dmesg) in the driver pod — or a fallback with a host driver."""
    chosen = _command_pod(components)
    if chosen is None:
        return []
    pod, container = chosen
    where = (node, pod.metadata.namespace, pod.metadata.name, container.name)
    targets = []
    for argv, name in NODE_COMMANDS.items():
        if argv[0] in PRIVILEGED_COMMANDS and not _privileged(container):
            continue
        targets.append(ExecTarget(*where, argv, f"nodes/{node}/cmd/{name}",
                                  keep_failed_output=argv in KEEP_FAILED_OUTPUT))
    for path in DRIVER_PROC_FILES:
        targets.append(ExecTarget(*where, ("cat", path), f"nodes/{node}/files{path}"))
    host = host_path(pod, container, VALIDATIONS_DIR) or VALIDATIONS_DIR
    targets.append(ExecTarget(*where, ("tar", "-C", VALIDATIONS_DIR, "-cf", "-", "."),
                              f"nodes/{node}/files{host}", unpack_tar=True))
    return targets


def mofed_targets(node: str, components: dict[str, list[Pod]]) -> list[ExecTarget]:
    """``ibstat`` and ``ibv_devinfo -v`` in the node's running MOFED container, if any."""
    found = _first_running(components.get("ofed", []), prefer="mofed-container")
    if found is None:
        return []
    pod, container = found
    where = (node, pod.metadata.namespace, pod.metadata.name, container.name)
    return [ExecTarget(*where, argv, f"nodes/{node}/cmd/{name}") for argv, name in MOFED_COMMANDS.items()]


def _command_pod(components: dict[str, list[Pod]]) -> tuple[Pod, Container] | None:
    if components.get("driver"):
        return _first_running(components["driver"], prefer="nvidia-driver-ctr")
    for fallback in _HOST_DRIVER_FALLBACK:
        found = _first_running(components.get(fallback, []))
        if found:
            return found
    return None


def _privileged(container: Container) -> bool:
    return bool(container.security_context and container.security_context.privileged)


def containerd_targets(node: str, components: dict[str, list[Pod]]) -> list[ExecTarget]:
    """``cat`` of the containerd config and the NVIDIA drop-in (Docker: daemon.json), as the
    toolkit pod sees them."""
    found = _first_running(components.get("container-toolkit", []))
    if found is None:
        return []
    pod, container = found
    env = {e.name: e.value or "" for e in container.env}
    if env.get("RUNTIME") == "crio":
        return crio_targets(node, pod, container, env)
    if env.get("RUNTIME") == "docker":  # the toolkit mounts /etc/docker as its config dir
        inside = env.get("DOCKER_CONFIG") or env.get("RUNTIME_CONFIG") or "/runtime/config-dir/daemon.json"
        return [ExecTarget(node, pod.metadata.namespace, pod.metadata.name, container.name,
                           ("cat", inside), f"nodes/{node}/files/{DOCKER_DAEMON_JSON.lstrip('/')}")]
    wanted = ((env.get("CONTAINERD_CONFIG") or env.get("RUNTIME_CONFIG")
               or "/runtime/config-dir/config.toml", CONTAINERD_CONFIG_DEFAULT),
              (env.get("RUNTIME_DROP_IN_CONFIG") or "/runtime/config-dir.d/99-nvidia.toml",
               CONTAINERD_DROP_IN_DEFAULT))
    targets = []
    for inside, fallback in wanted:
        host = host_path(pod, container, inside) or fallback
        targets.append(ExecTarget(node, pod.metadata.namespace, pod.metadata.name,
                                  container.name, ("cat", inside),
                                  f"nodes/{node}/files/{host.lstrip('/')}"))
    return targets


#: Where the GPU Operator's toolkit container sees CRI-O's drop-in directory
#: (/etc/crio/crio.conf.d on the host) and writes its 99-nvidia.conf.
CRIO_DROP_IN_INSIDE = "/runtime/config-dir/99-nvidia.conf"


def crio_targets(node: str, pod: Pod, container: Container, env: dict[str, str]) -> list[ExecTarget]:
    """On CRI-O, as the toolkit pod sees them: the drop-in directory it writes its config
    into (CRIO_CONFIG / RUNTIME_CONFIG) and every OCI hook directory it mounts (the
    operator's crio-hooks volume: /usr/share/containers/oci/hooks.d, or OpenShift's
    /run/containers/oci/hooks.d), each as a tar archive unpacked at its host path, where
    the CRI-O checks read the drop-ins and the hook files. Only directories a hostPath
    mount places are read (a pod spec without mounts names none)."""
    config = env.get("CRIO_CONFIG") or env.get("RUNTIME_CONFIG") or CRIO_DROP_IN_INSIDE
    wanted = [posixpath.dirname(config)]
    wanted += [m.mount_path for m in container.volume_mounts
               if (host_path(pod, container, m.mount_path) or "").rstrip("/").endswith("/oci/hooks.d")]
    targets = []
    for inside in dict.fromkeys(posixpath.normpath(d) for d in wanted):
        host = host_path(pod, container, inside) if container.volume_mounts else None
        if host is not None:
            targets.append(ExecTarget(node, pod.metadata.namespace, pod.metadata.name, container.name,
                                      ("tar", "-C", inside, "-cf", "-", "."),
                                      f"nodes/{node}/files/{host.strip('/')}", unpack_tar=True))
    return targets


def scrape_targets(node: str, components: dict[str, list[Pod]]) -> list[ScrapeTarget]:
    """One scrape per exporter pod that is running on the node."""
    targets = []
    for component, file_name in METRICS_COMPONENTS.items():
        found = _first_running(components.get(component, []))
        if found:
            pod, container = found
            port = _metrics_port(container, DEFAULT_METRICS_PORTS[component])
            targets.append(ScrapeTarget(node, pod.metadata.namespace, pod.metadata.name, port,
                                        f"nodes/{node}/metrics/{file_name}", component, container.name))
    return targets


def _metrics_port(container: Container, default: int) -> int:
    ports = {p.name: p.container_port for p in container.ports}
    for name in ("metrics", "http-metrics", "gpu-metrics"):
        if name in ports:
            return ports[name]
    return next(iter(ports.values()), default)


def dcgm_scrape_short(body: bytes) -> bool:
    """A DCGM scrape without any per-GPU ``DCGM_FI_DEV_*`` series (one labelled with its
    ``gpu`` or ``UUID``): the exporter runs but serves no GPU, and only its log says why.
    (No ``DCGM_FI_PROF_*`` series is no symptom: the operator's default counters leave
    them out, as the recorded H200 scrape shows.)"""
    return _PER_GPU_SERIES.search(body) is None


_PER_GPU_SERIES = lazy_compile(rb'(?m)^DCGM_FI_DEV_\w*\{[^\n]*\b(?:gpu|UUID)="[^"\n]')


def exporter_log(target: ScrapeTarget, body: bytes) -> LogTarget | None:
    """The running DCGM exporter's current log, when its scrape came back short."""
    if target.component != "dcgm-exporter" or not target.container or not dcgm_scrape_short(body):
        return None
    return LogTarget(target.namespace, target.pod, target.container, False, target.node)
