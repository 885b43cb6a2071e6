"""The node's links to other GPUs and nodes, as one section of the probe (docs/probe.md).

NVLink state and counters per GPU live in ``nvml.gpus[].nvlinks`` and the GPU-to-GPU
topology in ``nvml.topology``; InfiniBand/RoCE ports in ``host.rdma_ports``. This module
adds what only the host's files say (which RDMA device is nearest each GPU on the PCIe
tree, SR-IOV virtual functions, GPUDirect RDMA's kernel side, Fabric Manager, NVLink
Subnet Manager and IMEX services, the IMEX node list and channels) and states in one
line each whether the node has NVLink peers and an InfiniBand HCA at all, so a machine
without them says so instead of leaving the reader to infer it from empty lists.
Everything is read through :class:`HostFS`: bounded, read-only.
"""

from __future__ import annotations

import os

from gpunode.parse.infiniband import SYSFS_INFINIBAND, RdmaPort
from gpunode.probe.host_facts import HostFacts
from gpunode.probe.hostfs import HostFS
from gpunode.probe.nvml import NvmlFacts, NvmlGpu
from gpunode.probe.result import (
    GpuDirect,
    ImexFacts,
    InterconnectFacts,
    NicAffinity,
    ServiceState,
    SriovFunction,
)

NO_NVLINK = "no NVLink peers"
NO_HCA = "no InfiniBand HCA"
SYSFS_NET = "/sys/class/net"
SYSFS_PCI = "/sys/bus/pci/devices"
IMEX_NODES_CONFIG = "/etc/nvidia-imex/nodes_config.cfg"
IMEX_CONFIG = "/etc/nvidia-imex/config.cfg"
IMEX_CHANNELS = "/dev/nvidia-caps-imex-channels"
#: service -> (process comm as the kernel keeps it, systemd unit)
SERVICES = {
    "fabricmanager": ("nv-fabricmanager", "nvidia-fabricmanager.service"),
    "nvlsm": ("nvlsm", "nvlsm.service"),
    "imex": ("nvidia-imex", "nvidia-imex.service"),
}
UNIT_DIRS = ("/etc/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system")
WANTS_DIR = "/etc/systemd/system/multi-user.target.wants"
MAX_NETDEVS = 256
MAX_IMEX_PEERS = 1024
# Closeness on the PCIe tree, nearest first (nvidia-smi topo -m's legend).
PCIE_LEVELS = ("PIX", "PXB", "PHB", "NODE", "SYS")
DMA_BUF_MIN_KERNEL = (5, 12)


def collect_interconnect(fs: HostFS, nvml: NvmlFacts, host: HostFacts) -> InterconnectFacts:
    """Read the host's side of the links and state what the node has."""
    return InterconnectFacts(
        nvlink=nvlink_verdict(nvml),
        infiniband=infiniband_verdict(host.rdma_ports, fs.exists(SYSFS_INFINIBAND)),
        nvswitches=sum(1 for d in host.device_nodes if d.startswith("nvidia-nvswitch")),
        nic_affinity=_nic_affinity(fs, nvml.gpus, host.rdma_ports),
        sriov=_sriov(fs),
        gpudirect=_gpudirect(host),
        services=_services(fs, host),
        imex=_imex(fs),
    )


def nvlink_verdict(nvml: NvmlFacts) -> str:
    """One line: the NVLinks the GPUs have and how many are up, or that there are none."""
    if not nvml.init_ok:
        return "unknown: NVML did not start"
    gpus = [g for g in nvml.gpus if not g.lost]
    if not gpus:
        return "unknown: no GPU answered" if nvml.gpus else "no GPUs"
    links = [link for g in gpus for link in g.nvlinks]
    if not links:
        calls = {g.calls.get("nvmlDeviceGetNvLinkState", "not called") for g in gpus}
        why = "not supported" if calls <= {"not_supported", "invalid_argument"} else ", ".join(sorted(calls))
        return f"{NO_NVLINK} (NVLink: {why})"
    active = sum(1 for link in links if link.active)
    if not active:
        return f"{NO_NVLINK} ({len(links)} links on {len(gpus)} GPU(s), none active)"
    switched = any(link.remote_device_type == "NVSwitch" for link in links)
    via = ", through NVSwitches" if switched else ""
    return f"{active}/{len(links)} NVLinks active on {len(gpus)} GPU(s){via}"


def infiniband_verdict(ports: tuple[RdmaPort, ...], sysfs_present: bool) -> str:
    """One line: the RDMA ports by link layer and how many are ACTIVE, or that there are none."""
    if not ports:
        return NO_HCA + ("" if sysfs_present else " (no /sys/class/infiniband)")
    parts = []
    for layer in sorted({p.link_layer or "unknown" for p in ports}):
        mine = [p for p in ports if (p.link_layer or "unknown") == layer]
        name = "RoCE" if layer == "Ethernet" else layer
        up = sum(1 for p in mine if p.state_id in (4, 5))
        parts.append(f"{name}: {up}/{len(mine)} ports ACTIVE")
    prefix = "" if any(p.link_layer == "InfiniBand" for p in ports) else f"{NO_HCA}; "
    return prefix + "; ".join(parts)


# --- PCIe affinity between GPUs and RDMA devices ------------------------------------


def _nic_affinity(
    fs: HostFS, gpus: tuple[NvmlGpu, ...], ports: tuple[RdmaPort, ...]
) -> tuple[NicAffinity, ...]:
    """For each GPU, the nearest RDMA device on the PCIe tree (the path NCCL picks)."""
    devices = sorted({p.device for p in ports})
    nic_paths = {d: p for d in devices if (p := _pci_path(fs, f"{SYSFS_INFINIBAND}/{d}/device"))}
    if not nic_paths:
        return ()
    found = []
    for gpu in gpus:
        gpu_path = _pci_path(fs, f"{SYSFS_PCI}/{_sysfs_bdf(gpu.pci_bus_id)}") if gpu.pci_bus_id else None
        if gpu_path is None:
            continue
        ranked = sorted(
            (PCIE_LEVELS.index(_relation(fs, gpu_path, path)), device) for device, path in nic_paths.items()
        )
        found.append(NicAffinity(gpu.index, ranked[0][1], PCIE_LEVELS[ranked[0][0]]))
    return tuple(found)


def _sysfs_bdf(bus_id: str) -> str:
    """NVML's ``00000000:18:00.0`` as sysfs names it: ``0000:18:00.0``."""
    domain, _, rest = bus_id.lower().partition(":")
    return f"{int(domain, 16):04x}:{rest}" if rest else bus_id.lower()


def _pci_path(fs: HostFS, node_path: str) -> list[str] | None:
    """The device's place under /sys/devices (``pci0000:17``, bridges..., itself)."""
    if not fs.exists(node_path):
        return None
    # HostFS follows links inside a host root itself; on the host, the kernel's links
    local = os.path.realpath(node_path) if fs.root == "/" else fs.resolve(node_path)
    parts = local[len(fs.root.rstrip("/")):].strip("/").split("/")
    if parts[:2] != ["sys", "devices"] or len(parts) < 4:
        return None
    return parts[2:]


def _relation(fs: HostFS, gpu: list[str], nic: list[str]) -> str:
    """nvidia-smi topo -m's word for two PCI paths: shared switch, host bridge, NUMA node."""
    common = 0
    for mine, theirs in zip(gpu, nic, strict=False):
        if mine != theirs:
            break
        common += 1
    if common >= 2:  # below the same root port: one switch (PIX) or several (PXB)
        return "PIX" if len(gpu) - common <= 2 and len(nic) - common <= 2 else "PXB"
    if common == 1:
        return "PHB"
    return "NODE" if _numa(fs, gpu[-1]) == _numa(fs, nic[-1]) else "SYS"


def _numa(fs: HostFS, bdf: str) -> int:
    text = fs.read(f"{SYSFS_PCI}/{bdf}/numa_node", limit=16, keep=False)
    try:
        return max(int((text or "-1").strip()), -1)
    except ValueError:
        return -1


# --- SR-IOV, GPUDirect RDMA, services, IMEX ------------------------------------------


def _sriov(fs: HostFS) -> tuple[SriovFunction, ...]:
    """Interfaces whose PCI function offers virtual functions (sriov_totalvfs above 0)."""
    found = []
    for netdev in fs.listdir(SYSFS_NET)[:MAX_NETDEVS]:
        total = _int(fs.read(f"{SYSFS_NET}/{netdev}/device/sriov_totalvfs", limit=32))
        if not total:
            continue
        numvfs = _int(fs.read(f"{SYSFS_NET}/{netdev}/device/sriov_numvfs", limit=32))
        found.append(SriovFunction(netdev, numvfs, total))
    return tuple(found)


def _int(text: str | None) -> int | None:
    return int(text.strip()) if text is not None and text.strip().isdigit() else None


def _gpudirect(host: HostFacts) -> GpuDirect:
    peermem = None if host.modules_error is not None else "nvidia_peermem" in host.modules
    driver, release = host.driver, host.kernel_release
    if driver is None or release is None:
        return GpuDirect(peermem, "unknown", "driver or kernel release not read")
    if driver.kernel_module_type != "open":
        why = f"{driver.kernel_module_type} kernel module (DMA-BUF needs the open one)"
        return GpuDirect(peermem, "unsupported", why)
    version = _kernel_version(release)
    if version is None:
        return GpuDirect(peermem, "unknown", f"kernel release {release!r} not understood")
    if version < DMA_BUF_MIN_KERNEL:
        return GpuDirect(peermem, "unsupported", f"kernel {release} is older than 5.12")
    return GpuDirect(peermem, "supported", f"open kernel module on kernel {release}")


def _kernel_version(release: str) -> tuple[int, int] | None:
    head = release.split("-", maxsplit=1)[0].split(".")
    try:
        return int(head[0]), int(head[1])
    except (IndexError, ValueError):
        return None


def _services(fs: HostFS, host: HostFacts) -> dict[str, ServiceState]:
    """Fabric Manager, NVLink Subnet Manager and IMEX: process, boot-time unit, unit file."""
    visible = fs.root == "/" or any(host.processes.values())
    systemd = fs.exists("/etc/systemd/system")
    states = {}
    for name, (comm, unit) in SERVICES.items():
        installed = any(fs.exists(f"{d}/{unit}") for d in UNIT_DIRS)
        running = host.processes.get(comm) if visible else None
        enabled = fs.exists(f"{WANTS_DIR}/{unit}") if systemd else None
        states[name] = ServiceState(running=running, enabled=enabled, installed=installed)
    return states


def _imex(fs: HostFS) -> ImexFacts:
    """The IMEX node list (one IP or host name a line) and the channel device nodes."""
    fs.read(IMEX_CONFIG)  # kept for the bundle: where IMEX listens and what it serves
    text = fs.read(IMEX_NODES_CONFIG)
    peers = tuple(
        line.strip()
        for line in (text or "").splitlines()[:MAX_IMEX_PEERS]
        if line.strip() and not line.lstrip().startswith("#")
    )
    channels = tuple(name for name in fs.listdir(IMEX_CHANNELS) if name.startswith("channel"))
    return ImexFacts(IMEX_NODES_CONFIG if text is not None else None, peers, channels)
