"""Kernel log text (dmesg, ``dmesg -T``, journald, /dev/kmsg records) for GPU events.

We search each line for the NVRM message rather than strip a known prefix, so any
timestamp style works; line numbers are 1-based positions in the input.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import msgspec

from gpunode.relazy import lazy_compile


class XidEvent(msgspec.Struct, frozen=True):
    """One ``NVRM: Xid (PCI:...): N, ...`` line (``pci`` is empty where the line quotes the
    report without its PCI tag)."""

    pci: str
    xid: int
    pid: str | None
    process: str | None
    message: str
    line_no: int
    line: str


class KernelLog(msgspec.Struct, frozen=True):
    """GPU-relevant facts found in a kernel log."""

    xids: tuple[XidEvent, ...]
    fallen_off_bus: tuple[tuple[int, str], ...]
    nvrm_errors: tuple[tuple[int, str], ...]
    driver_loaded: str | None
    pci_to_uuid: dict[str, str]


_XID = lazy_compile(
    r"NVRM: Xid \(PCI:(?P<pci>[0-9a-fA-F:.]+)\): (?P<xid>\d+)"
    r"(?:, pid=(?P<pid>'[^']*'|[^,]*))?"
    r"(?:, name=(?P<name>[^,]*))?"
    r"(?:, (?P<msg>.*))?"
)
#: The driver's Xid report quoted with its head cut to "Xid N, " (the "NVRM: " prefix and the
#: "(PCI:...): " tag dropped when a line is pasted into a ticket or a monitor's message: "Xid
#: 149, NETIR_LINK_DOWN Fatal XC0 i0 Link 14", marin-community/marin#8934). Read only where what
#: follows is the driver's own message shape, so prose naming a code ("Xid 79, then a reboot")
#: stays prose: its process fields ("pid=..., name=..."), or the NVLink5 unit report of Xids
#: 144-150, a unit word, the driver's severity word and the link ("149, NETIR Fatal XC0 i0
#: Link -1", "145, RLW_RXPIPE Nonfatal XC0 i0 Link 13", leptonai/gpud#1174; "144, SAW_MVB
#: Nonfatal XC0 i0 Link 0", leptonai/gpud#1160).
_BARE_XID = lazy_compile(
    r"(?<![\w:(])Xid (?P<xid>\d{1,3}), "
    r"(?=pid=|[A-Z][A-Z0-9_]*\s+(?:Fatal|Nonfatal)\s+XC\d+\s+i\d+\s+Link\s+-?\d+)"
    r"(?:pid=(?P<pid>'[^']*'|[^,]*), )?(?:name=(?P<name>[^,]*), )?(?P<msg>.*)"
)
_LOADED = lazy_compile(
    r"NVRM: loading NVIDIA UNIX .*?Module(?: for \S+)?\s+(?P<version>\d+(?:\.\d+)+)"
)
_GPU_AT = lazy_compile(r"NVRM: GPU at PCI:(?P<pci>[0-9a-fA-F:.]+): (?P<uuid>GPU-[0-9a-fA-F-]+)")
#: What a line must hold for each of the patterns above to match it.
_XID_LITERAL = "NVRM: Xid (PCI:"
_BARE_XID_LITERAL = "Xid "
_LOADED_LITERAL = "NVRM: loading NVIDIA UNIX "
_GPU_AT_LITERAL = "NVRM: GPU at PCI:"
_FALLEN = "fallen off the bus"
_NVRM_ERROR_MARKERS = (
    "is not supported by the",
    "API mismatch",
    "RmInitAdapter failed",
    "rm_init_adapter failed",
    "The NVIDIA probe routine failed",
    "No NVIDIA GPU found",
    "No NVIDIA devices probed",
    "failed to allocate",
    "request_mem_region failed",
    "Failed to enable MSI",
    "GPU is lost",
    "infoROM is corrupted",
    "RmVerifyVbios",
    "This PCI I/O region assigned to your NVIDIA device is invalid",
)
# Kernel refusals of an unsigned module (Secure Boot / lockdown); they do not
# always name the module, and on a GPU node the nvidia modules are the usual suspects.
_MODULE_LOAD_MARKERS = (
    "Key was rejected by service",
    "Loading of unsigned module is rejected",
    "unsigned module loading is restricted",
)
_UNKNOWN = {"<unknown>", "'<unknown>'", ""}


def iter_xid_events(lines: Iterable[str]) -> Iterator[XidEvent]:
    """Yield Xid events one line at a time, so a huge log never sits in memory."""
    for line_no, raw in enumerate(lines, start=1):
        event = _xid_from_line(raw.rstrip("\r\n"), line_no)
        if event is not None:
            yield event


def parse_kernel_log(text: str) -> KernelLog:
    """Collect Xids, fallen-off-bus lines, NVRM errors, driver load and PCI→UUID map."""
    lines = text.splitlines()
    # Each search runs line by line only where the whole text holds the literal every
    # line it can match must hold (a healthy node's log holds almost none).
    xids = tuple(iter_xid_events(lines)) if _BARE_XID_LITERAL in text else ()
    xid_lines = {event.line_no for event in xids} if xids else frozenset()
    fallen: list[tuple[int, str]] = []
    errors: list[tuple[int, str]] = []
    for line_no, line in enumerate(lines if _may_hold_errors(text) else (), start=1):
        if line_no in xid_lines:
            continue
        if _FALLEN in line and "NVRM" in line:
            fallen.append((line_no, line))
        elif _is_nvrm_error(line):
            errors.append((line_no, line))
    return KernelLog(
        xids=xids,
        fallen_off_bus=tuple(fallen),
        nvrm_errors=tuple(errors),
        driver_loaded=_last_driver_load(lines) if _LOADED_LITERAL in text else None,
        pci_to_uuid=_pci_to_uuid(lines) if _GPU_AT_LITERAL in text else {},
    )


def _may_hold_errors(text: str) -> bool:
    """Whether some line of ``text`` may be a fallen-off-the-bus line or an NVRM error."""
    nvrm = "NVRM" in text
    holds = text.__contains__  # (``any`` of ``map``: no generator for each node's log)
    return (nvrm and (_FALLEN in text or any(map(holds, _NVRM_ERROR_MARKERS)))) \
        or any(map(holds, _MODULE_LOAD_MARKERS))


def _xid_from_line(line: str, line_no: int) -> XidEvent | None:
    """An XidEvent when ``line`` holds an Xid report."""
    match = _XID.search(line) if _XID_LITERAL in line else None
    if match is None and _BARE_XID_LITERAL in line:
        match = _BARE_XID.search(line)
    if match is None:
        return None
    pid = (match.group("pid") or "").strip()
    name = (match.group("name") or "").strip()
    return XidEvent(
        pci=match.groupdict().get("pci") or "",
        xid=int(match.group("xid")),
        pid=None if pid in _UNKNOWN else pid.strip("'"),
        process=None if name in _UNKNOWN else name,
        message=(match.group("msg") or "").strip(),
        line_no=line_no,
        line=line,
    )


def _is_nvrm_error(line: str) -> bool:
    """NVRM lines worth showing, plus module signature refusals (Secure Boot)."""
    if "NVRM" in line and any(marker in line for marker in _NVRM_ERROR_MARKERS):
        return True
    return any(marker in line for marker in _MODULE_LOAD_MARKERS)


def _last_driver_load(lines: Iterable[str]) -> str | None:
    """Version from the last "NVRM: loading NVIDIA UNIX ..." line (a reload wins)."""
    version = None
    for line in lines:
        match = _LOADED.search(line)
        if match:
            version = match.group("version")
    return version


def _pci_to_uuid(lines: Iterable[str]) -> dict[str, str]:
    """PCI address (as the driver prints it) to GPU UUID."""
    mapping: dict[str, str] = {}
    for line in lines:
        match = _GPU_AT.search(line)
        if match:
            mapping[match.group("pci")] = match.group("uuid")
    return mapping
