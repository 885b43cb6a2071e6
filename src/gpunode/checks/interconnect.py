"""Checks of the node's links: NVLink and its fabric, IMEX, InfiniBand/RoCE ports, the
GPUDirect RDMA path (issue 26; causes in data/causes/interconnect.toml).

They read the probe's facts (docs/probe.md: ``nvml.gpus[].nvlinks``, the fabric fields,
``host.rdma_ports``, ``interconnect``) and, for NVLink, collected ``nvidia-smi nvlink``
output. A node without NVLink or an RDMA device is ``not-deployed`` for these components
with that said ("no NVLink peers", "no InfiniBand HCA"), never a failure; values that
need a comparison (a link's rate, a GPU's link count, an MTU) are judged against the
node's own peers, so a design choice is never taken for a fault.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from operator import attrgetter

import msgspec

from gpunode.checks.base import check, not_deployed, ok, pods_here, problem, reads, unknown
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import as_catalogued, line_finding
from gpunode.decisive import MAX_LINE, Decisive, decisive_line, message_of
from gpunode.facts import LogFile
from gpunode.model import Evidence, Finding, Status
from gpunode.parse.fabric import UNSET, ZERO_UUID, FabricInfo
from gpunode.parse.imex import parse_imex_state
from gpunode.parse.infiniband import (
    RdmaPort,
    SysfsRdma,
    parse_ibstat,
    parse_ibv_devinfo,
    parse_sysfs_dump,
)
from gpunode.parse.nvlink import NvlinkGpu, parse_nvlink_errors, parse_nvlink_status
from gpunode.parse.topology import NEAR_PATHS, parse_topo_matrix
from gpunode.probe.interconnect import NO_HCA, NO_NVLINK
from gpunode.probe.result import ProbeResult
from gpunode.relazy import lazy_compile

PROBE_FILE = "gpunode-probe.json"
PROBE_NEEDS = (f"cmd/{PROBE_FILE}",)
NVLINK_STATUS = "nvidia-smi-nvlink-s.txt"
NVLINK_ERRORS = "nvidia-smi-nvlink-e.txt"
TOPO = "nvidia-smi-topo-m.txt"
SYSFS_RDMA = "sysfs-infiniband.txt"
IBSTAT = "ibstat.txt"
IBV_DEVINFO = "ibv_devinfo.txt"
IMEX_STATE = "imex.txt"
#: Collected files that show the RDMA ports where the probe did not run, most complete
#: first (sysfs has the counters, the interface and its MTU; ibstat the rate).
RDMA_SOURCES = (SYSFS_RDMA, IBSTAT, IBV_DEVINFO)
#: The gate of the checks that read only those files.
_RDMA_COLLECTED = reads(*(f"cmd/{name}" for name in RDMA_SOURCES))
MAX_LISTED = 4
#: Data-link CRC and replay errors since the driver loaded above which a link is marginal
#: (a clean link shows 0; DCGM's health watch alarms on a steady rise of this order).
CRC_LIMIT = 100
#: Port counter limits above which a link is marginal (link_downed, recovery: any).
PORT_LIMITS = {"link_downed": 1, "link_error_recovery": 1, "symbol_error": 100, "port_rcv_errors": 100}
_UP = (4, 5)  # ACTIVE, ACTIVE_DEFER
_NEAR = ("PIX", "PXB", "PHB")


class LinkGpu(msgspec.Struct, frozen=True):
    """One GPU's NVLinks, from NVML or nvidia-smi: enough to compare GPUs of one node."""

    label: str
    model: str
    links: tuple[tuple[int, bool], ...]
    errors: dict[int, dict[str, int]]


def _ev(ctx: NodeContext, name: str, excerpt: str) -> Evidence:
    return Evidence(ctx.obs.path_of("cmd", name), excerpt)


def _found(ctx: NodeContext, component: str, cause: str, *evidence: Evidence) -> Finding:
    known = ctx.kb.get(cause)
    return problem(component, cause, *evidence, status=known.severity, specificity=known.specificity)


def _listed(items: Sequence[str]) -> str:
    extra = f" (+{len(items) - MAX_LISTED} more)" if len(items) > MAX_LISTED else ""
    return ", ".join(items[:MAX_LISTED]) + extra


# --- NVLink ----------------------------------------------------------------------


def probe_link_gpus(probe: ProbeResult) -> list[LinkGpu]:
    """The probe's GPUs that answered, as link views."""
    return [
        LinkGpu(
            label=f"GPU {g.index} ({g.pci_bus_id or g.uuid or 'bus id unknown'})",
            model=g.name or "unknown GPU",
            links=tuple((link.link, link.active) for link in g.nvlinks),
            errors={link.link: dict(link.errors) for link in g.nvlinks if link.errors},
        )
        for g in probe.nvml.gpus
        if not g.lost
    ]


def smi_link_gpus(status: Sequence[NvlinkGpu], errors: Sequence[NvlinkGpu]) -> list[LinkGpu]:
    """``nvidia-smi nvlink -s`` (and ``-e`` where collected) as link views."""
    counters = {g.index: g for g in errors}
    return [
        LinkGpu(
            label=f"GPU {g.index} ({g.bus_id or g.uuid or 'bus id unknown'})",
            model=g.name,
            links=tuple((link.link, link.active) for link in g.links),
            errors={link.link: dict(link.errors) for link in counters[g.index].links if link.errors}
            if g.index in counters
            else {},
        )
        for g in status
    ]


def judge_nvlinks(
    gpus: Sequence[LinkGpu], component: str, ctx: NodeContext, source: str
) -> Iterator[Finding]:
    """Links down against the GPU's peers of the same model, then error counters."""
    with_links = [g for g in gpus if g.links]
    active = {g.label: sum(1 for _, up in g.links if up) for g in with_links}
    if not any(active.values()):
        total = sum(len(g.links) for g in with_links)
        detail = f"{total} links on {len(with_links)} GPU(s), none active" if total else "no NVLinks"
        yield not_deployed(component, f"{NO_NVLINK} ({detail})")
        return
    best = _expected_links(with_links, active)
    short = [g for g in with_links if active[g.label] < best[g.model]]
    for gpu in short:
        down = [str(n) for n, up in gpu.links if not up]
        text = f"{gpu.label}: {active[gpu.label]}/{len(gpu.links)} NVLinks active (peers: {best[gpu.model]})"
        cause = "nvlink_down" if active[gpu.label] == 0 else "nvlink_inactive"
        yield _found(ctx, component, cause, _ev(ctx, source, f"{text}; inactive: link {_listed(down)}"))
    yield from _link_errors(gpus, component, ctx, source)
    if not short:
        links = sum(active.values())
        summary = f"{links} NVLinks active on {len(with_links)} GPU(s)"
        yield ok(component, summary, _ev(ctx, source, summary))


def _expected_links(gpus: Sequence[LinkGpu], active: dict[str, int]) -> dict[str, int]:
    """Links a GPU of each model should have up: the most any GPU of that model has.

    A model seen on one GPU alone has no peer to compare with; its own links are then the
    measure (some up and some ``<inactive>`` is a link down: an NVLink bridge or switch
    port serves a GPU's links all together, and a GPU without one has none up at all).
    """
    best: dict[str, int] = {}
    for model in {g.model for g in gpus}:
        same = [g for g in gpus if g.model == model]
        best[model] = len(same[0].links) if len(same) == 1 else max(active[g.label] for g in same)
    return best


def _link_errors(
    gpus: Sequence[LinkGpu], component: str, ctx: NodeContext, source: str
) -> Iterator[Finding]:
    recovered, noisy = [], []
    for gpu in gpus:
        for link, counts in sorted(gpu.errors.items()):
            if counts.get("recovery", 0) > 0:
                recovered.append(f"{gpu.label} link {link}: {counts['recovery']} recoveries")
            crc = counts.get("crc_flit", 0) + counts.get("crc_data", 0) + counts.get("replay", 0)
            if crc >= CRC_LIMIT:
                noisy.append(f"{gpu.label} link {link}: {crc} CRC/replay errors")
    if recovered:
        yield _found(ctx, component, "nvlink_recovery_errors", _ev(ctx, source, _listed(recovered)))
    if noisy:
        yield _found(ctx, component, "nvlink_crc_errors", _ev(ctx, source, _listed(noisy)))


@check("nvlink-fabric", needs=PROBE_NEEDS)
def probe_nvlinks(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """NVML's links per GPU and the fabric registration (clique, health)."""
    probe = ctx.probe
    if probe is None:
        yield unknown(component, "the probe's facts could not be read")
        return
    if not probe.nvml.init_ok:
        yield unknown(component, "NVML did not start: the NVLinks were not read")
        return
    yield from judge_nvlinks(probe_link_gpus(probe), component, ctx, PROBE_FILE)
    yield from _fabric(ctx, probe, component)


@check("nvlink-fabric", needs=(f"cmd/{NVLINK_STATUS}",))
def smi_nvlinks(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """Collected ``nvidia-smi nvlink -s`` (and ``-e``), where the probe did not run."""
    if ctx.probe is not None:
        return
    status = parse_nvlink_status(ctx.obs.cmd.get(NVLINK_STATUS, ""))
    errors = parse_nvlink_errors(ctx.obs.cmd.get(NVLINK_ERRORS, ""))
    dark = _dark_gpus(ctx, status, component)
    if dark is not None:
        yield dark
    for finding in judge_nvlinks(smi_link_gpus(status, errors), component, ctx, NVLINK_STATUS):
        if dark is None or finding.status != Status.NOT_DEPLOYED:
            yield finding


def _dark_gpus(ctx: NodeContext, status: Sequence[NvlinkGpu], component: str) -> Finding | None:
    """GPUs whose links NVML reports all inactive ("NVML: Unable to retrieve NVLink information
    as all links are inActive", leptonai/gpud#1085 on a B200) where the node's facts say
    NVLink is part of the board: another GPU of the same model has links up, or the node's
    GPUs sit on an NVSwitch fabric (a fabric state in nvidia-smi -q). A PCIe card without a
    bridge and a lone superchip print the same sentence with nothing to link to, and stay
    unjudged."""
    dark = [g for g in status if g.all_inactive]
    if not dark:
        return None
    lit = {g.name for g in status if any(link.active for link in g.links)}
    smi = ctx.nvidia_smi
    fabric = smi is not None and any(g.fabric_state not in (None, "N/A") for g in smi.gpus)
    owed = [g for g in dark if g.name in lit or fabric]
    if not owed:
        return None
    why = "its NVSwitch fabric" if fabric else "peers of its model with links up"
    shown = [f"GPU {g.index} ({g.name})" for g in owed]
    text = f"{_listed(shown)}: NVML reports all links inactive, on a node with {why}"
    return _found(ctx, component, "nvlink_down", _ev(ctx, NVLINK_STATUS, text))


@check("nvlink-fabric", needs=("cmd/nvidia-smi-q.xml",))
def smi_fabric(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The ``<fabric>`` of collected ``nvidia-smi -q -x``, where the probe did not run:
    the GPUs' NVLink domain (cluster UUID and clique) and health summary."""
    smi = ctx.nvidia_smi
    if ctx.probe is not None or smi is None or _COMPLETED not in map(_FABRIC_STATE, smi.gpus):
        return  # (judge_fabric reads only GPUs whose fabric state is Completed)
    infos = [
        FabricInfo(
            gpu=g.pci_bus_id,
            state=g.fabric_state,
            status=g.fabric_status,
            clique_id=g.fabric_clique_id,
            cluster_uuid=g.fabric_cluster_uuid,
            health=(
                {"Summary": summary} if (summary := g.fabric_health_summary) not in UNSET and summary else {}
            ),
        )
        for g in smi.gpus
    ]
    yield from judge_fabric(infos, component, ctx, "nvidia-smi-q.xml")


#: Readers in C for the node pass (a comprehension is a function of its own a node).
_COMPLETED = "Completed"
_FABRIC_STATE = attrgetter("fabric_state")


def judge_fabric(
    infos: Sequence[FabricInfo], component: str, ctx: NodeContext, source: str
) -> Iterator[Finding]:
    """Every registered GPU in one clique of one cluster, and no health trouble. A GPU
    still registering, or one whose registration failed, is Fabric Manager's (the
    fabric-manager component judges the state)."""
    done = [i for i in infos if i.registered]
    domains = {(i.cluster_uuid, i.clique_id) for i in done}
    if len(domains) > 1:  # (counted only where they differ)
        (major, _), *_ = Counter((i.cluster_uuid, i.clique_id) for i in done).most_common()
        odd = [f"GPU {i.gpu}: clique {i.clique_id} of {i.cluster_uuid}" for i in done
               if (i.cluster_uuid, i.clique_id) != major]
        ev = _ev(ctx, source, f"{_listed(odd)}; the others: clique {major[1]} of {major[0]}")
        yield _found(ctx, component, "fabric_clique_mismatch", ev)
    sick = [f"GPU {i.gpu}: Health Summary {i.health['Summary']}" for i in infos
            if i.state == "Completed" and i.health.get("Summary") not in (None, "Healthy")]
    if sick:
        yield _found(ctx, component, "fabric_health_degraded", _ev(ctx, source, _listed(sick)))
    if done and len(domains) == 1 and not sick:
        (uuid, clique), = domains
        summary = f"{len(done)} GPU(s) in NVLink clique {clique} of cluster {uuid}"
        yield ok(component, summary, _ev(ctx, source, summary))


def _fabric(ctx: NodeContext, probe: ProbeResult, component: str) -> Iterator[Finding]:
    """Every registered GPU in the node's one clique; no trouble in the health mask."""
    done = [g for g in probe.nvml.gpus if g.fabric_state == "Completed" and g.fabric_status == "Success"]
    domains = Counter((g.fabric_cluster_uuid, g.fabric_clique_id) for g in done)
    if any(uuid for uuid, _ in domains) and len(domains) > 1:
        (major, _), *_ = domains.most_common()
        odd = [
            f"GPU {g.index}: clique {g.fabric_clique_id} of {g.fabric_cluster_uuid or 'no cluster'}"
            for g in done
            if (g.fabric_cluster_uuid, g.fabric_clique_id) != major
        ]
        ev = _ev(ctx, PROBE_FILE, f"{_listed(odd)}; the others: clique {major[1]} of {major[0]}")
        yield _found(ctx, component, "fabric_clique_mismatch", ev)
    sick = [f"GPU {g.index}: {', '.join(g.fabric_health)}" for g in probe.nvml.gpus if g.fabric_health]
    if sick:
        yield _found(ctx, component, "fabric_health_degraded", _ev(ctx, PROBE_FILE, _listed(sick)))


# --- IMEX ------------------------------------------------------------------------


@check("imex", needs=PROBE_NEEDS)
def probe_imex(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """IMEX configured, running, with a node list and a channel for workloads."""
    probe = ctx.probe
    if probe is None:
        yield unknown(component, "the probe's facts could not be read")
        return
    links = probe.interconnect
    service, imex = links.services.get("imex"), links.imex
    yield from judge_imex(
        ctx,
        component,
        Imex(
            configured=imex.nodes_config is not None or (service is not None and service.enabled is True),
            running=service.running if service is not None else None,
            installed=service is not None and service.installed,
            peers=imex.peers,
            channels=imex.channels,
        ),
        PROBE_FILE,
    )


@check("imex", may_find=reads(f"cmd/{IMEX_STATE}"))
def collected_imex(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The collector's read of the host's IMEX (``cmd/imex.txt``), where the probe did not run;
    without it (or where the container did not see the host) ``links_not_collected`` says so."""
    text = ctx.obs.cmd.get(IMEX_STATE) if ctx.probe is None else None
    state = parse_imex_state(text) if text is not None else None
    if state is None:
        return
    imex = Imex(
        configured=state.nodes_config is not None or state.enabled,
        running=state.running,
        installed=state.installed,
        peers=state.peers,
        channels=state.channels,
    )
    yield from judge_imex(ctx, component, imex, IMEX_STATE)


class Imex(msgspec.Struct, frozen=True):
    """What the IMEX judgement needs, from the probe or the collected read."""

    configured: bool  # a node list exists, or the unit is enabled at boot
    running: bool | None  # None: host processes out of sight
    installed: bool
    peers: tuple[str, ...]
    channels: tuple[str, ...]


def judge_imex(ctx: NodeContext, component: str, imex: Imex, source: str) -> Iterator[Finding]:
    """Configured IMEX must run, know its peers and offer a channel; none at all is not deployed."""
    if not imex.configured and not imex.running:
        if not imex.installed:
            yield not_deployed(component, "no IMEX on this node")
        return
    facts = f"nodes_config: {len(imex.peers)} peer(s); channels: {_listed(list(imex.channels)) or 'none'}"
    if imex.running is None:
        ev = _ev(ctx, source, facts)
        yield unknown(component, "IMEX is configured; whether it runs is not visible", ev)
    elif not imex.running:
        ev = _ev(ctx, source, f"no nvidia-imex process; {facts}")
        yield _found(ctx, component, "imex_not_running", ev)
    elif not imex.peers:
        yield _found(ctx, component, "imex_nodes_config_missing", _ev(ctx, source, facts))
    elif not imex.channels:
        yield _found(ctx, component, "imex_channel_missing", _ev(ctx, source, facts))
    else:
        yield ok(component, f"nvidia-imex running, {len(imex.peers)} peer(s)", _ev(ctx, source, facts))


# --- InfiniBand / RoCE -----------------------------------------------------------


def _port(p: RdmaPort) -> str:
    rate = f" {p.rate_gbps:g} Gb/s" if p.rate_gbps else ""
    return f"{p.device}/{p.port} {p.state} ({p.phys_state or '?'}{rate})"


def judge_ports(
    ports: Sequence[RdmaPort], component: str, ctx: NodeContext, source: str
) -> Iterator[Finding]:
    """Each port's state against what it says about the link, then rate, MTU and link
    layer against the node's other ports, then the error counters."""
    if not ports:
        yield not_deployed(component, NO_HCA)
        return
    troubled = 0
    for cause, found in _port_states(ports).items():
        troubled += len(found)
        yield _found(ctx, component, cause, _ev(ctx, source, _listed([_port(p) for p in found])))
    for cause, text in _against_peers(ports):
        yield _found(ctx, component, cause, _ev(ctx, source, text))
    noisy = [
        f"{p.device}/{p.port}: {_listed([f'{k} {v}' for k, v in sorted(p.counters.items()) if v])}"
        for p in ports
        if any(p.counters.get(k, 0) >= limit for k, limit in PORT_LIMITS.items())
    ]
    if noisy:
        yield _found(ctx, component, "ib_port_errors", _ev(ctx, source, _listed(noisy)))
    up = sum(1 for p in ports if p.state_id in _UP)
    layers = ", ".join(sorted({"RoCE" if p.link_layer == "Ethernet" else p.link_layer or "?" for p in ports}))
    summary = f"{up}/{len(ports)} RDMA ports ACTIVE ({layers})"
    yield ok(component, summary, _ev(ctx, source, summary))


def _port_states(ports: Sequence[RdmaPort]) -> dict[str, list[RdmaPort]]:
    """Ports not ACTIVE by what their physical state says (a Disabled one is a choice)."""
    out: dict[str, list[RdmaPort]] = {}
    for p in ports:
        if p.state_id in _UP or p.phys_state == "Disabled":
            continue
        if p.state_id not in (1, 2, 3):  # a state this code does not know (gpunode.doubt says so)
            cause = "rdma_port_down"
        elif p.phys_state == "Polling":
            cause = "ib_port_polling"
        elif p.phys_state == "LinkUp" and p.state_id in (2, 3) and p.link_layer == "InfiniBand":
            cause = "ib_port_no_subnet_manager"
        else:
            cause = "rdma_port_down"
        out.setdefault(cause, []).append(p)
    return out


def _against_peers(ports: Sequence[RdmaPort]) -> Iterator[tuple[str, str]]:
    active = [p for p in ports if p.state_id in _UP]
    for layer in {p.link_layer for p in active}:
        mine = [p for p in active if p.link_layer == layer and p.rate_gbps]
        best = max((p.rate_gbps or 0 for p in mine), default=0)
        slow = [p for p in mine if (p.rate_gbps or 0) < best]
        if slow and len(mine) - len(slow) >= len(slow):  # a minority below the others
            yield "rdma_rate_below_peers", f"{_listed([_port(p) for p in slow])}; peers at {best:g} Gb/s"
    roce = [p for p in active if p.link_layer == "Ethernet" and p.mtu]
    mtus = Counter(p.mtu for p in roce)
    if len(mtus) > 1:
        common, _ = mtus.most_common(1)[0]
        odd = [f"{p.device}/{p.port} ({p.netdev}) MTU {p.mtu}" for p in roce if p.mtu != common]
        yield "roce_mtu_mismatch", f"{_listed(odd)}; the other RoCE ports: MTU {common}"
    yield from _layer_minority(active)


def _layer_minority(active: Sequence[RdmaPort]) -> Iterator[tuple[str, str]]:
    """Ports of one rate are one fabric: a lone port of another link layer among at least
    three is in the wrong port mode (storage NICs of another rate are not compared)."""
    for rate in {p.rate_gbps for p in active if p.rate_gbps}:
        same = [p for p in active if p.rate_gbps == rate and p.link_layer]
        layers = Counter(p.link_layer for p in same)
        if len(same) >= 3 and len(layers) == 2:
            (major, _), (minor, count) = layers.most_common()
            if count == 1:
                odd = next(p for p in same if p.link_layer == minor)
                peers = f"{len(same) - 1} peers at {rate:g} Gb/s are {major}"
                yield "rdma_link_layer_mismatch", f"{_port(odd)} is {minor}; {peers}"


@check("rdma-links", needs=PROBE_NEEDS)
def probe_rdma_links(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The probe's RDMA ports and SR-IOV functions."""
    probe = ctx.probe
    if probe is None:
        yield unknown(component, "the probe's facts could not be read")
        return
    yield from judge_ports(probe.host.rdma_ports, component, ctx, PROBE_FILE)
    yield from _sriov(ctx, probe, component)


def _sriov(ctx: NodeContext, probe: ProbeResult, component: str) -> Iterator[Finding]:
    """The probe's SR-IOV functions (interface, VFs, VF capacity)."""
    rows = [(f.netdev, f.numvfs, f.totalvfs) for f in probe.interconnect.sriov]
    yield from _sriov_gaps(ctx, rows, component, PROBE_FILE)


def _sriov_gaps(
    ctx: NodeContext, rows: Sequence[tuple[str, int | None, int | None]], component: str, source: str
) -> Iterator[Finding]:
    """A function with no VFs while its siblings (same VF capacity) have them, or while the
    SR-IOV device plugin runs on the node."""
    with_vfs = {total for _, vfs, total in rows if vfs}
    plugin = bool(ctx.stack_pods("sriov-device-plugin"))
    empty = [(name, total) for name, vfs, total in rows
             if vfs == 0 and total and (total in with_vfs or (plugin and not with_vfs))]
    if empty:
        shown = _listed([f"{name}: 0 of {total} VFs" for name, total in empty])
        yield _found(ctx, component, "sriov_vfs_missing", _ev(ctx, source, shown))


def collected_ports(ctx: NodeContext) -> tuple[str, SysfsRdma] | None:
    """The RDMA ports from the most complete collected file, or None when none was
    collected. An empty ibstat or ibv_devinfo answer is the tool missing, not a node
    without HCAs; an empty sysfs read is a node without ``/sys/class/infiniband``."""
    for name in RDMA_SOURCES:
        text = ctx.obs.cmd.get(name)
        if text is None:
            continue
        if name == SYSFS_RDMA:
            return name, parse_sysfs_dump(text)
        ports = parse_ibstat(text) if name == IBSTAT else parse_ibv_devinfo(text)
        if ports:
            return name, SysfsRdma(tuple(ports), {})
    return None


@check("rdma-links", may_find=_RDMA_COLLECTED)
def collected_rdma_links(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """Collected sysfs, ibstat or ibv_devinfo output, where the probe did not run."""
    found = None if ctx.probe is not None else collected_ports(ctx)
    if found is None:
        return
    source, read = found
    yield from judge_ports(read.ports, component, ctx, source)
    rows = [(device, vfs, total) for device, (vfs, total) in sorted(read.sriov.items())]
    yield from _sriov_gaps(ctx, rows, component, source)


# --- GPUDirect RDMA --------------------------------------------------------------


@check("gpudirect-rdma", needs=PROBE_NEEDS)
def probe_gpudirect(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """Peer memory or DMA-BUF for the GPU-NIC path, and a NIC near every GPU."""
    probe = ctx.probe
    if probe is None:
        yield unknown(component, "the probe's facts could not be read")
        return
    if not probe.host.rdma_ports:
        yield not_deployed(component, f"{NO_HCA}: no NIC for GPUDirect RDMA")
        return
    yield from _affinity(ctx, probe, component)
    direct = probe.interconnect.gpudirect
    ways = (["nvidia_peermem loaded"] if direct.nvidia_peermem else []) + (
        ["DMA-BUF"] if direct.dma_buf == "supported" else []
    )
    peermem = "loaded" if direct.nvidia_peermem else "not loaded"
    text = f"nvidia_peermem {peermem}; DMA-BUF {direct.dma_buf} ({direct.dma_buf_reason})"
    if ways:
        yield ok(component, f"GPUDirect RDMA via {' and '.join(ways)}", _ev(ctx, PROBE_FILE, text))
    else:
        ev = _ev(ctx, PROBE_FILE, text)
        yield unknown(component, "neither nvidia_peermem nor DMA-BUF is available", ev)


def _affinity(ctx: NodeContext, probe: ProbeResult, component: str) -> Iterator[Finding]:
    """With a NIC per GPU (rail-optimised), each GPU's nearest NIC must share its PCIe tree."""
    devices = {p.device for p in probe.host.rdma_ports}
    gpus = [g for g in probe.nvml.gpus if not g.lost]
    pairs = probe.interconnect.nic_affinity
    if len(gpus) < 2 or len(devices) < len(gpus) or not pairs:
        return
    far = [f"GPU {a.gpu}: nearest {a.device} is {a.link}" for a in pairs if a.link not in _NEAR]
    if far:
        yield _found(ctx, component, "nic_gpu_affinity_missing", _ev(ctx, PROBE_FILE, _listed(far)))


@check("gpudirect-rdma", may_find=_RDMA_COLLECTED)
def collected_gpudirect(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """Collected RDMA ports, ``nvidia-smi topo -m`` and lsmod, where the probe did not
    run: a NIC near each GPU, and nvidia_peermem (DMA-BUF is not visible from here)."""
    found = None if ctx.probe is not None else collected_ports(ctx)
    if found is None:
        return
    source, read = found
    if not read.ports:
        yield not_deployed(component, f"{NO_HCA}: no NIC for GPUDirect RDMA")
        return
    yield from _topo_affinity(ctx, {p.device for p in read.ports}, component)
    modules = ctx.modules
    if modules is not None and "nvidia_peermem" in modules:
        ev = Evidence(ctx.obs.path_of("cmd", "lsmod.txt"), "nvidia_peermem loaded")
        yield ok(component, "GPUDirect RDMA via nvidia_peermem", ev)
    else:
        seen = "lsmod: nvidia_peermem not loaded" if modules is not None else "lsmod not collected"
        ev = _ev(ctx, source, f"{len(read.ports)} RDMA port(s); {seen}")
        yield unknown(component, "nvidia_peermem is not loaded; DMA-BUF is not visible without the probe", ev)


def _topo_affinity(ctx: NodeContext, devices: set[str], component: str) -> Iterator[Finding]:
    """With a NIC per GPU (rail-optimised), each GPU's nearest NIC must share its PCIe tree."""
    matrix = parse_topo_matrix(ctx.obs.cmd.get(TOPO, ""))
    if matrix is None or len(matrix.gpus) < 2 or len(devices) < len(matrix.gpus) or not matrix.nics:
        return
    far = []
    for gpu in matrix.gpus:
        nearest = matrix.nearest_nic(gpu)
        if nearest is not None and nearest[1] not in NEAR_PATHS:
            far.append(f"{gpu}: nearest {nearest[0]} is {nearest[1]}")
    if far:
        yield _found(ctx, component, "nic_gpu_affinity_missing", _ev(ctx, TOPO, _listed(far)))


# --- nothing collected -----------------------------------------------------------

NOT_READ = "not read: this node's probe facts (cmd/gpunode-probe.json) were not collected"


def _links_not_collected(ctx: NodeContext, component: str) -> bool:
    cmd = ctx.obs.cmd
    if PROBE_FILE in cmd:
        return False
    if component == "nvlink-fabric":
        return NVLINK_STATUS not in cmd and not _fabric_registered(ctx)
    if component in ("rdma-links", "gpudirect-rdma"):
        return collected_ports(ctx) is None
    if component == "imex":
        return IMEX_STATE not in cmd or parse_imex_state(cmd[IMEX_STATE]) is None
    return True


def _fabric_registered(ctx: NodeContext) -> bool:
    """Whether collected nvidia-smi shows a GPU in a multi-node NVLink domain (a cluster
    UUID that is not zero; single-node NVSwitch systems report zero)."""
    smi = ctx.nvidia_smi if "nvidia-smi-q.xml" in ctx.obs.cmd else None
    return smi is not None and _COMPLETED in map(_FABRIC_STATE, smi.gpus) and any(
        g.fabric_state == "Completed" and g.fabric_cluster_uuid not in (None, ZERO_UUID) for g in smi.gpus
    )


@check("nvlink-fabric")
@check("imex")
@check("rdma-links")
@check("gpudirect-rdma")
def links_not_collected(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The links are optional components: a bundle without their data (no probe or agent ran
    on the node) shows them as not read, and they leave the node's verdict alone."""
    if _links_not_collected(ctx, component):
        yield not_deployed(component, NOT_READ)


# --- the RDMA shared device plugin's own count -------------------------------------

#: The plugin's report after each discovery round (k8s-rdma-shared-dev-plugin:
#: 'Updating "rdma/<name>" devices', then 'exposing "<n>" devices').
_UPDATING = lazy_compile(r'\bUpdating "(?P<resource>[\w./-]+)" devices')
_EXPOSING = lazy_compile(r'\bexposing "(?P<count>\d+)" devices')


def _rounds(lines: Sequence[str]) -> list[tuple[int, str | None, int]]:
    """Each ``exposing`` line: its index, the resource it counts (the last ``Updating``
    line before it, if any) and the count."""
    out: list[tuple[int, str | None, int]] = []
    resource: str | None = None
    for index, line in enumerate(lines):
        if (updating := _UPDATING.search(line)) is not None:
            resource = updating["resource"]
        elif (exposing := _EXPOSING.search(line)) is not None:
            out.append((index, resource, int(exposing["count"])))
    return out


@check("rdma-device-plugin", may_find=pods_here("rdma-device-plugin"))
def rdma_plugin_exposes(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """What the running plugin says it serves, against what it logged and what the node
    shows. A round that ends exposing no device after errors failed on those errors (the
    plugin keeps running and rediscovers, never crashing); a resource the plugin last
    counted above zero that the node shows at 0 never reached the kubelet."""
    for sp in ctx.stack_pods(component):
        for log in ctx.logs_of(sp.pod):
            if not log.previous:
                yield from _named_resource_zero(ctx, component, log)
            rounds = _rounds(log.lines) if not log.previous else []
            if not rounds:
                continue
            yield from _empty_round(ctx, component, log, rounds)
            yield from _count_not_shown(ctx, component, log, rounds)


#: A plugin's own word that its discovery found no device at all, the whole message of its
#: line whatever level it gave it (hustcat/k8s-rdma-device-plugin's "No devices found.",
#: hustcat/k8s-rdma-device-plugin#19: a Soft-RoCE device it cannot serve): it then
#: advertises nothing. A resource that matches no device among others that do ("Warning: no
#: Rdma Devices were found for resource hpc_shared_devices_b", Mellanox/k8s-rdma-shared-dev-
#: plugin#44) is skipped by design (Mellanox/k8s-rdma-shared-dev-plugin#23) and is not this.
_NONE_FOUND = lazy_compile(r"^No (?:RDMA |rdma |IB |network )?devices? (?:were )?found\.?$")
#: A later round that serves a device: the earlier "none found" is over.
_SERVING = lazy_compile(r'\bexposing "[1-9]\d*" devices|\bRegistered device plugin\b|\bdevices? found: \S')


@check("rdma-device-plugin", may_find=pods_here("rdma-device-plugin"))
def rdma_plugin_found_none(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The running plugin's last word on discovery is that it found no device."""
    for _, log in ctx.current_logs(component):
        found = _none_found(log.lines)
        if found is not None:
            yield line_finding(ctx.kb, component, Status.DEGRADED, found, f"{log.path}:{found.line_no}",
                               verb="finds no devices", namespace=log.namespace, pod=log.pod,
                               container=log.container, standalone="true")
            return


#: The plugin's discovery saying a device it selected has no RDMA side: its own warning for a
#: netdev without RDMA char devices ("Warning: non-Rdma Device ens2f0", Mellanox/network-operator#31),
#: a resource left without any ("no Rdma Devices were found for resource ..."), or a device
#: missing one of its char devices ('RDMA device "issm" not found', k8s-rdma-shared-dev-plugin#44).
_NO_RDMA_SIDE = lazy_compile(r"(?i)\bnon-?RDMA device\b|\bno RDMA devices? (?:were )?found\b"
                             r"|\bRDMA device \\?\"?\w+\\?\"? not found\b")


@check("rdma-device-plugin", may_find=pods_here("rdma-device-plugin"))
def rdma_plugin_before_ofed(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A running plugin that found its devices without their RDMA side while the node's OFED
    driver container was (re)starting: it discovered before the driver loaded its modules and
    serves an unusable resource until restarted (Mellanox/network-operator#31 after a reboot;
    the plugin later fails or re-checks instead, k8s-rdma-shared-dev-plugin#23 and PR #24). With
    OFED running undisturbed the same words are a selector matching a non-RDMA netdev or a
    resource skipped by design, and are not read here."""
    if not _ofed_restarting(ctx):
        return
    for sp in ctx.stack_pods(component):
        for log in ctx.logs_of(sp.pod):
            found = None if log.previous else _last_no_rdma_side(log.lines)
            if found is not None:
                where = f"{log.path}:{found.line_no}"
                yield line_finding(ctx.kb, component, Status.DEGRADED, found, where,
                                   verb="started before OFED loaded its modules",
                                   line_class="error_not_found",
                                   namespace=log.namespace, pod=log.pod, container=log.container,
                                   standalone="true")
                return


def _ofed_restarting(ctx: NodeContext) -> bool:
    """The node's OFED driver pod restarted or is not ready: its modules were (re)loading."""
    statuses = [c for sp in ctx.stack_pods("ofed") for c in sp.pod.status.container_statuses]
    return any(c.restart_count > 0 or not c.ready for c in statuses)


def _last_no_rdma_side(lines: Sequence[str]) -> Decisive | None:
    """The last line that says a device has no RDMA side, unless a later one serves a device."""
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index].strip()
        if _SERVING.search(line):
            return None
        if _NO_RDMA_SIDE.search(line):
            return Decisive(index + 1, line[:MAX_LINE], 1)
    return None


def _none_found(lines: Sequence[str]) -> Decisive | None:
    """The last line that says no device was found, unless a later one serves a device."""
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index].strip()
        if _SERVING.search(line):
            return None
        if "found" in line and _NONE_FOUND.match(message_of(line)):
            return Decisive(index + 1, line[:MAX_LINE], 1)
    return None


def _empty_round(ctx: NodeContext, component: str, log: LogFile,
                 rounds: list[tuple[int, str | None, int]]) -> Iterator[Finding]:
    end, _, count = rounds[-1]
    if count:
        return
    start = rounds[-2][0] + 1 if len(rounds) > 1 else 0
    found = decisive_line(log.lines[start:end], ctx.kb.class_of)
    if found is None:
        return  # no device matched its selectors here: nothing failed
    found = Decisive(found.line_no + start, found.line, found.strength)
    yield as_catalogued(ctx.kb, line_finding(
        ctx.kb, component, Status.DEGRADED, found, f"{log.path}:{found.line_no}",
        verb="exposes no devices after", namespace=log.namespace, pod=log.pod,
        container=log.container, standalone="true"))


#: A resource name quoted in a line ("rdma/mlnx_shared", "rdma/hca_shared_devices_a").
_RDMA_RESOURCE = lazy_compile(r'"(?P<resource>rdma/[\w.-]+)"')


def _named_resource_zero(ctx: NodeContext, component: str, log: LogFile) -> Iterator[Finding]:
    """The plugin's last error quotes one of its rdma/* resources and the node shows that
    resource at 0: the error is why the count never reached the kubelet (a ListAndWatch
    stream lost when the kubelet restarted, a registration refused). A resource at 0 with no
    error naming it may simply match no device here, and is left to the other checks."""
    node = ctx.node
    found = decisive_line(log.lines, ctx.kb.class_of)
    if node is None or found is None:
        return
    named = _RDMA_RESOURCE.search(found.line)
    if named is None or node.status.allocatable.get(named["resource"]) != "0":
        return
    where = f"{log.path}:{found.line_no}"
    shown = f"{named['resource']}=0 on the node; the plugin's last error: {found.line.strip()[:MAX_LINE]}"
    yield _found(ctx, component, "rdma_resources_zero",
                 Evidence(f"node/{ctx.name} status.allocatable", shown), Evidence(where, found.line.strip()))


def _count_not_shown(ctx: NodeContext, component: str, log: LogFile,
                     rounds: list[tuple[int, str | None, int]]) -> Iterator[Finding]:
    node = ctx.node
    if node is None:
        return
    last: dict[str, tuple[int, int]] = {}
    for index, resource, count in rounds:
        if resource is not None:
            last[resource] = (index, count)
    for resource, (index, count) in sorted(last.items()):
        if count and node.status.allocatable.get(resource) == "0":
            shown = f"{resource}=0 on the node; the plugin last exposed {count} ({log.path}:{index + 1})"
            yield _found(ctx, component, "rdma_resources_zero",
                         Evidence(f"node/{ctx.name} status.allocatable", shown))


# --- RDMA devices without a node GUID ----------------------------------------------

#: A device's node GUID as each collected file shows it, where it is all zeros: ibstat's CA
#: block ("Node GUID: 0x0000000000000000"), ibv_devinfo's ("node_guid: 0000:0000:0000:0000"),
#: the sysfs dump's ("<device>/node_guid:0000:0000:0000:0000").
_ZERO_GUID = {
    IBSTAT: lazy_compile(r"^\s*Node GUID:\s*0x0{16}\s*$"),
    IBV_DEVINFO: lazy_compile(r"^\s*node_guid:\s*0{4}(?::0{4}){3}\s*$"),
    SYSFS_RDMA: lazy_compile(r"^(?:\S*/)?[\w.-]+/node_guid:0{4}(?::0{4}){3}\s*$"),
}
#: The kernel's line for a user-space process that faulted, naming the library it faulted in
#: ("<comm>[pid]: segfault at <addr> ip <ip> sp <sp> error <n> in <library>[<base>+<size>]"),
#: where that library is the RDMA stack's own user space: the connection manager (librdmacm),
#: the verbs library (libibverbs) or a verbs provider (libmlx5, libmlx4, lib<name>-rdmav<N>).
_RDMA_LIB_SEGFAULT = lazy_compile(
    r"\[\d+\]: segfault at \w+ ip \w+ sp \w+ error \d+ in "
    r"(?:librdmacm|libibverbs|libmlx[45]|lib\w+-rdmav\d+)\.so[\w.]*\[")


def _zero_guid_line(ctx: NodeContext) -> tuple[str, int, str] | None:
    """The first collected line that shows an RDMA device whose node GUID is all zeros."""
    for name in RDMA_SOURCES:
        split = ctx.text_lines("cmd", name)
        if split is None:
            continue
        pattern = _ZERO_GUID[name]
        for index, line in enumerate(split[0]):
            if pattern.match(line):
                return name, index + 1, line.strip()
    return None


@check("rdma-links", may_find=_RDMA_COLLECTED)
def rdma_cm_without_node_guid(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """An RDMA device with no node GUID while the RDMA stack's own user space crashed on the
    node: RDMA-CM resolves a peer by its GUID-based addresses, and a VF the SR-IOV setup left
    with an all-zero node GUID breaks it (k8snetworkplumbingwg/sriov-network-operator#267:
    ib_write_bw -R segfaulted in librdmacm on ConnectX-6 VFs with GUID 0). A VF without a
    GUID alone is no fault (an InfiniBand VF gets its GUID when a pod is given it, and a job
    that never uses RDMA-CM does not care), nor is such a crash on a node whose devices all
    have GUIDs (the program's own bug)."""
    kernel = ctx.text_lines("cmd", "dmesg.txt")
    if kernel is None:
        return
    lines = kernel[0]
    crash = next((i for i in range(len(lines) - 1, -1, -1)
                  if "segfault" in lines[i] and _RDMA_LIB_SEGFAULT.search(lines[i])), None)
    if crash is None or (zero := _zero_guid_line(ctx)) is None:
        return
    source, line_no, guid = zero
    found = Decisive(crash + 1, lines[crash].strip()[:MAX_LINE], 1)
    where = f"{ctx.obs.path_of('cmd', 'dmesg.txt')}:{crash + 1}"
    also = Evidence(f"{ctx.obs.path_of('cmd', source)}:{line_no}", guid)
    yield line_finding(ctx.kb, component, Status.DEGRADED, found, where,
                       verb="crashes RDMA-CM on a device without a node GUID", evidence=(also,))
