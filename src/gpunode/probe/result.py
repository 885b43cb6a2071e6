"""What one probe saw, as the checks read it: ``ProbeResult``, the Structs of its
interconnect section, and its JSON form.

The checks, the doubts, the fleet profile and the agent's fold import this module rather
than the package, which also holds the probe's readers and its runner. The interconnect
section's Structs live here, apart from their reader (``probe.interconnect``, which reads
the host's facts too), so a result sits one step above the host's facts, not three.
"""

from __future__ import annotations

import msgspec

from gpunode.errors import ParseError
from gpunode.probe.host_facts import HostFacts
from gpunode.probe.nvml import NvmlFacts

PROBE_FORMAT = "gpunode-probe/v1"


class NicAffinity(msgspec.Struct, frozen=True):
    """The RDMA device nearest one GPU, and how near (``probe.interconnect.PCIE_LEVELS``)."""

    gpu: int
    device: str
    link: str


class SriovFunction(msgspec.Struct, frozen=True):
    """A physical function that can carry SR-IOV virtual functions."""

    netdev: str
    numvfs: int | None
    totalvfs: int | None


class ServiceState(msgspec.Struct, frozen=True):
    """A host daemon: running (None when host processes are out of sight), unit enabled
    at boot (None when no systemd config is visible), unit file installed."""

    running: bool | None
    enabled: bool | None
    installed: bool


class GpuDirect(msgspec.Struct, frozen=True):
    """GPUDirect RDMA's kernel side: the nvidia_peermem module, and whether DMA-BUF (its
    successor: open kernel module on Linux 5.12 or later) is available instead."""

    nvidia_peermem: bool | None
    dma_buf: str  # "supported", "unsupported", "unknown"
    dma_buf_reason: str


class ImexFacts(msgspec.Struct, frozen=True):
    """IMEX's node list (peers by IP) and the channel device nodes workloads open."""

    nodes_config: str | None
    peers: tuple[str, ...]
    channels: tuple[str, ...]


class InterconnectFacts(msgspec.Struct, frozen=True):
    """The probe's interconnect section; ``nvlink`` and ``infiniband`` are one-line verdicts."""

    nvlink: str = "unknown"
    infiniband: str = "unknown"
    nvswitches: int = 0
    nic_affinity: tuple[NicAffinity, ...] = ()
    sriov: tuple[SriovFunction, ...] = ()
    gpudirect: GpuDirect = msgspec.field(default_factory=lambda: GpuDirect(None, "unknown", "not read"))
    services: dict[str, ServiceState] = msgspec.field(default_factory=dict)
    imex: ImexFacts = msgspec.field(default_factory=lambda: ImexFacts(None, (), ()))


class ProbeResult(msgspec.Struct, frozen=True):
    """Everything one probe saw. ``raw`` maps bundle paths under ``nodes/<node>/``
    (``cmd/dmesg.txt``, ``files/proc/modules``, ...) to the text read; it is left
    out of :func:`probe_json` so the facts file stays small."""

    format: str
    node_name: str
    host_root: str
    collected_at: str
    gpunode_version: str
    duration_seconds: float
    timings: dict[str, float]
    nvml: NvmlFacts
    host: HostFacts
    nvidia_smi: str = "not_run"
    errors: tuple[str, ...] = ()
    interconnect: InterconnectFacts = msgspec.field(default_factory=InterconnectFacts)
    raw: dict[str, str] = msgspec.field(default_factory=dict)


# Built at import: msgspec builds a type's decoding information on first use, and
# doing that from several threads at once (collector workers) can crash CPython.
_PROBE_DECODER = msgspec.json.Decoder(ProbeResult)


def probe_json(result: ProbeResult, indent: int = 2) -> bytes:
    """The facts as JSON, without the raw texts (those go to the bundle)."""
    facts = msgspec.structs.asdict(result)
    del facts["raw"]
    return msgspec.json.format(msgspec.json.encode(facts), indent=indent) + b"\n"


def load_probe_json(data: bytes | str) -> ProbeResult:
    """Decode a ``gpunode-probe.json`` (e.g. from a bundle) into a ProbeResult."""
    try:
        result = _PROBE_DECODER.decode(data)
    except msgspec.DecodeError as exc:
        raise ParseError(f"not a gpunode probe result: {str(exc).splitlines()[0]}") from None
    except RecursionError:
        raise ParseError("not a gpunode probe result: nested too deeply") from None
    if result.format != PROBE_FORMAT:
        raise ParseError(f"unsupported probe format {result.format!r}")
    return result
