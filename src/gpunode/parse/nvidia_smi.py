"""``nvidia-smi -q -x`` (XML) and plain ``nvidia-smi`` output.

The XML schema drifts between driver branches (power, temperature thresholds, ECC
counters and clock-event reasons all moved or were renamed), so every field is looked
up under each spelling we know and is ``None`` when the driver printed ``N/A``.

Fields are read through ``_Node`` from one of two readers with the same answers: the
string reader of ``_nvidia_smi_fast`` for output in nvidia-smi's own shape (nearly
all), ElementTree (the reference, and the one that reports errors) for the rest.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable
from functools import lru_cache, partial
from itertools import chain, repeat
from typing import Protocol, TypeVar

import msgspec

from gpunode.errors import ParseError
from gpunode.parse import _nvidia_smi_fast as fast
from gpunode.parse import _nvidia_smi_known as known_lines
from gpunode.parse._text import is_missing, leading_float, leading_int, yes_no
from gpunode.relazy import lazy_compile

Element = ET.Element


class GpuInfo(msgspec.Struct, frozen=True):
    """One GPU as nvidia-smi saw it; ``None`` means N/A or not printed by this driver."""

    pci_bus_id: str
    product_name: str
    uuid: str
    minor_number: int | None
    memory_total_mib: int | None
    temperature_c: int | None
    slowdown_temp_c: int | None
    shutdown_temp_c: int | None
    power_draw_w: float | None
    power_limit_w: float | None
    ecc_mode_current: str | None
    ecc_volatile_dbe: int | None
    ecc_aggregate_dbe: int | None
    remapped_rows_uncorrectable: int | None
    remapped_rows_pending: bool | None
    remapped_rows_failure: bool | None
    retired_pages_pending: bool | None
    mig_mode_current: str | None
    mig_mode_pending: str | None
    fabric_state: str | None
    fabric_status: str | None
    pcie_gen_current: int | None
    pcie_gen_max: int | None
    pcie_width_current: int | None
    pcie_width_max: int | None
    clock_event_reasons_active: tuple[str, ...]
    persistence_mode: str | None
    recovery_action: str | None
    ecc_mode_pending: str | None = None
    architecture: str | None = None
    vbios_version: str | None = None
    serial: str | None = None
    virtualization_mode: str | None = None
    temperature_margin_c: int | None = None
    utilization_gpu_pct: int | None = None
    performance_state: str | None = None
    pcie_gen_device_max: int | None = None
    pcie_gen_host_max: int | None = None
    # NVLink domain of NVL systems (``<fabric>``, drivers 550+); N/A elsewhere
    fabric_clique_id: str | None = None
    fabric_cluster_uuid: str | None = None
    fabric_health_summary: str | None = None
    # the PCI device and vendor id as nvidia-smi prints them ("233010DE": device 2330 of 10de)
    pci_device_id: str | None = None


class NvidiaSmiReport(msgspec.Struct, frozen=True):
    """The whole ``nvidia-smi -q -x`` answer."""

    driver_version: str | None
    cuda_version: str | None
    attached_gpus: int
    gpus: tuple[GpuInfo, ...]


def parse_nvidia_smi_xml(text: str) -> NvidiaSmiReport:
    """Decode ``nvidia-smi -q -x`` output into a report.

    Output in nvidia-smi's own shape is read by string search (``_nvidia_smi_fast``);
    anything else, and every error, goes through ElementTree, the reference."""
    report = _parse_fast(text)
    return report if report is not None else _parse_tree(text)


def _parse_fast(text: str) -> NvidiaSmiReport | None:
    """The report read without building a tree, or None when the tree parser must
    decide (unusual shape, or an error to be raised with its own message).

    A document with the lines of one read before but for leaf texts (a pool's nodes)
    is read by that one's line numbers (``_nvidia_smi_known``), each GPU made from the
    other's with the fields read again whose lines differ; any other by the string
    reader, and kept for the next."""
    kept, declares = _cut_unread(text)
    if declares:
        return None
    reading = known_lines.read(kept)
    if reading is not None:
        gpus_known = partial(_known_gpus, reading)
        report = _report(reading.values, gpus_known)
        if report is not None:
            return report
    read = fast.read(kept)
    if read is None:
        return None
    values, gpus = read
    report = _report(values, lambda: tuple(_gpu(bus_id, gpu) for bus_id, gpu in gpus))
    if report is not None:
        known_lines.remember(kept)
    return report


def _report(values: dict[str, str | None], gpus: Callable[[], tuple[GpuInfo, ...]]) -> NvidiaSmiReport | None:
    """The report of a reader's root values and GPUs; None when the tree parser must
    decide."""
    attached = leading_int(_stripped(values.get("attached_gpus")))
    if attached is None:
        return None
    try:
        infos = gpus()
    except fast.NotCanonical:
        return None
    return NvidiaSmiReport(
        driver_version=_stripped(values.get("driver_version")),
        cuda_version=_stripped(values.get("cuda_version")),
        attached_gpus=attached,
        gpus=infos,
    )


class _Made:
    """A kept document's GPU as read, and the groups of ``_GPU_READS`` that read each line."""

    __slots__ = ("by_line", "info")

    def __init__(self, info: GpuInfo, by_line: dict[int, list[int]]) -> None:
        self.info, self.by_line = info, by_line


_UNMADE = object()  # a kept document's GPU that _made could not read (the other readers do)


def _known_gpus(reading: known_lines.Reading) -> tuple[GpuInfo, ...]:
    return tuple(map(_known_gpu, repeat(reading, len(reading.gpus)), range(len(reading.gpus))))


def _known_gpu(reading: known_lines.Reading, at: int) -> GpuInfo:
    """GPU ``at`` of a document read by a kept one's line numbers: the kept one's GPU, with
    the groups of fields read again whose lines differ (each group's reads depend only on
    the texts of the lines it read: where those are the same, so are its answers)."""
    bus_id, gpu = reading.gpus[at]
    made = reading.made[at]
    if made is None:
        made = reading.made[at] = _made(bus_id, reading, at)
    if not isinstance(made, _Made):
        return _gpu(bus_id, gpu)
    by_line = made.by_line
    lines = filter(by_line.__contains__, reading.changed)  # (in C: no comprehension a node)
    redo = set(chain.from_iterable(map(by_line.__getitem__, lines)))
    if not redo:
        return made.info
    updates: dict[str, object] = {}
    for group in redo:
        names, read = _GPU_READS[group]
        updates.update(zip(names, read(gpu), strict=True))
    return msgspec.structs.replace(made.info, **updates)


def _made(bus_id: str, reading: known_lines.Reading, at: int) -> _Made | object:
    """The kept document's GPU ``at`` read group by group, noting the lines each read."""
    seen: set[int] = set()
    gpu = reading.noting(at, seen)
    values: dict[str, object] = {}
    by_line: dict[int, list[int]] = {}
    try:
        for group, (names, read) in enumerate(_GPU_READS):
            seen.clear()
            values.update(zip(names, read(gpu), strict=True))
            for line in seen:
                by_line.setdefault(line, []).append(group)
    except fast.NotCanonical:
        return _UNMADE
    return _Made(GpuInfo(pci_bus_id=bus_id, **values), by_line)  # type: ignore[arg-type]


def _parse_tree(text: str) -> NvidiaSmiReport:
    """The report from ElementTree's tree of the document."""
    root = _parse_root(text)
    gpus = tuple(_gpu(_bus_id(elem), _Tree(elem)) for elem in root.findall("gpu"))
    attached = leading_int(_value(_Tree(root), "attached_gpus"))
    if attached is None:
        raise ParseError("nvidia-smi XML has no attached_gpus count")
    return NvidiaSmiReport(
        driver_version=_value(_Tree(root), "driver_version"),
        cuda_version=_value(_Tree(root), "cuda_version"),
        attached_gpus=attached,
        gpus=gpus,
    )


def _stripped(text: str | None) -> str | None:
    return None if is_missing(text) else (text or "").strip()


_FAILURE_PATTERNS = (
    lazy_compile(r"Failed to initialize NVML: .*"),
    lazy_compile(r"NVIDIA-SMI has failed because .*"),
    lazy_compile(r"No devices were found"),
    lazy_compile(r"Unable to determine the device handle for .*"),
    lazy_compile(r"Unable to load the NVIDIA driver .*"),
)


#: The literal each failure pattern starts with (what follows may be empty), so a pattern
#: matches somewhere in a text exactly where its literal is in it: a healthy table (nearly
#: every node) is answered by five substring searches (about 1 us, where one search of the
#: patterns joined took 10 us) instead of each pattern on each of its lines.
_FAILURE_LITERALS = ("Failed to initialize NVML: ", "NVIDIA-SMI has failed because ", "No devices were found",
                     "Unable to determine the device handle for ", "Unable to load the NVIDIA driver ")


def parse_nvidia_smi_failure(text: str) -> str | None:
    """The error line when plain ``nvidia-smi`` output is a failure, else None."""
    if not any(map(text.__contains__, _FAILURE_LITERALS)):  # no line can match either
        return None
    for line in text.splitlines():
        for pattern in _FAILURE_PATTERNS:
            match = pattern.search(line)
            if match:
                return match.group(0).strip()
    return None


#: More than half of a GPU's XML is its table of supported clocks, which no check reads.
_UNREAD_OPEN, _UNREAD_CLOSE = "<supported_clocks>", "</supported_clocks>"


def _without_unread(text: str) -> str:
    """``text`` without its ``<supported_clocks>…</supported_clocks>`` sections (each cut
    up to the first closing tag after it), found by plain substring search."""
    return _cut_unread(text)[0]


def _cut_unread(text: str) -> tuple[str, bool]:
    """``_without_unread(text)``, and whether a part cut out holds ``<!ENTITY``."""
    kept: list[str] = []
    declares = False
    start = 0
    while (begin := text.find(_UNREAD_OPEN, start)) >= 0:
        end = text.find(_UNREAD_CLOSE, begin + len(_UNREAD_OPEN))
        if end < 0:
            break
        # ("!" first: a character a table of clocks lacks, found faster than the word)
        declares = declares or (text.find("!", begin, end) >= 0 and text.find("<!ENTITY", begin, end) >= 0)
        kept.append(text[start:begin])
        start = end + len(_UNREAD_CLOSE)
    kept.append(text[start:])
    return "".join(kept), declares


def _parse_root(text: str) -> Element:
    """Parse with expat; entity declarations are refused so no expansion can happen.

    Sections nothing reads are cut out first (a text search is far cheaper than
    building their elements)."""
    if "<!ENTITY" in text:
        raise ParseError("nvidia-smi XML declares entities; refusing to parse")
    text = _without_unread(text)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise ParseError(f"nvidia-smi XML is malformed: {exc}") from None
    if root.tag != "nvidia_smi_log":
        raise ParseError(f"not nvidia-smi XML (root element <{root.tag}>)")
    return root


class _Node(Protocol):
    """What the field readers need from an element, served by ElementTree (``_Tree``)
    or by the string reader (``fast.Element``) with the same answers."""

    def value(self, path: str) -> str | None:
        """``.text`` of ``find(path)``; None when absent or without text."""

    def sub(self, path: str) -> _Node | None:
        """``find(path)``, to look into."""

    def children(self, tag: str) -> list[tuple[str, str | None]] | None:
        """(tag, text) of every child of ``find(tag)``; None when there is none."""

    def leaves(self) -> dict[str, str | None]:
        """``.text`` of each child by tag, the first of each name (``value(tag)`` of each)."""


class _Tree:
    """An ElementTree element as a ``_Node``."""

    __slots__ = ("_elem",)

    def __init__(self, elem: Element) -> None:
        self._elem = elem

    def value(self, path: str) -> str | None:
        found = _find(self._elem, path)
        return None if found is None else found.text

    def sub(self, path: str) -> _Tree | None:
        found = _find(self._elem, path)
        return None if found is None else _Tree(found)

    def children(self, tag: str) -> list[tuple[str, str | None]] | None:
        found = self._elem.find(tag)
        return None if found is None else [(child.tag, child.text) for child in found]

    def leaves(self) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        for child in self._elem:
            out.setdefault(child.tag, child.text)
        return out


def _value(node: _Node, *paths: str) -> str | None:
    """First non-N/A text among ``paths`` (ElementTree paths), stripped."""
    for path in paths:
        text = node.value(path)
        if text is not None:
            # (the memo asked here, not through _memo_short: fifty reads a GPU, a call less each)
            cleaned = _cleaned(text) if len(text) <= _MEMO_LEN else _clean(text)
            if cleaned:
                return cleaned
    return None


def _one(node: _Node, path: str) -> str | None:
    """``_value(node, path)`` for one path (most reads: a call and a loop less each)."""
    text = node.value(path)
    if text is None:
        return None
    return (_cleaned(text) if len(text) <= _MEMO_LEN else _clean(text)) or None


def _int_at(node: _Node, path: str) -> int | None:
    """``_int(_one(node, path))``: a short text's number memoised from the text as read
    (``_read_int``), one lookup where cleaning it and reading its number took two and a call."""
    return _int_of(node.value(path))


def _int_of(text: str | None) -> int | None:
    """``_int_at``'s number of a text as read (None: absent)."""
    if text is None:
        return None
    return _read_int(text) if len(text) <= _MEMO_LEN else leading_int(_clean(text) or None)


def _yes_no_at(node: _Node, path: str) -> bool | None:
    """``_yes_no(_one(node, path))``, as ``_int_at``."""
    text = node.value(path)
    if text is None:
        return None
    return _read_yes_no(text) if len(text) <= _MEMO_LEN else yes_no(_clean(text) or None)


def _clean(text: str) -> str:
    """``text`` stripped, or "" when it says N/A. A GPU's values repeat across a fleet
    ("0", "Enabled", "N/A"), so short ones are memoised (``_cleaned``, as the number
    readers below); a long text (hostile input) is not kept."""
    return "" if is_missing(text) else text.strip()


_MEMO_LEN = 64
A = TypeVar("A", str, "str | None")
R = TypeVar("R")


def _memo_short(read: Callable[[A], R], maxsize: int) -> Callable[[A], R]:
    """``read``, memoised for values of up to _MEMO_LEN characters (None included)."""
    memoised = lru_cache(maxsize=maxsize)(read)

    def call(value: A) -> R:
        return memoised(value) if value is None or len(value) <= _MEMO_LEN else read(value)

    return call


_int = _memo_short(leading_int, 4096)
_float = _memo_short(leading_float, 4096)
_yes_no = _memo_short(yes_no, 256)
_cleaned = lru_cache(maxsize=4096)(_clean)  # asked in _value for texts of up to _MEMO_LEN


@lru_cache(maxsize=4096)  # asked in _int_at for texts of up to _MEMO_LEN
def _read_int(text: str) -> int | None:
    return leading_int(_clean(text) or None)


@lru_cache(maxsize=256)  # asked in _yes_no_at for texts of up to _MEMO_LEN
def _read_yes_no(text: str) -> bool | None:
    return yes_no(_clean(text) or None)


def _find(elem: Element, path: str) -> Element | None:
    """``elem.find(path)`` for a plain child path (``a/b/c``), one tag at a time: each
    step is the C child scan rather than ElementPath's Python iterators (forty lookups
    per GPU). Every ``a`` is tried in document order, so the answer is ``find``'s."""
    return _descend(elem, fast.path_steps(path), 0)


def _descend(elem: Element, steps: tuple[str, ...], index: int) -> Element | None:
    if index == len(steps) - 1:
        return elem.find(steps[index])
    for child in elem.findall(steps[index]):
        found = _descend(child, steps, index + 1)
        if found is not None:
            return found
    return None


def _bus_id(elem: Element) -> str:
    bus_id = elem.get("id")
    if not bus_id:
        raise ParseError("nvidia-smi XML has a <gpu> without an id attribute")
    return bus_id


def _gpu(bus_id: str, elem: _Node) -> GpuInfo:
    """One ``<gpu id=...>`` element."""
    values: dict[str, object] = {}
    for names, read in _GPU_READS:
        values.update(zip(names, read(elem), strict=True))
    return GpuInfo(pci_bus_id=bus_id, **values)  # type: ignore[arg-type]  # (the names are GpuInfo's)


def _temperatures(elem: _Node) -> tuple[int | None, int | None, int | None, int | None]:
    """The GPU's temperature, slowdown and shutdown thresholds and margin to T.Limit
    (``gpu_temp`` and ``gpu_temp_tlimit`` read once for their own fields and the thresholds)."""
    current = _int_at(elem, "temperature/gpu_temp")
    margin = _int_at(elem, "temperature/gpu_temp_tlimit")
    return (current, *_temperature_thresholds(elem, current, margin), margin)


def _text(path: str) -> Callable[[_Node], tuple[str | None]]:
    return lambda elem: (_one(elem, path),)


def _number(path: str) -> Callable[[_Node], tuple[int | None]]:
    return lambda elem: (_int_at(elem, path),)


def _yes(path: str) -> Callable[[_Node], tuple[bool | None]]:
    return lambda elem: (_yes_no_at(elem, path),)


#: GpuInfo's fields (but the bus id), in groups each read by one function of the GPU's
#: element: one group for what its fields share (the temperatures), one for each other.
#: (A table rather than one call with every field: a GPU read by line numbers reads
#: again only the groups whose lines differ from the document it was read by.)
_GPU_READS: tuple[tuple[tuple[str, ...], Callable[[_Node], tuple[object, ...]]], ...] = (
    (("product_name",), lambda elem: (_one(elem, "product_name") or "",)),
    (("uuid",), lambda elem: (_one(elem, "uuid") or "",)),
    (("minor_number",), _number("minor_number")),
    (("memory_total_mib",), _number("fb_memory_usage/total")),
    (("temperature_c", "slowdown_temp_c", "shutdown_temp_c", "temperature_margin_c"), _temperatures),
    (("power_draw_w",), lambda elem: (_power_draw(elem),)),
    (("power_limit_w",), lambda elem: (_power_limit(elem),)),
    (("ecc_mode_current",), _text("ecc_mode/current_ecc")),
    (("ecc_volatile_dbe",), lambda elem: (_uncorrectable(elem, "volatile"),)),
    (("ecc_aggregate_dbe",), lambda elem: (_uncorrectable(elem, "aggregate"),)),
    (("remapped_rows_uncorrectable",), _number("remapped_rows/remapped_row_unc")),
    (("remapped_rows_pending",), _yes("remapped_rows/remapped_row_pending")),
    (("remapped_rows_failure",), _yes("remapped_rows/remapped_row_failure")),
    (("retired_pages_pending",), lambda elem: (_retired_pending(elem),)),
    (("mig_mode_current",), _text("mig_mode/current_mig")),
    (("mig_mode_pending",), _text("mig_mode/pending_mig")),
    (("fabric_state",), _text("fabric/state")),
    (("fabric_status",), _text("fabric/status")),
    (("pcie_gen_current",), _number("pci/pci_gpu_link_info/pcie_gen/current_link_gen")),
    (("pcie_gen_max",), _number("pci/pci_gpu_link_info/pcie_gen/max_link_gen")),
    (("pcie_width_current",), _number("pci/pci_gpu_link_info/link_widths/current_link_width")),
    (("pcie_width_max",), _number("pci/pci_gpu_link_info/link_widths/max_link_width")),
    (("clock_event_reasons_active",), lambda elem: (_active_clock_reasons(elem),)),
    (("persistence_mode",), _text("persistence_mode")),
    (("recovery_action",), _text("gpu_recovery_action")),
    (("ecc_mode_pending",), _text("ecc_mode/pending_ecc")),
    (("architecture",), _text("product_architecture")),
    (("vbios_version",), _text("vbios_version")),
    (("serial",), _text("serial")),
    (("virtualization_mode",), _text("gpu_virtualization_mode/virtualization_mode")),
    (("utilization_gpu_pct",), _number("utilization/gpu_util")),
    (("performance_state",), _text("performance_state")),
    (("pcie_gen_device_max",), _number("pci/pci_gpu_link_info/pcie_gen/max_device_link_gen")),
    (("pcie_gen_host_max",), _number("pci/pci_gpu_link_info/pcie_gen/max_host_link_gen")),
    (("fabric_clique_id",), _text("fabric/cliqueId")),
    (("fabric_cluster_uuid",), _text("fabric/clusterUuid")),
    (("fabric_health_summary",), _text("fabric/health/summary")),
    (("pci_device_id",), _text("pci/pci_device_id")),
)


_POWER_TABLES = ("gpu_power_readings", "power_readings")
_POWER_DRAW = tuple(
    f"{t}/{n}" for t in _POWER_TABLES for n in ("instant_power_draw", "power_draw", "average_power_draw")
)
_POWER_LIMIT = tuple(
    f"{t}/{n}" for t in _POWER_TABLES for n in ("current_power_limit", "enforced_power_limit", "power_limit")
)


def _power_draw(elem: _Node) -> float | None:
    """Instant draw where the driver splits average/instant, else the single reading."""
    return _float(_value(elem, *_POWER_DRAW))


def _power_limit(elem: _Node) -> float | None:
    """The enforced limit; older drivers call it ``power_limit``/``enforced_power_limit``."""
    return _float(_value(elem, *_POWER_LIMIT))


def _temperature_thresholds(elem: _Node, current: int | None,
                            margin: int | None) -> tuple[int | None, int | None]:
    """Absolute slowdown/shutdown temperatures (``current``, ``margin``: the GPU's
    ``gpu_temp`` and ``gpu_temp_tlimit``, read once for their own fields too).

    Older drivers print them directly. Drivers that report "T.Limit" print only the
    margin to T.Limit and each threshold relative to it, so the absolute value is
    current + margin - relative threshold (this matches NVML's thresholds on the
    recorded H200: 39 + 48 + 2 = 89 and 39 + 48 + 8 = 95).
    """
    slow = _int_at(elem, "temperature/gpu_temp_slow_threshold")
    shut = _int_at(elem, "temperature/gpu_temp_max_threshold")
    if slow is not None or shut is not None:
        return slow, shut
    if current is None or margin is None:
        return None, None
    limit = current + margin
    rel_slow = _int_at(elem, "temperature/gpu_temp_slow_tlimit_threshold")
    rel_shut = _int_at(elem, "temperature/gpu_temp_max_tlimit_threshold")
    return (
        None if rel_slow is None else limit - rel_slow,
        None if rel_shut is None else limit - rel_shut,
    )


_UNCORRECTABLE_LEAVES = (
    "sram_uncorrectable",
    "sram_uncorrectable_parity",
    "sram_uncorrectable_secded",
    "dram_uncorrectable",
)


def _uncorrectable(elem: _Node, counter: str) -> int | None:
    """Uncorrectable ECC count: SRAM + DRAM on current drivers, double_bit/total on old."""
    table = elem.sub(f"ecc_errors/{counter}")
    if table is None:
        return None
    leaves = table.leaves()  # (the table's children read at once, not four searches)
    values = [_int_of(leaves.get(leaf)) for leaf in _UNCORRECTABLE_LEAVES]
    present = [v for v in values if v is not None]
    if present:
        return sum(present)
    return _int_at(table, "double_bit/total")


def _retired_pending(elem: _Node) -> bool | None:
    """Page retirement pending; ``pending_blacklist`` is the pre-R450 name."""
    return _yes_no(
        _value(elem, "retired_pages/pending_retirement", "retired_pages/pending_blacklist")
    )


_REASON_TABLES = (
    ("clocks_event_reasons", "clocks_event_reason_"),
    ("clocks_throttle_reasons", "clocks_throttle_reason_"),
)


def _active_clock_reasons(elem: _Node) -> tuple[str, ...]:
    """Names (prefix stripped, e.g. ``hw_thermal_slowdown``) of reasons marked Active."""
    for table_name, prefix in _REASON_TABLES:
        table = elem.children(table_name)
        if table is not None:
            return tuple(
                tag.removeprefix(prefix)
                for tag, text in table
                if (text or "").strip() == "Active"
            )
    return ()
