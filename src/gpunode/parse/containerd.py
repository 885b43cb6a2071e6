"""containerd's CRI runtime handlers, resolved across ``imports`` drop-ins.

containerd loads the top-level file, then each import in order (globs sorted, paths
relative to the importing file's directory, each file once), and every later file
overrides keys of earlier ones. Each file's CRI table depends on the config schema
version: ``plugins.cri`` (v1), ``plugins."io.containerd.grpc.v1.cri"`` (v2) or
``plugins."io.containerd.cri.v1.runtime"`` (v3 and containerd 2.3's v4). How a file
without ``version`` is read depends on the containerd that reads it:

- containerd 1.x decodes every plugin's table by the merged config's one version
  (``Config.Decode``: the plugin's short ID under version 1, its URI otherwise; a later
  file's non-zero ``version`` overrides, an absent one does not), so a file without
  ``version`` follows the top-level file, and a top-level file without one is read as v1;
- containerd 2.x (cmd/containerd/server/config ``LoadConfigWithPlugins``) reads each file,
  the top-level one and every import, with the version its own text declares (absent: 0,
  read as v1) and migrates it step by step to the current version before merging it
  (``v1Migrate`` renames only dotless plugin names, ``plugins.cri`` to
  ``io.containerd.grpc.v1.cri``; the CRI plugin's own migration moves that table to the
  version 3 names). A version-less fragment's runtimes therefore count under any version's
  spelling, a version 2 file's under 2's and 3's, a version 3 file's under 3's only.

Each file's own version is kept: containerd 2.3 refuses to start when an imported file
declares a higher version than the top-level one.
A runtimes table written under the wrong version's path is ignored by containerd, so
it is reported in ``ignored_cri_tables`` instead of being counted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from gpunode.errors import ParseError
from gpunode.parse._toml import (
    absolute,
    bool_or_none,
    glob_matches,
    load_toml,
    string_or_none,
    table,
)
from gpunode.parse.runtime_config import ContainerdConfig
from gpunode.parse.runtime_handler import RuntimeHandler

CONTAINERD_CONFIG_BY_DISTRIBUTION: dict[str, tuple[str, ...]] = {
    "containerd": ("/etc/containerd/config.toml",),
    "k3s": (
        "/var/lib/rancher/k3s/agent/etc/containerd/config.toml",
        "/var/lib/rancher/k3s/agent/etc/containerd/config.toml.tmpl",
        "/var/lib/rancher/k3s/agent/etc/containerd/config-v3.toml.tmpl",
    ),
    "rke2": (
        "/var/lib/rancher/rke2/agent/etc/containerd/config.toml",
        "/var/lib/rancher/rke2/agent/etc/containerd/config.toml.tmpl",
    ),
    "microk8s": (
        "/var/snap/microk8s/current/args/containerd.toml",
        "/var/snap/microk8s/current/args/containerd-template.toml",
    ),
    "k0s": ("/etc/k0s/containerd.toml",),
}
CONTAINERD_CONFIG_PATHS: tuple[str, ...] = tuple(
    path for paths in CONTAINERD_CONFIG_BY_DISTRIBUTION.values() for path in paths
)

_CRI_TABLES = {
    1: ("plugins", "cri"),
    2: ("plugins", "io.containerd.grpc.v1.cri"),
    3: ("plugins", "io.containerd.cri.v1.runtime"),
    4: ("plugins", "io.containerd.cri.v1.runtime"),
}
#: The version containerd 2.x migrates every file to before reading its CRI tables.
_MIGRATED = 3


def cri_table_name(version: int | None) -> str:
    """The TOML table spelling of the CRI plugin for a config version."""
    plugin, name = _CRI_TABLES.get(version or 1, _CRI_TABLES[1])
    return f"{plugin}.{name}" if version in (None, 1) else f'{plugin}."{name}"'


class _FileView(msgspec.Struct):
    """What one file contributes."""

    runtimes: dict[str, RuntimeHandler]
    default_runtime: str | None
    enable_cdi: bool | None
    ignored: list[str]


def parse_containerd_config(
    files: Mapping[str, str], path: str = "/etc/containerd/config.toml", containerd_major: int | None = None
) -> ContainerdConfig:
    """Merge ``path`` and its imports (looked up in ``files``) into one view.

    containerd 2.x (``containerd_major`` 2) reads each file with its own version and
    migrates it in memory, so a file's runtimes count under its version's table names and
    every later version's (AKS writes version 2 files with the 2.x names; a drop-in without
    ``version`` is migrated from v1). Elsewhere a file without ``version`` follows the
    top-level file's.
    """
    if path not in files:
        raise ParseError(f"{path}: containerd config not among the files read")
    top = load_toml(path, files[path])
    top_version = _version(top, path)
    loaded, missing = _load_order(files, path, top)
    merged = _FileView(runtimes={}, default_runtime=None, enable_cdi=None, ignored=[])
    versions: list[tuple[str, int | None]] = []
    for file_path, doc in loaded:
        own = _version(doc, file_path)
        versions.append((file_path, own))
        containerd2 = (containerd_major or 1) >= 2
        read_as = (own or 1) if containerd2 else (own or top_version or 1)
        _merge(merged, _view(doc, file_path, read_as, containerd2))
    return ContainerdConfig(
        version=top_version,
        cri_table=cri_table_name(top_version),
        runtimes=merged.runtimes,
        default_runtime=merged.default_runtime,
        enable_cdi=merged.enable_cdi,
        imports=_imports(top, path),
        sources=tuple(file_path for file_path, _ in loaded),
        missing_imports=tuple(missing),
        ignored_cri_tables=tuple(merged.ignored),
        file_versions=tuple(versions),
    )


def runtimes_defined(path: str, text: str) -> dict[str, RuntimeHandler]:
    """The runtime handlers one file defines under any config version's CRI table: what a
    drop-in would add if containerd read it."""
    doc = load_toml(path, text)
    view = _FileView(runtimes={}, default_runtime=None, enable_cdi=None, ignored=[])
    for version in (1, 2, 3):
        _merge(view, _cri_view(doc, version))
    return view.runtimes


def runtime_table_key(path: str, text: str, name: str) -> str | None:
    """The dotted TOML key of the table defining runtime ``name`` in one file, as containerd's
    docs spell it (``plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia``)."""
    doc = load_toml(path, text)
    for version in (1, 2, 3):
        if name in (table(doc, *_CRI_TABLES[version], "containerd", "runtimes") or {}):
            return f"{cri_table_name(version)}.containerd.runtimes.{_bare_or_quoted(name)}"
    return None


def _bare_or_quoted(key: str) -> str:
    return key if key.replace("-", "").replace("_", "").isalnum() else f'"{key}"'


def _version(doc: Mapping[str, Any], path: str) -> int | None:
    """The file's ``version`` key, validated."""
    version = doc.get("version")
    if version is None:
        return None
    if not isinstance(version, int) or isinstance(version, bool) or version not in _CRI_TABLES:
        raise ParseError(f"{path}: unsupported containerd config version {version!r}")
    return version


def _imports(doc: Mapping[str, Any], path: str) -> tuple[str, ...]:
    """The ``imports`` array as written."""
    imports = doc.get("imports", [])
    if not isinstance(imports, list) or not all(isinstance(i, str) for i in imports):
        raise ParseError(f"{path}: 'imports' must be an array of strings")
    return tuple(imports)


def _load_order(
    files: Mapping[str, str], path: str, top: dict[str, Any]
) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
    """Files in the order containerd merges them (depth first), plus missing imports."""
    loaded: list[tuple[str, dict[str, Any]]] = []
    missing: list[str] = []
    seen: set[str] = set()

    def visit(file_path: str, doc: dict[str, Any]) -> None:
        seen.add(file_path)
        loaded.append((file_path, doc))
        for target in _resolve(files, file_path, _imports(doc, file_path), missing):
            if target not in seen:
                visit(target, load_toml(target, files[target]))

    visit(path, top)
    return loaded, missing


def _resolve(
    files: Mapping[str, str], parent: str, imports: tuple[str, ...], missing: list[str]
) -> list[str]:
    """Absolute import paths present in ``files``; absent plain paths go to ``missing``."""
    resolved: list[str] = []
    for entry in imports:
        target = absolute(parent, entry)
        if "*" in target:
            resolved.extend(glob_matches(target, files))
        elif target in files:
            resolved.append(target)
        else:
            missing.append(target)
    return resolved


def _view(doc: Mapping[str, Any], path: str, version: int, containerd2: bool = False) -> _FileView:
    """Runtimes, default runtime and CDI switch from one file's CRI table(s)."""
    # containerd 2.x migrates the file from its version up to 3 (4 spells its tables as 3)
    read = list(range(version, _MIGRATED + 1)) if containerd2 and version < _MIGRATED else [version]
    view = _FileView(runtimes={}, default_runtime=None, enable_cdi=None, ignored=[])
    for each in read:
        _merge(view, _cri_view(doc, each))
    view.ignored = _misplaced_runtimes(doc, path, read)
    return view


def _cri_view(doc: Mapping[str, Any], version: int) -> _FileView:
    """What one CRI table (of one config version's spelling) says."""
    cri = table(doc, *_CRI_TABLES[version]) or {}
    section = table(cri, "containerd") or {}
    shim = _v1_shim_runtime(doc) if version == 1 else None
    runtimes = _runtimes(table(section, "runtimes") or {}, shim)
    default = string_or_none(section.get("default_runtime_name"))
    legacy_default = table(section, "default_runtime")
    if legacy_default is not None:
        runtimes["default_runtime"] = _handler("default_runtime", legacy_default, shim)
        default = default or "default_runtime"
    return _FileView(
        runtimes=runtimes, default_runtime=default, enable_cdi=bool_or_none(cri.get("enable_cdi")), ignored=[]
    )


def _runtimes(raw: Mapping[str, Any], shim: str | None = None) -> dict[str, RuntimeHandler]:
    """Every ``runtimes.<name>`` table."""
    return {
        name: _handler(name, spec, shim) for name, spec in raw.items() if isinstance(spec, Mapping)
    }


_V1_SHIM = "io.containerd.runtime.v1.linux"


def _handler(name: str, spec: Mapping[str, Any], shim: str | None = None) -> RuntimeHandler:
    """One handler and the OCI binary it runs.

    ``options.BinaryName`` (runc v2 shim), ``options.Runtime`` (the v1 linux shim's
    options), ``runtime_engine`` (config v1); a v1-shim handler without any of them
    runs what ``plugins.linux.runtime`` names (``shim``).
    """
    options = table(spec, "options") or {}
    runtime_type = string_or_none(spec.get("runtime_type"))
    binary = (
        string_or_none(_option(options, "BinaryName"))
        or string_or_none(_option(options, "Runtime"))
        or string_or_none(spec.get("runtime_engine"))
    )
    if binary is None and runtime_type in (None, _V1_SHIM):
        binary = shim
    return RuntimeHandler(name=name, runtime_type=runtime_type, binary_name=binary)


def _option(options: Mapping[str, Any], name: str) -> Any:
    """The value containerd's shim gets for option ``name``: Go's TOML decoders take the name
    in any letter case and keep the last key, so Kubespray's ``binaryName`` (its
    docs/containerd.md spelling) sets the same field as the toolkit's ``BinaryName``."""
    folded = name.casefold()
    return next((options[k] for k in reversed(list(options)) if k.casefold() == folded), None)


def _v1_shim_runtime(doc: Mapping[str, Any]) -> str | None:
    """``[plugins.linux] runtime`` (containerd 1.0-1.2): the OCI binary of the v1 shim."""
    for plugin in ("linux", _V1_SHIM):
        linux = table(doc, "plugins", plugin) or {}
        found = string_or_none(linux.get("runtime"))
        if found:
            return found
    return None


def _misplaced_runtimes(doc: Mapping[str, Any], path: str, read: list[int]) -> list[str]:
    """Runtimes tables under another version's CRI path, which containerd would not read."""
    read_keys = {_CRI_TABLES[v] for v in read}
    spellings = {keys: v for v, keys in sorted(_CRI_TABLES.items(), reverse=True)}
    return [
        f"{path}: {cri_table_name(other)}.containerd.runtimes"
        for keys, other in sorted(spellings.items(), key=lambda kv: kv[1])
        if keys not in read_keys and table(doc, *keys, "containerd", "runtimes")
    ]


def _merge(into: _FileView, later: _FileView) -> None:
    """Later files override earlier ones key by key."""
    for name, handler in later.runtimes.items():
        earlier = into.runtimes.get(name)
        into.runtimes[name] = handler if earlier is None else _overlay(earlier, handler)
    into.default_runtime = later.default_runtime or into.default_runtime
    if later.enable_cdi is not None:
        into.enable_cdi = later.enable_cdi
    into.ignored.extend(later.ignored)


def _overlay(earlier: RuntimeHandler, later: RuntimeHandler) -> RuntimeHandler:
    """A handler redefined by a later file keeps earlier values it does not set."""
    return RuntimeHandler(
        name=later.name,
        runtime_type=later.runtime_type or earlier.runtime_type,
        binary_name=later.binary_name or earlier.binary_name,
    )


@dataclass(frozen=True)
class OptionSpellings:
    """One option of a runtime handler set twice in one file under names that differ only in
    letter case, with different values: ``first`` the earlier key, ``last`` the one that wins."""

    runtime: str
    first: str
    last: str
    value: str


def option_spellings(path: str, text: str) -> list[OptionSpellings]:
    """Options of a ``runtimes.<name>.options`` table set twice under names equal but for
    their letter case. containerd decodes the table into its shim's options struct with Go's
    TOML decoders (BurntSushi's in 1.x, go-toml v2 in 2.x), which take a field's name in any
    case, as encoding/json does, so each key is applied in turn and the last one wins
    (golang/go#11673; opencontainers/image-spec#1073): an installer's ``binaryName = runc``
    after the toolkit's ``BinaryName`` makes the NVIDIA handler run plain runc
    (kubernetes-sigs/kubespray#12167, NVIDIA/gpu-operator#1374). Equal values clash in nothing."""
    doc = load_toml(path, text)
    found: list[OptionSpellings] = []
    for keys in dict.fromkeys(_CRI_TABLES.values()):
        runtimes = table(doc, *keys, "containerd", "runtimes") or {}
        for name, spec in runtimes.items():
            options = table(spec, "options") if isinstance(spec, Mapping) else None
            found.extend(_clashes(name, options or {}))
    return found


def _clashes(runtime: str, options: Mapping[str, Any]) -> list[OptionSpellings]:
    """The keys of ``options`` (in the file's order) that fold onto an earlier key with
    another value."""
    seen: dict[str, str] = {}
    found = []
    for key, value in options.items():
        first = seen.setdefault(key.casefold(), key)
        if first != key and options[first] != value:
            found.append(OptionSpellings(runtime, first, key, str(value)))
    return found
