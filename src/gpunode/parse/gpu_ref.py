"""Which GPU a line of evidence is about: its PCI bus id, in the form ``nvidia-smi -i``
and ``lspci -s`` both accept (``0000:2a:00.0``).

The kernel names the GPU in each Xid line (``NVRM: Xid (PCI:0000:2a:00): 79, …``);
``nvidia-smi -q -x`` names it in the ``<gpu id="00000000:2A:00.0">`` element that
encloses the matched line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from gpunode.relazy import lazy_compile

_XID_PCI = lazy_compile(r"\(PCI:(?P<id>[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?)\)")
_XML_GPU = lazy_compile(r'<gpu id="(?P<id>[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])"')


def short_bus_id(bus_id: str) -> str:
    """``0000:07:00.0`` as ``07:00.0``, lowercase: the kernel's PCI messages leave the domain out."""
    bus_id = bus_id.lower()
    return bus_id.split(":", 1)[1] if bus_id.count(":") == 2 else bus_id


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


def gpu_values(gpu: str | None, indices: Mapping[str, int] | None = None) -> dict[str, str]:
    """Template values for next steps (``{gpu-index}``, ``{bus-id}``); none when unknown.

    ``gpu`` is a bus id (or DCGM's ``gpu`` label, an index already); ``indices`` maps bus ids
    to the index ``nvidia-smi -i`` takes, where the node's GPU list is known. Without it the
    bus id stands in for the index: ``nvidia-smi -i`` accepts either.
    """
    if gpu is None:
        return {}
    if gpu.isdigit():
        return {"gpu-index": gpu}
    index = (indices or {}).get(gpu)
    return {"gpu-index": gpu if index is None else str(index), "bus-id": gpu}


def bus_id_indices(bus_ids: Iterable[str | None]) -> dict[str, int]:
    """Bus id -> index for GPUs listed in index order (nvidia-smi -q -x lists them so)."""
    out: dict[str, int] = {}
    for index, bus_id in enumerate(bus_ids):
        normal = normal_bus_id(bus_id) if bus_id else None
        if normal is not None:
            out.setdefault(normal, index)
    return out
