"""The Xid catalog: what an NVIDIA driver Xid code means and what to do about it.

Xid codes are the driver's error numbers (kernel log ``NVRM: Xid``, device-plugin
``XidCriticalError``, DCGM's Xid metric). Most are hardware or driver faults that
need a GPU reset or a reboot; a few are plain application bugs the device plugin
deliberately ignores. The catalog is data (``data/xid.toml``) so a new code is one
entry; this module loads it, validates it and classifies sightings.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Literal, get_args

import msgspec

from gpunode.datatoml import load_data_toml
from gpunode.errors import BundleError
from gpunode.relazy import lazy_compile

XidClass = Literal["application", "driver", "memory", "nvlink", "bus", "thermal_power", "gsp"]
XidAction = Literal["none", "restart_workload", "reset_gpu", "reboot_node", "drain_and_repair"]

XID_CLASSES: tuple[str, ...] = get_args(XidClass)
XID_ACTIONS: tuple[str, ...] = get_args(XidAction)


class XidInfo(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One catalog entry; ``known`` is False for codes the catalog does not list."""

    code: int
    mnemonic: str
    meaning: str
    cause_class: XidClass = msgspec.field(name="class")
    action: XidAction
    catalog: str
    device_plugin_ignores: bool = False
    cause: str | None = None
    known: bool = True

    @property
    def is_root_cause(self) -> bool:
        """Whether a sighting is a fault of its own, not just evidence of an app bug."""
        return self.cause is not None and self.cause_class != "application" and self.action != "none"


class _XidFile(msgspec.Struct, forbid_unknown_fields=True):
    xid: list[XidInfo]


@dataclass(frozen=True)
class XidCatalog:
    """All catalogued codes, by number."""

    entries: Mapping[int, XidInfo]

    def classify(self, xid: int, message: str = "") -> XidInfo:
        """The entry for ``xid``; Xid 154 takes its action from the recovery text."""
        info = self.entries.get(xid)
        if info is None:
            return _unknown(xid)
        if xid == RECOVERY_ACTION_XID and message:
            return _with_recovery_action(info, message)
        return info


RECOVERY_ACTION_XID = 154

# Xid 154's message names the required recovery: "... from 0x0 (None) to 0x1 (GPU Reset
# Required)". The values are NVML's nvmlDeviceGpuRecoveryAction_t: 0 none, 1 GPU reset,
# 2 node reboot, 3 drain P2P, 4 drain P2P and reset, 5 recover the IMEX domain, 6 reset
# the GPU's PCIe bus, 7 reboot the system (NVIDIA's cuda-python bindings,
# cuda.bindings.nvml.DeviceGpuRecoveryAction; what each asks: docs.nvidia.com/deploy/
# a100-gpu-mem-error-mgmt, "Error Recovery and Response Flags"). A value past these keeps
# the entry's own action.
_RECOVERY = lazy_compile(r"\bto (0x[0-9a-fA-F]+)\b")
_RECOVERY_ACTIONS: dict[int, XidAction] = {
    0: "none",
    1: "reset_gpu",
    2: "reboot_node",
    3: "restart_workload",
    4: "reset_gpu",
    5: "reset_gpu",
    6: "reset_gpu",
    7: "reboot_node",
}


def _with_recovery_action(info: XidInfo, message: str) -> XidInfo:
    found = _RECOVERY.search(message)
    if found is None:
        return info
    action = _RECOVERY_ACTIONS.get(int(found.group(1), 16), info.action)
    return msgspec.structs.replace(info, action=action)


def _unknown(xid: int) -> XidInfo:
    """Codes missing from the catalog are reported, never made a root cause."""
    return XidInfo(
        code=xid,
        mnemonic="UNKNOWN",
        meaning="not in gpunode's Xid catalog; look it up in NVIDIA's Xid catalog",
        cause_class="driver",
        action="none",
        catalog="UNKNOWN",
        known=False,
    )


def validate_xids(entries: Sequence[XidInfo], known_causes: set[str], origin: str) -> None:
    """Unique codes, and causes that exist in the knowledge base."""
    seen: set[int] = set()
    for entry in entries:
        if entry.code in seen:
            raise ValueError(f"{origin}: Xid {entry.code} is listed twice")
        seen.add(entry.code)
        if entry.cause is not None and entry.cause not in known_causes:
            raise ValueError(f"{origin}: Xid {entry.code} names unknown cause {entry.cause!r}")


def parse_xid_catalog(text: str, known_causes: set[str], origin: str = "xid.toml") -> XidCatalog:
    """Decode and validate catalog text; classes and actions are checked by the schema."""
    try:
        parsed = msgspec.convert(load_data_toml(text), _XidFile)
        validate_xids(parsed.xid, known_causes, origin)
    except (tomllib.TOMLDecodeError, msgspec.ValidationError, ValueError) as exc:
        raise BundleError(f"{origin}: invalid Xid catalog: {exc}") from exc
    return XidCatalog({entry.code: entry for entry in parsed.xid})


@cache
def load_xid_catalog() -> XidCatalog:
    """The catalog shipped with the package (read once per process)."""
    from gpunode.kb import load_kb

    text = resources.files("gpunode").joinpath("data/xid.toml").read_text("utf-8")
    return parse_xid_catalog(text, set(load_kb().by_code))


def classify(xid: int, message: str = "") -> XidInfo:
    """Classify one Xid sighting with the shipped catalog."""
    return load_xid_catalog().classify(xid, message)


# Where Xids show up as text: the kernel log, the device plugin, DCGM's metric labels.
XID_LINE_PATTERNS: tuple[re.Pattern[str], ...] = (
    lazy_compile(r"NVRM: Xid \(PCI:[0-9a-fA-F:.]+\): (\d+)(.*)"),
    lazy_compile(r"XidCriticalError: Xid=(\d+)(.*)"),
    lazy_compile(r'err_code="(\d+)"(.*)'),
)


def xids_in_line(line: str) -> list[tuple[int, str]]:
    """Xid codes a line reports, each with the text after it (Xid 154 needs it)."""
    found: list[tuple[int, str]] = []
    for pattern in XID_LINE_PATTERNS:
        match = pattern.search(line)
        if match is not None:
            found.append((int(match.group(1)), match.group(2)))
    return found


# The NVSwitch's own error numbers (SXids), keyed like the Xid catalog: data/sxid.toml.
SXidClass = Literal["non_fatal", "fatal", "always_fatal", "notable"]
#: Classes whose report stops NVLink traffic through the switch until a restart.
SXID_FATAL: frozenset[str] = frozenset({"fatal", "always_fatal"})


class SXidInfo(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One SXid catalog entry."""

    code: int
    name: str
    sxid_class: SXidClass = msgspec.field(name="class")
    recovery: str


class _SXidFile(msgspec.Struct, forbid_unknown_fields=True):
    sxid: list[SXidInfo]


def parse_sxid_catalog(text: str, origin: str = "sxid.toml") -> Mapping[int, SXidInfo]:
    """Decode and validate SXid catalog text: classes by the schema, each number once."""
    try:
        parsed = msgspec.convert(load_data_toml(text), _SXidFile)
    except (tomllib.TOMLDecodeError, msgspec.ValidationError) as exc:
        raise BundleError(f"{origin}: invalid SXid catalog: {exc}") from exc
    out: dict[int, SXidInfo] = {}
    for entry in parsed.sxid:
        if entry.code in out:
            raise BundleError(f"{origin}: invalid SXid catalog: SXid {entry.code} is listed twice")
        out[entry.code] = entry
    return out


@cache
def load_sxid_catalog() -> Mapping[int, SXidInfo]:
    """The SXid catalog shipped with the package (read once per process)."""
    text = resources.files("gpunode").joinpath("data/sxid.toml").read_text("utf-8")
    return parse_sxid_catalog(text)


#: An NVSwitch error report as the nvswitch driver prints it: the switch's PCI address, the
#: SXid number, then either its severity word ("Fatal", "Non-fatal") or one of the report's
#: other lines ("Data {...}", "Severity 5 Engine instance ...").
SXID_LINE = lazy_compile(r"\bSXid \(PCI:[0-9a-fA-F:.]+\): (\d+),\s*(.*)")
_SXID_SEVERITY = lazy_compile(r"^(?i:(non-?fatal)|fatal)\b")


def sxid_fatal(line: str) -> SXidInfo | None:
    """The catalog entry of the fatal SXid ``line`` reports, or None: the line's own severity
    word decides where it has one (a "Non-fatal" line never is, a "Fatal" one of a number the
    catalog lacks still is); else the number's class in the catalog (a number it lacks: None)."""
    found = SXID_LINE.search(line) if "SXid" in line else None
    if found is None:
        return None
    code = int(found[1])
    entry = load_sxid_catalog().get(code)
    said = _SXID_SEVERITY.search(found[2])
    if said is not None:
        if said[1] is not None:
            return None
        return entry or SXidInfo(code, "not in the SXid catalog", "fatal",
                                 "see NVIDIA's Fabric Manager user guide")
    return entry if entry is not None and entry.sxid_class in SXID_FATAL else None
