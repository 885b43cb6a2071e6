"""The container runtimes' effective configs (containerd's, CRI-O's) as facts hold them.

Their own module, below the readers that fill them (``parse.containerd``, ``parse.crio``):
the host's facts (``probe.host_facts``) and the checks need the types, not the TOML readers.
"""

from __future__ import annotations

import msgspec

from gpunode.parse.runtime_handler import RuntimeHandler


class ContainerdConfig(msgspec.Struct, frozen=True):
    """The effective CRI runtime settings after merging imports."""

    version: int | None
    cri_table: str
    runtimes: dict[str, RuntimeHandler]
    default_runtime: str | None
    enable_cdi: bool | None
    imports: tuple[str, ...]
    sources: tuple[str, ...]
    missing_imports: tuple[str, ...] = ()
    ignored_cri_tables: tuple[str, ...] = ()
    file_versions: tuple[tuple[str, int | None], ...] = ()


class CrioConfig(msgspec.Struct, frozen=True):
    """The effective runtime settings after drop-ins."""

    runtimes: dict[str, RuntimeHandler]
    default_runtime: str | None
    hooks_dirs: tuple[str, ...]
    sources: tuple[str, ...]
