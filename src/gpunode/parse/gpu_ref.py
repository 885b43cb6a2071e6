"""Which GPU a line of evidence is about: its PCI bus id, in the form ``nvidia-smi -i``
and ``lspci -s`` both accept (``0000:2a:00.0``).

The kernel names the GPU in each Xid line (``NVRM: Xid (PCI:0000:2a:00): 79, …``);
``nvidia-smi -q -x`` names it in the ``<gpu id="00000000:2A:00.0">`` element that
encloses the matched line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_XID_PCI = re.compile(r"\(PCI:(?P<id>[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?)\)")
_XML_GPU = re.compile(r'<gpu id="(?P<id>[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])"')


def normal_bus_id(bus_id: str) -> str | None:
    """``00000000:2A:00.0`` and ``0000:2a:00`` both become ``0000:2a:00.0``; None if malformed."""
    if bus_id.count(":") != 2:
        return None
    domain, bus, rest = bus_id.lower().split(":", 2)
    device, _, function = rest.partition(".")
    return f"{domain[-4:]:0>4}:{bus}:{device}.{function or '0'}"


def bus_id_in_line(line: str) -> str | None:
    """The GPU a kernel Xid line names, or None."""
    found = _XID_PCI.search(line)
    return normal_bus_id(found["id"]) if found else None


def bus_id_above(lines: Sequence[str], line_no: int) -> str | None:
    """The GPU whose ``nvidia-smi -q -x`` element holds line ``line_no`` (1-based), or None."""
    for line in reversed(lines[:line_no]):
        found = _XML_GPU.search(line) or _XID_PCI.search(line)
        if found:
            return normal_bus_id(found["id"])
    return None


def gpu_values(bus_id: str | None) -> dict[str, str]:
    """Template values for next steps (``{gpu-index}``, ``{bus-id}``); none when unknown."""
    return {} if bus_id is None else {"gpu-index": bus_id, "bus-id": bus_id}
