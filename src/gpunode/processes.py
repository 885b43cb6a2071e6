"""The processes each catalog component runs, by the name the kernel gives them.

``data/processes.toml`` lists each component's executables; the kernel names a process by
its comm, the executable's name cut to 15 characters, in an OOM kill or a security denial
(gpunode.checks.kernel_kills). Read once per process and validated against the catalog.
"""

from __future__ import annotations

import threading
from functools import cache
from importlib import resources

import msgspec

from gpunode.catalog import load_catalog
from gpunode.datatoml import load_data_toml

#: The kernel's TASK_COMM_LEN (16) less the terminating NUL.
COMM_LEN = 15


class Process(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One executable a catalog component runs, by its file name."""

    name: str
    component: str
    source: str


class _ProcessFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    process: tuple[Process, ...]


def parse_processes(text: str, components: frozenset[str]) -> dict[str, str]:
    """The comm (name cut to 15 characters) -> component table, validated: every component is
    a catalog id, every entry has a source, and names whose cuts collide agree."""
    parsed = msgspec.convert(load_data_toml(text), _ProcessFile)
    table: dict[str, str] = {}
    for proc in parsed.process:
        if proc.component not in components:
            raise ValueError(f"process {proc.name!r}: unknown component {proc.component!r}")
        if not proc.source.strip() or not proc.name or "/" in proc.name:
            raise ValueError(f"process {proc.name!r}: a file name and a source are required")
        comm = proc.name[:COMM_LEN]
        if table.setdefault(comm, proc.component) != proc.component:
            raise ValueError(f"process {proc.name!r}: its cut {comm!r} names two components")
    return table


_LOAD_LOCK = threading.Lock()


def process_owners() -> dict[str, str]:
    """The shipped table (read once per process; the lock as for the catalog: msgspec builds
    its type information on first use)."""
    with _LOAD_LOCK:
        return _process_owners()


@cache
def _process_owners() -> dict[str, str]:
    text = resources.files("gpunode").joinpath("data/processes.toml").read_text("utf-8")
    return parse_processes(text, frozenset(c.id for c in load_catalog().components))
