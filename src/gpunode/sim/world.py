"""The simulated cluster in memory: API objects, logs and per-node host facts.

The builder fills a healthy World; faults edit it; `finalize` derives what the real
controllers would (DaemonSet status from pods, pods removed from nodes a DaemonSet
no longer selects); the writer renders it. Host-side files (nvidia-smi, dmesg,
containerd config, metrics) are rendered from `Host` facts at write time, so a fault
changes a fact ("GPU 4 is lost") and every file that shows it stays consistent.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from gpunode.sim import ids
from gpunode.sim.k8s import Obj
from gpunode.sim.models import GpuModel, OsInfo
from gpunode.sim.podstatus import Ctr, PodPlace
from gpunode.sim.scenario import GpuNode, Scenario

# PCI buses of the 8 GPUs on an HGX H100 board, in NVML index order.
HGX_BUSES = ("18", "2A", "3A", "5D", "9A", "AB", "BA", "DB")
NIC_BUSES = ("29", "A9", "1A", "3B", "5E", "9B", "AC", "BB")


@dataclass
class Gpu:
    """One physical GPU and its health as the driver sees it."""

    index: int
    bus: str
    uuid: str
    serial: str
    lost: bool = False
    dbe_volatile: int = 0
    remapped_unc: int = 0
    remap_pending: bool = False
    last_xid: int = 0
    mig: bool = False
    vgpu: bool = False  # a vGPU inside a guest VM: nvidia-smi says VGPU, DCGM has no temperature

    @property
    def bus_id(self) -> str:
        """NVML bus id, e.g. `00000000:18:00.0`."""
        return f"00000000:{self.bus}:00.0"

    @property
    def kernel_pci(self) -> str:
        """The short form the kernel log uses, e.g. `0000:18:00`."""
        return f"0000:{self.bus.lower()}:00"


@dataclass
class Host:
    """What a probe on the node itself would observe."""

    reachable: bool = True
    driver_loaded: bool = True
    host_driver: bool = False
    nvml_error: str | None = None
    fabric_state: str = "Completed"
    fabric_status: str = "Success"
    kernel_events: list[str] = field(default_factory=list)
    extra_modules: list[tuple[str, int, str]] = field(default_factory=list)
    runtime_patched: bool = True
    validations: dict[str, str] = field(default_factory=dict)
    dcgm_scrape: bool = True
    rdma_ports_active: bool = True
    mofed_loaded: bool = True
    #: nvidia_peermem loads with the driver where the node has RDMA NICs and MOFED runs
    peermem_loaded: bool = True
    nvidia_smi: bool = True
    booted_at: datetime | None = None
    secure_boot: bool = False
    module_version: str | None = None
    mig_profiles: tuple[str, ...] = ()
    #: The links as collected (sim/links.py): cmd file name -> text; empty: not collected
    links: dict[str, str] = field(default_factory=dict)
    #: GPU bus id -> (cluster UUID, clique id, health summary) in nvidia-smi's <fabric>
    fabric_gpus: dict[str, tuple[str, str, str]] = field(default_factory=dict)


@dataclass
class NodeState:
    """A node: its API object plus, for GPU nodes, GPUs and host facts."""

    name: str
    obj: Obj
    index: int
    ip: str
    spec: GpuNode | None = None
    model: GpuModel | None = None
    os: OsInfo | None = None
    gpus: list[Gpu] = field(default_factory=list)
    host: Host = field(default_factory=Host)
    data: bool = True

    @functools.cached_property
    def joined(self) -> datetime:
        """When the node registered (metadata.creationTimestamp)."""
        return ids.parse_time(self.obj["metadata"]["creationTimestamp"])

    @property
    def is_gpu(self) -> bool:
        return self.spec is not None

    @property
    def labels(self) -> dict[str, str]:
        labels: dict[str, str] = self.obj["metadata"]["labels"]
        return labels

    @property
    def ready(self) -> bool:
        for cond in self.obj["status"]["conditions"]:
            if cond["type"] == "Ready":
                return bool(cond["status"] == "True")
        return False


@dataclass
class Workload:
    """A GPU training pod the scheduler places at finalize time."""

    name: str
    gpus: int
    rdma: bool
    #: NCCL_DEBUG=INFO: NCCL logs its transport choice (and the pod's log is kept)
    nccl_info: bool = False


@dataclass
class World:
    """Everything one bundle will contain."""

    scenario: Scenario
    collected_at: datetime
    installed_at: datetime
    nodes: dict[str, NodeState] = field(default_factory=dict)
    pods: dict[str, Obj] = field(default_factory=dict)
    daemonsets: dict[str, Obj] = field(default_factory=dict)
    deployments: dict[str, Obj] = field(default_factory=dict)
    events: list[Obj] = field(default_factory=list)
    logs: dict[str, str] = field(default_factory=dict)
    resources: dict[str, list[Obj]] = field(default_factory=dict)
    ds_pods: dict[tuple[str, str], str] = field(default_factory=dict)
    ctrs: dict[str, list[Ctr]] = field(default_factory=dict)
    places: dict[str, PodPlace] = field(default_factory=dict)
    workloads: list[Workload] = field(default_factory=list)
    ip_counters: dict[str, int] = field(default_factory=dict)
    ds_defs: dict[str, Any] = field(default_factory=dict)
    gpu_use: dict[str, list[Any]] = field(default_factory=dict)
    #: Nodes where the training pod placed there came without its RDMA resource, so NCCL
    #: finds no InfiniBand device and falls back to sockets (``nccl_socket_fallback``)
    nccl_socket_nodes: set[str] = field(default_factory=set)
    warnings: list[str] = field(default_factory=list)
    with_logs: bool = True
    _owned: set[str] = field(default_factory=set)

    # -- lookups ---------------------------------------------------------------

    def node(self, name: str) -> NodeState:
        return self.nodes[name]

    def gpu_nodes(self) -> list[NodeState]:
        return [n for n in self.nodes.values() if n.is_gpu]

    def pod(self, key: str) -> Obj:
        """A pod for editing; shared template parts are copied on first edit."""
        if key not in self._owned:
            self.pods[key] = copy.deepcopy(self.pods[key])
            self._owned.add(key)
        return self.pods[key]

    def ds_pod_key(self, operand: str, node: str) -> str | None:
        """Key (`ns/name`) of the pod of operand `operand` on `node`, if any."""
        key = self.ds_pods.get((operand, node))
        return key if key in self.pods else None

    def containers(self, key: str) -> list[Ctr]:
        """The pod's container states (init first); edit and `set_containers` back."""
        return list(self.ctrs[key])

    def set_containers(self, key: str, ctrs: list[Ctr]) -> None:
        """Replace a pod's container states; its status is re-derived at finalize."""
        self.ctrs[key] = ctrs

    def remove_pod(self, key: str) -> None:
        """Delete a pod and its logs."""
        self.pods.pop(key, None)
        self.ctrs.pop(key, None)
        self.places.pop(key, None)
        prefix = key + "/"
        for log_key in [k for k in self.logs if k.startswith(prefix)]:
            del self.logs[log_key]

    # -- logs ------------------------------------------------------------------

    def set_log(self, pod_key: str, container: str, text: str, previous: bool = False) -> None:
        """Store a container log (`previous` = the last terminated instance)."""
        if self.with_logs:
            self.logs[f"{pod_key}/{container}{'.previous' if previous else ''}"] = text

    def log(self, pod_key: str, container: str) -> str:
        return self.logs.get(f"{pod_key}/{container}", "")

    # -- events ----------------------------------------------------------------

    def add_event(self, ev: Obj) -> None:
        self.events.append(ev)

    def ago(self, **delta: Any) -> datetime:
        """A moment before collection time, e.g. `ago(minutes=5)`."""
        return self.collected_at - timedelta(**delta)

    def later(self, **delta: Any) -> datetime:
        """A moment after the GPU stack was installed."""
        return self.installed_at + timedelta(**delta)


def make_gpus(node: str, count: int) -> list[Gpu]:
    """GPUs of an HGX board, with stable UUIDs and serials."""
    return [
        Gpu(i, HGX_BUSES[i], ids.gpu_uuid(node, i), str(1652823000000 + ids.number(f"sn:{node}:{i}", 999999)))
        for i in range(count)
    ]
