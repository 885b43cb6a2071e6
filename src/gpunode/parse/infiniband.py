"""RDMA port state from ``/sys/class/infiniband/<dev>/ports/<n>/*``."""

from __future__ import annotations

import re
from collections.abc import Mapping

import msgspec

from gpunode.errors import ParseError
from gpunode.relazy import lazy_compile

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


_NUMBERED = lazy_compile(r"^\s*(\d+)\s*:\s*(\S.*?)\s*$")
_RATE = lazy_compile(r"^\s*(\d+(?:\.\d+)?)\s*Gb/sec")
_WIDTH_SPEED = lazy_compile(r"\((\d+X)\s*([A-Z]+)?\)")
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


# --- ibstat, ibv_devinfo and a grep of sysfs, as collected (docs/bundle-format.md) ---

#: The kernel's port state numbers (``/sys/.../state``: ``4: ACTIVE``) by the names
#: ibstat (``Active``) and ibv_devinfo (``PORT_ACTIVE``) print.
_STATE_IDS = {"DOWN": 1, "INIT": 2, "INITIALIZING": 2, "ARMED": 3, "ACTIVE": 4, "ACTIVE_DEFER": 5}
_STATE_NAMES = {1: "DOWN", 2: "INIT", 3: "ARMED", 4: "ACTIVE", 5: "ACTIVE_DEFER"}
#: Physical states in sysfs's spelling, keyed by ibstat's and ibv_devinfo's.
_PHYS_NAMES = {
    "SLEEP": "Sleep",
    "POLLING": "Polling",
    "DISABLED": "Disabled",
    "PORTCONFIGURATIONTRAINING": "PortConfigurationTraining",
    "PORT_CONFIGURATION_TRAINING": "PortConfigurationTraining",
    "LINKUP": "LinkUp",
    "LINK_UP": "LinkUp",
    "LINKERRORRECOVERY": "LinkErrorRecovery",
    "LINK_ERROR_RECOVERY": "LinkErrorRecovery",
    "PHY TEST": "Phy Test",
    "PHY_TEST": "Phy Test",
}
#: ``CA 'mlx5_0'`` heads the full listing; ``ibstat <ca> <port>`` prints ``CA: 'mlx5_0'``
#: (the node type, a colon) and the port's fields unindented (infiniband-diags ibstat.c).
_CA = lazy_compile(r"^(?:CA|Switch|Router):? '([^']+)'")
_PORT = lazy_compile(r"^\s*Port (\d+):\s*$")
_FIELD = lazy_compile(r"^\s*([A-Za-z][A-Za-z _]*?):\s*(.*?)\s*$")
#: The name given to ports whose CA header is not in the text (a port block on its own).
UNNAMED_CA = "unnamed-ca"
_END = "\x00end"  # flushes the last port
_WIDTHS = {"1X": 1, "2X": 2, "4X": 4, "8X": 8, "12X": 12}


def _state(name: str) -> tuple[int, str]:
    """``Active`` / ``PORT_ACTIVE (4)`` to (4, "ACTIVE"); an unknown name keeps id 0."""
    number = re.search(r"\((\d+)\)", name)
    key = name.split("(", maxsplit=1)[0].strip().upper().removeprefix("PORT_")
    state_id = int(number.group(1)) if number else _STATE_IDS.get(key, 0)
    return state_id, _STATE_NAMES.get(state_id, key)


def _phys(name: str) -> str:
    key = name.split("(", maxsplit=1)[0].strip().upper()
    return _PHYS_NAMES.get(key, name.split("(", maxsplit=1)[0].strip())


def parse_ibstat(text: str) -> list[RdmaPort]:
    """``ibstat``: ``CA 'mlx5_0'`` blocks with ``Port N:`` sections (State, Physical
    state, Rate in Gb/s, Link layer). Ports without a State line are skipped; a port
    block without its CA header (``ibstat`` cut to one port) is kept as ``UNNAMED_CA``'s."""
    ports: list[RdmaPort] = []
    device, port, fields = UNNAMED_CA, 0, dict[str, str]()
    for line in [*text.splitlines(), _END]:
        ca, numbered = _CA.match(line), _PORT.match(line)
        if (ca or numbered or line is _END) and device and port and "State" in fields:
            ports.append(_ibstat_port(device, port, fields))
        if ca:
            device, port, fields = ca.group(1), 0, {}
        elif numbered:
            port, fields = int(numbered.group(1)), {}
        elif port and (found := _FIELD.match(line)):
            fields[found.group(1).strip()] = found.group(2)
    return ports


def _ibstat_port(device: str, port: int, fields: dict[str, str]) -> RdmaPort:
    state_id, state = _state(fields["State"])
    rate = re.match(r"^(\d+(?:\.\d+)?)", fields.get("Rate", ""))
    return RdmaPort(
        device=device,
        port=port,
        state=state,
        state_id=state_id,
        phys_state=_phys(fields.get("Physical state", "")),
        link_layer=fields.get("Link layer", ""),
        rate_gbps=float(rate.group(1)) if rate else None,
    )


def parse_ibv_devinfo(text: str) -> list[RdmaPort]:
    """``ibv_devinfo`` (``-v`` adds phys_state, active_width and active_speed, from
    which the rate follows): ``hca_id:`` blocks with ``port:`` sections."""
    ports: list[RdmaPort] = []
    device, port, fields = "", 0, dict[str, str]()
    for line in [*text.splitlines(), "hca_id:"]:
        key, _, value = line.strip().partition(":")
        if key in ("hca_id", "port") and device and port and "state" in fields:
            ports.append(_devinfo_port(device, port, fields))
        if key == "hca_id":
            device, port, fields = value.strip(), 0, {}
        elif key == "port" and value.strip().isdigit():
            port, fields = int(value.strip()), {}
        elif port and value:
            fields.setdefault(key.strip(), value.strip())
    return ports


def _devinfo_port(device: str, port: int, fields: dict[str, str]) -> RdmaPort:
    state_id, state = _state(fields["state"])
    width = fields.get("active_width", "").split(" ")[0] or None
    speed = re.match(r"^(\d+(?:\.\d+)?) Gbps", fields.get("active_speed", ""))
    lanes = _WIDTHS.get(width or "")
    return RdmaPort(
        device=device,
        port=port,
        state=state,
        state_id=state_id,
        phys_state=_phys(fields["phys_state"]) if "phys_state" in fields else "",
        link_layer=fields.get("link_layer", ""),
        rate_gbps=lanes * float(speed.group(1)) if lanes and speed else None,
        width=width,
    )


class SysfsRdma(msgspec.Struct, frozen=True):
    """What a ``grep -H .`` of ``/sys/class/infiniband`` shows: the ports, and per
    device its SR-IOV counts where the PCI function has them."""

    ports: tuple[RdmaPort, ...]
    sriov: dict[str, tuple[int, int]]  # device -> (sriov_numvfs, sriov_totalvfs)
    errors: tuple[str, ...] = ()


_SYSFS_LINE = lazy_compile(r"^(?:/sys/class/infiniband/)?([\w.-]+)/(.+?):(.*)$")


def parse_sysfs_dump(text: str) -> SysfsRdma:
    """``<device>/<path>:<value>`` lines, as ``grep -H .`` prints them from inside
    ``/sys/class/infiniband`` (an absolute prefix is accepted too)."""
    files: dict[str, dict[str, str]] = {}
    for line in text.splitlines():
        found = _SYSFS_LINE.match(line)
        if found:
            files.setdefault(found.group(1), {})[found.group(2)] = found.group(3)
    ports: list[RdmaPort] = []
    errors: list[str] = []
    sriov: dict[str, tuple[int, int]] = {}
    for device, attrs in sorted(files.items()):
        netdev, mtu = _device_netdev(attrs)
        numbers = sorted({int(p.split("/")[1]) for p in attrs if re.match(r"^ports/\d+/state$", p)})
        for number in numbers:
            prefix = f"ports/{number}/"
            mine = {k.removeprefix(prefix): v for k, v in attrs.items() if k.startswith(prefix)}
            try:
                port = parse_rdma_port(device, number, mine)
            except ParseError as exc:
                errors.append(f"{device}/{number}: {exc}")
                continue
            own = mine.get("gid_attrs/ndevs/0", "").strip() or netdev
            ports.append(msgspec.structs.replace(port, netdev=own, mtu=mtu if own == netdev else None))
        vfs = attrs.get("device/sriov_numvfs", "").strip(), attrs.get("device/sriov_totalvfs", "").strip()
        if vfs[0].isdigit() and vfs[1].isdigit():
            sriov[device] = (int(vfs[0]), int(vfs[1]))
    return SysfsRdma(tuple(ports), sriov, tuple(errors))


def _device_netdev(attrs: Mapping[str, str]) -> tuple[str | None, int | None]:
    """The PCI function's first interface and its MTU (``device/net/<if>/mtu``)."""
    found = sorted(
        (key.split("/")[2], value.strip())
        for key, value in attrs.items()
        if re.match(r"^device/net/[^/]+/mtu$", key)
    )
    if not found:
        return None, None
    name, mtu = found[0]
    return name, int(mtu) if mtu.isdigit() else None
