"""``nvidia-smi nvlink -s`` (link state and speed) and ``nvidia-smi nvlink -e`` (error
counters), as printed per GPU::

    GPU 3: Tesla V100-SXM2-32GB (UUID: GPU-...)
             Link 0: 25.781 GB/s
             Link 3: <inactive>

    GPU 0: NVIDIA GB300
             Link 0: Replay Errors: 0
             Link 0: Recovery Errors: 0
             Link 0: CRC Errors: 0

A GPU without NVLink prints nothing (an H100 PCIe answers with empty output and exit 0);
a GPU whose links NVML reports all disabled prints no link line but NVML's own sentence
("NVML: Unable to retrieve NVLink information as all links are inActive"), read as
``all_inactive`` (which a GPU without a bridge or a lone superchip prints too, so only the
node's facts can say whether it is a fault); other lines are skipped.
"""

from __future__ import annotations

import re

import msgspec

from gpunode.relazy import lazy_compile

_GPU = lazy_compile(r"^GPU (\d+): (.+?)(?: \(UUID: (GPU-[0-9a-fA-F-]+)\))?\s*$")
_LINK = lazy_compile(r"^\s+Link (\d+): (.*?)\s*$")
_COUNTER = lazy_compile(r"^(.+?) Errors?: (\d+)$")
# nvidia-smi's counter names -> the probe's (docs/probe.md, nvlinks[].errors)
_COUNTER_NAMES = {
    "replay": "replay",
    "recovery": "recovery",
    "crc": "crc_flit",
    "crc flit": "crc_flit",
    "crc data": "crc_data",
}


class NvlinkLink(msgspec.Struct, frozen=True):
    link: int
    active: bool
    speed_gbps: float | None = None
    errors: dict[str, int] = msgspec.field(default_factory=dict)


class NvlinkGpu(msgspec.Struct, frozen=True):
    index: int
    name: str
    uuid: str | None
    links: tuple[NvlinkLink, ...]
    bus_id: str | None = None
    #: NVML said the GPU's links are all inactive (no link lines follow).
    all_inactive: bool = False


_ALL_INACTIVE = "all links are inactive"


def _blocks(text: str) -> list[tuple[int, str, str | None, list[tuple[int, str]]]]:
    blocks: list[tuple[int, str, str | None, list[tuple[int, str]]]] = []
    for line in text.splitlines():
        gpu = _GPU.match(line)
        if gpu:
            blocks.append((int(gpu.group(1)), gpu.group(2), gpu.group(3), []))
            continue
        link = _LINK.match(line)
        if link and blocks:
            blocks[-1][3].append((int(link.group(1)), link.group(2)))
        elif blocks and _ALL_INACTIVE in line.lower():
            blocks[-1][3].append((-1, _ALL_INACTIVE))
    return blocks


def parse_nvlink_status(text: str) -> list[NvlinkGpu]:
    """Each GPU's links: active with a speed, or ``<inactive>``; ``all_inactive`` where NVML
    said so instead of listing them."""
    out = []
    for index, name, uuid, lines in _blocks(text):
        links = []
        for number, value in lines:
            if number < 0:
                continue
            speed = re.match(r"^(\d+(?:\.\d+)?) GB/s$", value)
            links.append(NvlinkLink(number, speed is not None, float(speed.group(1)) if speed else None))
        dark = not links and any(number < 0 for number, _ in lines)
        out.append(NvlinkGpu(index, name, uuid, tuple(links), all_inactive=dark))
    return out


def parse_nvlink_errors(text: str) -> list[NvlinkGpu]:
    """Each GPU's per-link counters (``Replay``, ``Recovery``, ``CRC`` / ``CRC Flit`` / ``CRC Data``)."""
    out = []
    for index, name, uuid, lines in _blocks(text):
        counts: dict[int, dict[str, int]] = {}
        for number, value in lines:
            found = _COUNTER.match(value)
            key = _COUNTER_NAMES.get(found.group(1).strip().lower()) if found else None
            if found and key:
                counts.setdefault(number, {})[key] = int(found.group(2))
        links = tuple(NvlinkLink(n, True, errors=c) for n, c in sorted(counts.items()))
        out.append(NvlinkGpu(index, name, uuid, links))
    return out
