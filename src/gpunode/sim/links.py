"""A node's links as ``collect`` stores them (docs/bundle-format.md): ``nvidia-smi nvlink
-s`` / ``-e``, ``nvidia-smi topo -m`` and the grep of ``/sys/class/infiniband``, in the
shapes real nodes print (tests/fixtures/real/interconnect). Written only for nodes whose
scenario turns the links on (the interconnect faults do, for every GPU node), so other
scenarios keep their bundles as they were.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpunode.sim.world import NodeState

#: NVLinks per GPU and the speed nvidia-smi prints, for SXM boards (every link wired).
_NVLINKS = {"H100": (18, "26.562"), "H200": (18, "26.562"), "A100": (12, "25"), "B200": (18, "53.125")}
ZERO_COUNTERS = (
    "symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors",
    "port_rcv_remote_physical_errors", "port_xmit_discards", "local_link_integrity_errors",
    "excessive_buffer_overrun_errors",
)  # fmt: skip


@dataclass
class Port:
    """One HCA port as sysfs shows it."""

    device: str
    state: str = "4: ACTIVE"
    phys: str = "5: LinkUp"
    rate: str = "400 Gb/sec (4X NDR)"
    layer: str = "InfiniBand"
    netdev: str | None = None
    mtu: int | None = None
    counters: dict[str, int] = field(default_factory=dict)
    vfs: tuple[int, int] | None = None  # (sriov_numvfs, sriov_totalvfs)


@dataclass
class LinkPlan:
    """What a node's links look like; healthy by default."""

    ports: list[Port]
    inactive: dict[int, tuple[int, ...]] = field(default_factory=dict)  # GPU index -> links down
    errors: dict[tuple[int, int], dict[str, int]] = field(default_factory=dict)  # (GPU, link)
    far_gpus: tuple[int, ...] = ()  # GPUs whose nearest NIC is across the CPUs (SYS)
    #: GPU index -> (cluster UUID, clique id, health summary) in nvidia-smi's <fabric>
    fabric: dict[int, tuple[str, str, str]] = field(default_factory=dict)


def healthy_plan(node: NodeState, *, roce: bool = False) -> LinkPlan:
    """The node's NICs up at 400 Gb/s: InfiniBand, or RoCE with a 9000-byte MTU."""
    count = node.spec.nics if node.spec else 0
    ports = [
        Port(f"mlx5_{i}", layer="Ethernet", netdev=f"ens{i + 1}f0np0", mtu=9000, rate="400 Gb/sec (4X NDR)")
        if roce
        else Port(f"mlx5_{i}")
        for i in range(count)
    ]
    return LinkPlan(ports)


def nvlink_shape(node: NodeState) -> tuple[int, str]:
    """Links per GPU and their speed; (0, "") for GPUs without NVLink (PCIe boards)."""
    product = node.model.product if node.model else ""
    if "SXM" not in product and "HBM3" not in product:
        return 0, ""
    return next((shape for key, shape in _NVLINKS.items() if key in product), (0, ""))


def render(node: NodeState, plan: LinkPlan) -> dict[str, str]:
    """cmd file name -> text, for the node's GPUs and ports under ``plan``."""
    return {
        "nvidia-smi-nvlink-s.txt": _status(node, plan),
        "nvidia-smi-nvlink-e.txt": _errors(node, plan),
        "nvidia-smi-topo-m.txt": _topo(node, plan),
        "sysfs-infiniband.txt": _sysfs(plan),
    }


def _header(node: NodeState, index: int) -> str:
    gpu = next(g for g in node.gpus if g.index == index)
    name = node.model.product if node.model else "NVIDIA GPU"
    return f"GPU {index}: {name} (UUID: {gpu.uuid})"


def _status(node: NodeState, plan: LinkPlan) -> str:
    links, speed = nvlink_shape(node)
    if not links:
        return ""
    lines = []
    for gpu in node.gpus:
        lines.append(_header(node, gpu.index))
        down = plan.inactive.get(gpu.index, ())
        lines += [f"\t Link {n}: {'<inactive>' if n in down else f'{speed} GB/s'}" for n in range(links)]
    return "\n".join(lines) + "\n"


def _errors(node: NodeState, plan: LinkPlan) -> str:
    links, _ = nvlink_shape(node)
    if not links:
        return ""
    lines = []
    for gpu in node.gpus:
        lines.append(_header(node, gpu.index))
        for n in range(links):
            counts = plan.errors.get((gpu.index, n), {})
            lines += [
                f"\t Link {n}: Replay Errors: {counts.get('replay', 0)}",
                f"\t Link {n}: Recovery Errors: {counts.get('recovery', 0)}",
                f"\t Link {n}: CRC Errors: {counts.get('crc', 0)}",
            ]
    return "\n".join(lines) + "\n"


def _topo(node: NodeState, plan: LinkPlan) -> str:
    """GPUs at NV<n> (SXM) or NODE/SYS, each GPU's own NIC at PIX (a rail design)."""
    links, _ = nvlink_shape(node)
    gpus = [g.index for g in node.gpus]
    nics = [f"NIC{i}" for i in range(len(plan.ports))]
    half = max(len(gpus) // 2, 1)
    cols = [f"GPU{i}" for i in gpus] + nics
    rows = ["\t" + "\t".join(cols) + "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID"]
    for i in gpus:
        cells = [" X " if i == j else (f"NV{links}" if links else _numa(i, j, half)) for j in gpus]
        cells += [_nic_path(i, n, (half, len(gpus), len(nics)), plan.far_gpus) for n in range(len(nics))]
        cpus = "0-47,96-143" if i < half else "48-95,144-191"
        rows.append(f"GPU{i}\t" + "\t".join(cells) + f"\t{cpus}\t{0 if i < half else 1}\t\tN/A")
    legend = "".join(f"  NIC{i}: {p.device}\n" for i, p in enumerate(plan.ports))
    nic_legend = f"\nNIC Legend:\n\n{legend}" if legend else ""
    return "\n".join(rows) + "\n\nLegend:\n\n  X    = Self\n" + nic_legend


def _numa(a: int, b: int, half: int) -> str:
    return "NODE" if (a < half) == (b < half) else "SYS"


def _nic_path(gpu: int, nic: int, sizes: tuple[int, int, int], far: tuple[int, ...]) -> str:
    """The GPU's rail NIC is PIX; others by NUMA node; a ``far`` GPU has none near.
    ``sizes``: GPUs per NUMA node, GPUs, NICs."""
    half, gpus, nics = sizes
    own = gpu * nics // gpus if gpus else -1
    if nic == own and gpu not in far:
        return "PIX"
    nic_gpu = nic * gpus // nics if nics else 0
    return "SYS" if gpu in far else _numa(gpu, nic_gpu, half)


def _sysfs(plan: LinkPlan) -> str:
    lines: list[str] = []
    for name in ("state", "phys_state", "rate", "link_layer"):
        key = {"state": "state", "phys_state": "phys", "rate": "rate", "link_layer": "layer"}[name]
        lines += [f"{p.device}/ports/1/{name}:{getattr(p, key)}" for p in plan.ports]
    lines += [f"{p.device}/ports/1/gid_attrs/ndevs/0:{p.netdev}" for p in plan.ports if p.netdev]
    for counter in ZERO_COUNTERS:
        lines += [f"{p.device}/ports/1/counters/{counter}:{p.counters.get(counter, 0)}" for p in plan.ports]
    lines += [f"{p.device}/device/net/{p.netdev}/mtu:{p.mtu}" for p in plan.ports if p.netdev and p.mtu]
    lines += [f"{p.device}/device/sriov_numvfs:{p.vfs[0]}" for p in plan.ports if p.vfs]
    lines += [f"{p.device}/device/sriov_totalvfs:{p.vfs[1]}" for p in plan.ports if p.vfs]
    return "\n".join(lines) + ("\n" if lines else "")


def patch_fabric(xml: str, fabric: dict[str, tuple[str, str, str]]) -> str:
    """nvidia-smi's ``<fabric>`` of each GPU (by bus id) set to its cluster UUID, clique
    id and health summary: an NVL system's GPUs registered in their NVLink domain."""
    for bus_id, (cluster, clique, summary) in fabric.items():
        start = xml.find(f'<gpu id="{bus_id}">')
        end = xml.find("</gpu>", start)
        if start < 0 or end < 0:
            continue
        block = xml[start:end]
        block = re.sub(r"<cliqueId>[^<]*</cliqueId>", f"<cliqueId>{clique}</cliqueId>", block)
        block = re.sub(r"<clusterUuid>[^<]*</clusterUuid>", f"<clusterUuid>{cluster}</clusterUuid>", block)
        block = re.sub(r"<summary>[^<]*</summary>", f"<summary>{summary}</summary>", block)
        xml = xml[:start] + block + xml[end:]
    return xml


@dataclass
class Imex:
    """IMEX on a node of a multi-node NVLink domain, as the collector's read of the host
    root shows it (parse/imex.py); healthy by default: the packaged unit enabled, the
    node list naming every node of the domain, channel 0, the daemon running."""

    peers: list[str]
    nodes_config: bool = True
    channels: tuple[str, ...] = ("channel0",)
    running: bool = True
    pid: int = 4211


#: Where the nvidia-imex package puts its unit; Ubuntu's merged /usr lists it twice.
_IMEX_UNITS = ("lib/systemd/system/nvidia-imex.service", "usr/lib/systemd/system/nvidia-imex.service")
_IMEX_WANTS = "etc/systemd/system/multi-user.target.wants/nvidia-imex.service"
_IMEX_NODES = "etc/nvidia-imex/nodes_config.cfg"


def imex_read(imex: Imex) -> str:
    """``cmd/imex.txt``: ``ls -1d`` of what exists (sorted, as ls prints it), the node
    list's lines as ``grep -H`` prints them, the daemon's ``/proc/<pid>/comm``."""
    present = [*_IMEX_UNITS, _IMEX_WANTS, *(f"dev/nvidia-caps-imex-channels/{c}" for c in imex.channels)]
    if imex.nodes_config:
        present.append(_IMEX_NODES)
    lines = sorted(present)
    if imex.nodes_config:
        lines += [f"{_IMEX_NODES}:{peer}" for peer in imex.peers]
    if imex.running:
        lines.append(f"proc/{imex.pid}/comm:nvidia-imex")
    return "\n".join(lines) + "\n"
