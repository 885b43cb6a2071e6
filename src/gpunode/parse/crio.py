"""CRI-O runtime handlers from ``crio.conf`` and its ``crio.conf.d`` drop-ins.

CRI-O reads the main file, then the drop-in directory beside it in lexical order;
each later file overrides the keys it sets.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from gpunode.errors import ParseError
from gpunode.parse._toml import load_toml, string_or_none, table
from gpunode.parse.runtime_config import CrioConfig
from gpunode.parse.runtime_handler import RuntimeHandler

CRIO_CONFIG_PATHS: tuple[str, ...] = ("/etc/crio/crio.conf", "/etc/crio/config.toml")


def crio_drop_ins(files: Mapping[str, str], path: str = "/etc/crio/crio.conf") -> list[str]:
    """Every file in ``crio.conf.d`` next to ``path``, sorted by name.

    CRI-O reads them whatever their extension: OpenShift's own base drop-in is
    ``crio.conf.d/00-default``.
    """
    drop_in_dir = PurePosixPath(path).parent / "crio.conf.d"
    return sorted(key for key in files if PurePosixPath(key).parent == drop_in_dir)


def parse_crio_config(files: Mapping[str, str], path: str = "/etc/crio/crio.conf") -> CrioConfig:
    """Merge ``path`` (optional when drop-ins exist) with its drop-ins."""
    sources = ([path] if path in files else []) + crio_drop_ins(files, path)
    if not sources:
        raise ParseError(f"{path}: CRI-O config and drop-ins not among the files read")
    runtimes: dict[str, RuntimeHandler] = {}
    default: str | None = None
    hooks: tuple[str, ...] = ()
    for source in sources:
        runtime_table = table(load_toml(source, files[source]), "crio", "runtime") or {}
        runtimes.update(_runtimes(runtime_table, runtimes))
        default = string_or_none(runtime_table.get("default_runtime")) or default
        hooks = _hooks_dirs(runtime_table, source) or hooks
    return CrioConfig(
        runtimes=runtimes, default_runtime=default, hooks_dirs=hooks, sources=tuple(sources)
    )


def _runtimes(
    runtime_table: Mapping[str, Any], earlier: Mapping[str, RuntimeHandler]
) -> dict[str, RuntimeHandler]:
    """``[crio.runtime.runtimes.<name>]`` tables; unset keys keep earlier values."""
    found: dict[str, RuntimeHandler] = {}
    for name, spec in (table(runtime_table, "runtimes") or {}).items():
        if not isinstance(spec, Mapping):
            continue
        before = earlier.get(name)
        found[name] = RuntimeHandler(
            name=name,
            runtime_type=string_or_none(spec.get("runtime_type"))
            or (before.runtime_type if before else None),
            binary_name=string_or_none(spec.get("runtime_path"))
            or (before.binary_name if before else None),
        )
    return found


def _hooks_dirs(runtime_table: Mapping[str, Any], source: str) -> tuple[str, ...]:
    """``hooks_dir`` (an array of OCI hook directories)."""
    value = runtime_table.get("hooks_dir")
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ParseError(f"{source}: crio.runtime.hooks_dir must be an array of strings")
    return tuple(value)
