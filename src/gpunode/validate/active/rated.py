"""The rated speed of the links an all-reduce between two nodes crosses (pure, from the
node files collect gathered).

Two nodes whose GPUs report one NVLink domain (nvidia-smi ``<fabric>``: the same cluster
UUID and clique) all-reduce over NVLink: the rate is one GPU's active NVLinks (``nvidia-smi
nvlink -s`` per-link GB/s, the GPU with the fewest). Otherwise the traffic leaves through
the RDMA ports: the node's active InfiniBand / RoCE ports summed (sysfs, ibstat or
ibv_devinfo rate, Gb/s over 8). A pair is rated at its slower side; a node with neither
has no rating, and its pair is judged against the configured floor alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gpunode.errors import ParseError
from gpunode.facts import NodeObservations
from gpunode.parse.infiniband import RdmaPort, parse_ibstat, parse_ibv_devinfo, parse_sysfs_dump
from gpunode.parse.nvidia_smi import parse_nvidia_smi_xml
from gpunode.parse.nvlink import parse_nvlink_status

SYSFS_RDMA, IBSTAT, IBV_DEVINFO = "sysfs-infiniband.txt", "ibstat.txt", "ibv_devinfo.txt"
NVLINK_STATUS, SMI_XML = "nvidia-smi-nvlink-s.txt", "nvidia-smi-q.xml"
_ACTIVE = (4, 5)  # ACTIVE, ACTIVE_DEFER
_ZERO_UUID = "00000000-0000-0000-0000-000000000000"


@dataclass(frozen=True)
class NodeLinks:
    """What one node's links are rated at, and the NVLink domain its GPUs are in."""

    rdma_gbps: float | None = None
    rdma_text: str = ""
    nvlink_gbps: float | None = None
    nvlink_text: str = ""
    domain: str | None = None


@dataclass(frozen=True)
class Rating:
    """A pair's rated bandwidth (GB/s) and what it was read from."""

    gbps: float
    text: str


def node_links(obs: NodeObservations) -> NodeLinks:
    """The node's RDMA and NVLink rates from its collected files (absent: None)."""
    rdma, rdma_text = _rdma(obs.cmd)
    nvlink, nvlink_text = _nvlink(obs.cmd.get(NVLINK_STATUS, ""))
    return NodeLinks(rdma, rdma_text, nvlink, nvlink_text, _domain(obs.cmd.get(SMI_XML)))


def pair_rating(a: NodeLinks, b: NodeLinks) -> Rating | None:
    """NVLink within one NVLink domain, else the RDMA ports; the slower side of the pair."""
    if a.domain and a.domain == b.domain and a.nvlink_gbps and b.nvlink_gbps:
        slow = a if a.nvlink_gbps <= b.nvlink_gbps else b
        return Rating(slow.nvlink_gbps or 0.0, f"NVLink domain {a.domain}: {slow.nvlink_text}")
    if a.rdma_gbps and b.rdma_gbps:
        slow = a if a.rdma_gbps <= b.rdma_gbps else b
        return Rating(slow.rdma_gbps or 0.0, slow.rdma_text)
    return None


def _rdma(cmd: Mapping[str, str]) -> tuple[float | None, str]:
    ports = _ports(cmd)
    up = [p for p in ports if p.state_id in _ACTIVE and p.rate_gbps]
    if not up:
        return None, ""
    total = sum(p.rate_gbps or 0.0 for p in up)
    layers = "/".join(sorted({p.link_layer for p in up}))
    return total / 8, f"{len(up)} active {layers} port(s), {total:g} Gb/s"


def _ports(cmd: Mapping[str, str]) -> list[RdmaPort]:
    if (text := cmd.get(SYSFS_RDMA)) is not None:
        return list(parse_sysfs_dump(text).ports)
    if (text := cmd.get(IBSTAT)) is not None:
        return parse_ibstat(text)
    if (text := cmd.get(IBV_DEVINFO)) is not None:
        return parse_ibv_devinfo(text)
    return []


def _nvlink(text: str) -> tuple[float | None, str]:
    """The GPU with the least active NVLink bandwidth: its links summed."""
    per_gpu = [
        (sum(lk.speed_gbps or 0.0 for lk in g.links if lk.active), sum(1 for lk in g.links if lk.active))
        for g in parse_nvlink_status(text)
    ]
    per_gpu = [(gbps, n) for gbps, n in per_gpu if gbps > 0]
    if not per_gpu:
        return None, ""
    gbps, links = min(per_gpu)
    return gbps, f"{links} active NVLinks per GPU, {gbps:g} GB/s"


def _domain(xml: str | None) -> str | None:
    """The NVLink domain every GPU reports (``<ClusterUUID>.<CliqueId>``), or None."""
    if not xml:
        return None
    try:
        gpus = parse_nvidia_smi_xml(xml).gpus
    except ParseError:
        return None
    domains = {
        f"{g.fabric_cluster_uuid}.{g.fabric_clique_id}"
        for g in gpus
        if g.fabric_state == "Completed" and g.fabric_cluster_uuid not in (None, "", "N/A", _ZERO_UUID)
    }
    return domains.pop() if len(domains) == 1 and gpus else None
