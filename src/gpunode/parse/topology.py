"""``nvidia-smi topo -m``: how each GPU reaches the other GPUs and the NICs.

The matrix has one header line naming the devices (``GPU0 … NIC0 …`` on drivers that
print a NIC legend, the RDMA device names such as ``mlx5_0`` on older ones) followed by
``CPU Affinity`` / ``NUMA Affinity`` / ``GPU NUMA ID``, then one row per device::

            GPU0    GPU1    NIC0    CPU Affinity    NUMA Affinity   GPU NUMA ID
    GPU0     X      NV6     PIX     6,14,22,30      3               N/A
    NIC0    PIX     SYS      X

    NIC Legend:

      NIC0: mlx5_0

Cells are the legend's words (``X``, ``NV<n>``, ``PIX``, ``PXB``, ``PHB``, ``NODE``,
``SYS``; ``SOC`` on old drivers). nvidia-smi underlines the header on a terminal, so
terminal sequences are dropped first. A single-GPU node prints a one-cell matrix.
"""

from __future__ import annotations

import msgspec

from gpunode.relazy import lazy_compile

_ESCAPES = lazy_compile(r"\x1b\[[0-9;]*[A-Za-z]")
_GPU = lazy_compile(r"^GPU\d+$")
_LEGEND = lazy_compile(r"^\s*(NIC\d+)\s*:\s*(\S+)\s*$")
_NVLINK = lazy_compile(r"^NV(\d+)$")
#: Nearest first (nvidia-smi's legend; ``SOC`` is the old name of ``SYS``).
PATH_ORDER = ("X", "NV", "PIX", "PXB", "PHB", "NODE", "SYS", "SOC")
#: A NIC this close shares the GPU's PCIe switch or host bridge: GPUDirect RDMA works well.
NEAR_PATHS = frozenset({"PIX", "PXB", "PHB"})


class TopoMatrix(msgspec.Struct, frozen=True):
    """The devices in header order and each (row, column) cell's word."""

    devices: tuple[str, ...]
    cells: dict[str, dict[str, str]]
    nic_names: dict[str, str] = msgspec.field(default_factory=dict)  # NIC0 -> mlx5_0

    @property
    def gpus(self) -> tuple[str, ...]:
        return tuple(d for d in self.devices if _GPU.match(d))

    @property
    def nics(self) -> tuple[str, ...]:
        return tuple(d for d in self.devices if not _GPU.match(d))

    def name(self, device: str) -> str:
        """A NIC column's RDMA device name where the legend gives it."""
        return self.nic_names.get(device, device)

    def nvlinks(self, gpu: str) -> dict[str, int]:
        """The GPU's NVLink peers and the number of links to each (``NV<n>``)."""
        out = {}
        for other, word in self.cells.get(gpu, {}).items():
            found = _NVLINK.match(word)
            if found and _GPU.match(other):
                out[other] = int(found.group(1))
        return out

    def nearest_nic(self, gpu: str) -> tuple[str, str] | None:
        """The NIC closest to the GPU on the PCIe tree and the path word, or None."""
        row = self.cells.get(gpu, {})
        found = [(path_rank(row[n]), n) for n in self.nics if n in row]
        if not found:
            return None
        _, nic = min(found)
        return self.name(nic), row[nic]


def path_rank(word: str) -> int:
    """Position of a cell's word in the legend, nearest first (unknown words last)."""
    key = "NV" if _NVLINK.match(word) else word
    return PATH_ORDER.index(key) if key in PATH_ORDER else len(PATH_ORDER)


def parse_topo_matrix(text: str) -> TopoMatrix | None:
    """The matrix, or None when the text holds no ``GPU0`` header (an error message,
    empty output)."""
    lines = [_ESCAPES.sub("", line).rstrip() for line in text.splitlines()]
    header_at = next((i for i, line in enumerate(lines) if line.split()[:1] == ["GPU0"]), None)
    if header_at is None:
        return None
    devices = _columns(lines[header_at])
    cells: dict[str, dict[str, str]] = {}
    names: dict[str, str] = {}
    for line in lines[header_at + 1 :]:
        tokens = line.split()
        legend = _LEGEND.match(line)
        if legend:
            names[legend.group(1)] = legend.group(2)
        elif tokens and tokens[0] in devices and len(tokens) > len(devices):
            cells[tokens[0]] = dict(zip(devices, tokens[1 : len(devices) + 1], strict=True))
    return TopoMatrix(devices, cells, names)


def _columns(header: str) -> tuple[str, ...]:
    """Device names up to the affinity columns."""
    out = []
    for token in header.split():
        if token in ("CPU", "NUMA", "GPU") or token.startswith("Affinity"):
            break
        out.append(token)
    return tuple(out)
