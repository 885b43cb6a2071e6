"""RDMA port state from ``/sys/class/infiniband/<dev>/ports/<n>/*``."""

from __future__ import annotations

import re
from collections.abc import Mapping

import msgspec

from gpunode.errors import ParseError

SYSFS_INFINIBAND = "/sys/class/infiniband"


class RdmaPort(msgspec.Struct, frozen=True):
    """One HCA port: ``state_id`` 4 is ACTIVE; ``phys_state`` LinkUp means cabled and up."""

    device: str
    port: int
    state: str
    state_id: int
    phys_state: str
    link_layer: str
    rate_gbps: float | None
    width: str | None = None  # "4X", from the rate text "400 Gb/sec (4X NDR)"
    speed: str | None = None  # "NDR", "HDR", ... (InfiniBand names; RoCE ports too)
    netdev: str | None = None  # the Ethernet/IPoIB interface of the port's PCI function
    mtu: int | None = None  # that interface's MTU (RoCE's usable MTU follows it)
    counters: dict[str, int] = msgspec.field(default_factory=dict)  # ports/<n>/counters/*


_NUMBERED = re.compile(r"^\s*(\d+)\s*:\s*(\S.*?)\s*$")
_RATE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*Gb/sec")
_WIDTH_SPEED = re.compile(r"\((\d+X)\s*([A-Z]+)?\)")
#: Port counters worth reading (``/sys/class/infiniband/<dev>/ports/<n>/counters/``):
#: link-level trouble, not traffic. Kept only when they parse as integers.
PORT_ERROR_COUNTERS = (
    "symbol_error",
    "link_error_recovery",
    "link_downed",
    "port_rcv_errors",
    "port_rcv_remote_physical_errors",
    "port_xmit_discards",
    "local_link_integrity_errors",
    "excessive_buffer_overrun_errors",
)


def port_file(device: str, port: int, name: str) -> str:
    """Absolute sysfs path of one port attribute."""
    return f"{SYSFS_INFINIBAND}/{device}/ports/{port}/{name}"


def parse_rdma_port(device: str, port: int, files: Mapping[str, str]) -> RdmaPort:
    """Decode a port; ``files`` is keyed by attribute name or by absolute sysfs path."""
    state_id, state = _numbered(_read(files, device, port, "state"), "state")
    phys = _read(files, device, port, "phys_state")
    rate = _read(files, device, port, "rate")
    width, speed = _width_speed(rate)
    return RdmaPort(
        device=device,
        port=port,
        state=state,
        state_id=state_id,
        phys_state=_numbered(phys, "phys_state")[1] if phys is not None else "",
        link_layer=(_read(files, device, port, "link_layer") or "").strip(),
        rate_gbps=_rate(rate),
        width=width,
        speed=speed,
        counters=_counters(files, device, port),
    )


def _read(files: Mapping[str, str], device: str, port: int, name: str) -> str | None:
    return files.get(name, files.get(port_file(device, port, name)))


def _numbered(text: str | None, name: str) -> tuple[int, str]:
    """``4: ACTIVE`` to ``(4, "ACTIVE")``."""
    match = _NUMBERED.match(text or "")
    if match is None:
        raise ParseError(f"RDMA port {name} is missing or not 'N: NAME': {text!r}")
    return int(match.group(1)), match.group(2)


def _rate(text: str | None) -> float | None:
    """``200 Gb/sec (4X HDR)`` to 200.0."""
    match = _RATE.match(text or "")
    return float(match.group(1)) if match else None


def _width_speed(text: str | None) -> tuple[str | None, str | None]:
    """``200 Gb/sec (4X HDR)`` to ("4X", "HDR"); RoCE ports may give only the width."""
    match = _WIDTH_SPEED.search(text or "")
    if match is None:
        return None, None
    return match.group(1), match.group(2)


def _counters(files: Mapping[str, str], device: str, port: int) -> dict[str, int]:
    """The error counters present among ``files`` (``counters/<name>`` keys or sysfs paths)."""
    found: dict[str, int] = {}
    for name in PORT_ERROR_COUNTERS:
        text = _read(files, device, port, f"counters/{name}")
        if text is not None and text.strip().isdigit():
            found[name] = int(text.strip())
    return found
