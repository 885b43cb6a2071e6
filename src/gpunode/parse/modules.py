"""Loaded kernel modules from ``/proc/modules`` or ``lsmod`` output.

Both list ``name size refcount used_by``; /proc/modules adds state, address and
taint flags, writes ``-`` for "none" and ends the used-by list with a comma.
"""

from __future__ import annotations

import msgspec

from gpunode.errors import ParseError


class KernelModule(msgspec.Struct, frozen=True):
    """One loaded module; ``state`` is only known from /proc/modules (``Live``, ...)."""

    name: str
    size: int
    refcount: int | None
    used_by: tuple[str, ...]
    state: str | None


def parse_modules(text: str) -> dict[str, KernelModule]:
    """Map module name to its entry; lsmod's header line is skipped."""
    modules: dict[str, KernelModule] = {}
    for line_no, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields or (fields[0] == "Module" and "Size" in fields):
            continue
        module = _module(fields, line_no)
        modules[module.name] = module
    return modules


def _module(fields: list[str], line_no: int) -> KernelModule:
    """Decode one line's whitespace-separated fields."""
    if len(fields) < 2 or not fields[1].isdigit():
        raise ParseError(f"line {line_no}: not a module line: {' '.join(fields)[:80]!r}")
    refcount = int(fields[2]) if len(fields) > 2 and fields[2].isdigit() else None
    used_by = _used_by(fields[3]) if len(fields) > 3 else ()
    state = fields[4] if len(fields) > 4 else None
    return KernelModule(
        name=fields[0], size=int(fields[1]), refcount=refcount, used_by=used_by, state=state
    )


def _used_by(field: str) -> tuple[str, ...]:
    """``a,b,`` or ``-`` (none) to a tuple of module names."""
    return tuple(name for name in field.split(",") if name and name != "-")
