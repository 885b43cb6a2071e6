"""``gpunode explain`` over containerd config files: a cause that follows from a set of them.

Some causes are in no single line: a toolkit drop-in defining the ``nvidia`` runtime is
harmless on its own and so is a root config without ``imports``; together they mean
containerd never loads the runtime. Given several files, explain recognises the
containerd configs among them and judges them together with the same functions the
toolkit checks of ``diagnose`` use (``gpunode.checks.runtime_config``).

Which file is what (the rule docs and ``--help`` state):

- A file is a containerd config when its path lies under a directory ``diagnose`` reads
  containerd configs from (``…/etc/containerd/``, k3s/RKE2's ``…/agent/etc/containerd/``,
  MicroK8s' ``…/args/``, k0s' ``…/etc/k0s/``), or when it is TOML (name ``*.toml`` or
  ``*.toml.tmpl``) whose content is containerd's: an ``imports`` array or a ``plugins``
  table naming a containerd plugin (``cri``, ``io.containerd.…``).
- Placed files keep their node path (the part from that directory on), so ``imports``
  resolve as containerd resolves them: one of the known root paths is the root config,
  a ``*.toml`` in a ``*.d`` directory beside it is a drop-in.
- Of files found by content alone, one with ``imports`` is a root, and otherwise the
  first given is the root when no placed one is; the rest are drop-ins at an unknown
  place, judged only when the root imports nothing (then no place is read).

Pure: texts in, verdicts out; the command reads the files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from gpunode.catalog import load_catalog
from gpunode.checks.cgroup_driver import containerd_fault
from gpunode.checks.runtime_config import DROPIN, dropin_version_above_root, unread_nvidia_dropins
from gpunode.errors import ParseError
from gpunode.explain import CauseMatch, FileEvidence, QuotedLine
from gpunode.kb import KnowledgeBase
from gpunode.parse._toml import load_toml, table
from gpunode.parse.cgroup_driver import KUBELET_CONFIG, kubelet_cgroup_driver
from gpunode.parse.containerd import (
    CONTAINERD_CONFIG_BY_DISTRIBUTION,
    CONTAINERD_CONFIG_PATHS,
    parse_containerd_config,
)
from gpunode.parse.runtime_config import ContainerdConfig
from gpunode.relazy import lazy_compile

Role = Literal["root", "drop-in"]
DEFAULT_ROOT = "/etc/containerd/config.toml"
#: Directories whose files are containerd configs, longest first (k3s's holds etc/containerd).
CONFIG_DIRS: tuple[str, ...] = tuple(
    sorted(
        {path.rsplit("/", 1)[0].lstrip("/") + "/" for paths in CONTAINERD_CONFIG_BY_DISTRIBUTION.values()
         for path in paths},
        key=len,
        reverse=True,
    )
)
_TOML_NAME = lazy_compile(r"\.toml(?:\.tmpl)?$")
_CRI_PLUGINS = ("cri",)


@dataclass(frozen=True)
class ConfigFile:
    """One containerd config as given: where it came from, where it lies on the node."""

    source: str
    text: str
    node_path: str | None  # None: recognised by content, place unknown
    has_imports: bool


@dataclass(frozen=True)
class ConfigRead:
    """How explain took one config file: its role and whether containerd loads it
    (None: cannot be told, the drop-in's place is unknown)."""

    source: str
    node_path: str | None
    role: Role
    loaded: bool | None


@dataclass(frozen=True)
class ConfigJudgement:
    files: tuple[ConfigRead, ...] = ()
    matches: tuple[CauseMatch, ...] = ()


def node_path(source: str) -> str | None:
    """Where ``source`` lies on a node: the part of its path from a containerd config directory
    on (``bundle/nodes/n1/files/etc/containerd/config.toml`` → ``/etc/containerd/config.toml``)."""
    path = "/" + source.replace("\\", "/").lstrip("/")
    for directory in CONFIG_DIRS:
        at = path.rfind("/" + directory)
        if at >= 0:
            placed = path[at:]
            if placed in CONTAINERD_CONFIG_PATHS or DROPIN.search(placed):
                return placed
    return None


def is_candidate(source: str) -> bool:
    """Whether ``source`` may be a containerd config (or the kubelet's, whose cgroup driver
    is compared with the runtime's) and is read whole to find out."""
    return node_path(source) is not None or bool(_TOML_NAME.search(source)) or _is_kubelet(source)


def _is_kubelet(source: str) -> bool:
    return ("/" + source.replace("\\", "/").lstrip("/")).endswith(KUBELET_CONFIG)


def recognise(source: str, text: str) -> ConfigFile | None:
    """``source`` as a containerd config, or None when it is other text.

    Raises ParseError naming ``source`` when a candidate is not valid TOML.
    """
    if _is_kubelet(source):
        return ConfigFile(source, text, KUBELET_CONFIG, has_imports=False)
    placed = node_path(source)
    doc = load_toml(source, text)
    imports = doc.get("imports")
    if placed is None and not (imports is not None or _names_containerd_plugin(doc)):
        return None
    return ConfigFile(source, text, placed, has_imports=imports is not None)


def _names_containerd_plugin(doc: Mapping[str, Any]) -> bool:
    plugins = table(doc, "plugins") or {}
    return any(name in _CRI_PLUGINS or name.startswith("io.containerd.") for name in plugins)


def judge(configs: Sequence[ConfigFile], kb: KnowledgeBase, runtime_down: bool = False) -> ConfigJudgement:
    """The causes the config set shows, judged as ``diagnose`` judges a node's files.

    ``runtime_down``: the other text shows the runtime down, the only case where a drop-in
    version above the root's is why (containerd 2.3 refuses it, other releases load it).
    Raises ParseError (naming the given file) when the root or an import cannot be read.
    """
    kubelets = [c for c in configs if c.node_path == KUBELET_CONFIG]
    configs = [c for c in configs if c.node_path != KUBELET_CONFIG]
    root = _root(configs)
    if root is None:
        return ConfigJudgement(tuple(ConfigRead(c.source, c.node_path, "drop-in", None) for c in configs))
    root_path = root.node_path if root.node_path in CONTAINERD_CONFIG_PATHS else DEFAULT_ROOT
    placed = {c.node_path: c for c in configs if c is not root and c.node_path and c.node_path != root_path}
    files = {root_path: root.text, **{path: c.text for path, c in placed.items()}}
    by_path = {root_path: root, **placed}
    try:
        config = parse_containerd_config(files, root_path)
    except ParseError as exc:
        raise ParseError(_named(str(exc), by_path)) from None
    unplaced = {c.source: c for c in configs if c is not root and c.node_path is None}
    dropins = {p: c.text for p, c in placed.items() if DROPIN.search(p)}
    if not config.imports:  # nothing is imported, so wherever they lie they are not read
        dropins |= {source: c.text for source, c in unplaced.items()}
        by_path |= unplaced
    matches = [*_unread(config, dropins, by_path, root, kb)]
    if runtime_down:
        matches += _version_clash(config, by_path, kb)
    matches += _cgroup_mismatch(config, files, by_path, kubelets, kb)
    return ConfigJudgement(_reads(configs, root, config, bool(config.imports)), tuple(matches))


def _root(configs: Sequence[ConfigFile]) -> ConfigFile | None:
    """The root config: one at a root path, else one with imports, else the first unplaced."""
    for test in (
        lambda c: c.node_path in CONTAINERD_CONFIG_PATHS,
        lambda c: c.node_path is None and c.has_imports,
        lambda c: c.node_path is None,
    ):
        found = next((c for c in configs if test(c)), None)
        if found is not None:
            return found
    return None


def _reads(
    configs: Sequence[ConfigFile], root: ConfigFile, config: ContainerdConfig, imports: bool
) -> tuple[ConfigRead, ...]:
    out = []
    for c in configs:
        if c is root:
            out.append(ConfigRead(c.source, c.node_path, "root", True))
        elif c.node_path in CONTAINERD_CONFIG_PATHS:  # another distribution's root: not this one's
            out.append(ConfigRead(c.source, c.node_path, "root", None))
        elif c.node_path is None:
            out.append(ConfigRead(c.source, None, "drop-in", None if imports else False))
        else:
            out.append(ConfigRead(c.source, c.node_path, "drop-in", c.node_path in config.sources))
    return tuple(out)


def _unread(
    config: ContainerdConfig, dropins: Mapping[str, str], by_path: Mapping[str, ConfigFile],
    root: ConfigFile, kb: KnowledgeBase,
) -> list[CauseMatch]:
    found = list(unread_nvidia_dropins(config, dropins))
    if not found:
        return []
    match = _match(kb, "containerd_config_wrong_path")
    imports = f"imports {', '.join(config.imports)}" if config.imports else "no imports"
    match.files.append(FileEvidence(root.source, config.sources[0], "imports", imports))
    for unread in found:
        dropin = by_path[unread.path]
        match.files.append(FileEvidence(dropin.source, dropin.node_path, unread.key, unread.detail(config)))
        needle = f"runtimes.{unread.runtimes[0]}"
        match.add_quote(_line_of(dropin, lambda line, n=needle: n in line.replace('"', "")))
    return [match]


def _version_clash(
    config: ContainerdConfig, by_path: Mapping[str, ConfigFile], kb: KnowledgeBase
) -> list[CauseMatch]:
    clash = dropin_version_above_root(config)
    if clash is None:
        return []
    match = _match(kb, "containerd_config_version_mismatch")
    dropin, root = by_path[clash.path], by_path[clash.root_path]
    match.files.append(FileEvidence(dropin.source, dropin.node_path, "version", clash.detail))
    root_version = f"version = {clash.root_version}"
    match.files.append(FileEvidence(root.source, clash.root_path, "version", root_version))
    match.add_quote(_line_of(dropin, lambda line: line.split("=")[0].strip() == "version"))
    return [match]


def _cgroup_mismatch(
    config: ContainerdConfig, files: Mapping[str, str], by_path: Mapping[str, ConfigFile],
    kubelets: Sequence[ConfigFile], kb: KnowledgeBase,
) -> list[CauseMatch]:
    """The kubelet's cgroupDriver against the default handler's, as ``diagnose`` compares them
    (checks/cgroup_driver.py): both set and different is a config the runtime cannot run pods with."""
    kubelet = kubelet_cgroup_driver(kubelets[-1].text) if kubelets else None
    found = containerd_fault(files, config, kubelet) if kubelet else None
    if found is None:
        return []
    component, runtime = found
    match = _match(kb, "error_config_invalid")
    said = f"kubelet cgroupDriver: {kubelet}"
    match.files.append(FileEvidence(kubelets[-1].source, KUBELET_CONFIG, "cgroupDriver", said))
    where = by_path.get(runtime.source)
    detail = f"runtime handler {runtime.handler} uses {runtime.driver}: {runtime.setting} ({component})"
    given = where.source if where else runtime.source
    match.files.append(FileEvidence(given, runtime.source, "SystemdCgroup", detail))
    if where is not None:
        handler = f"runtimes.{runtime.handler}"
        match.add_quote(_line_of(where, lambda line, h=handler: h in line.replace('"', "")))
    return [match]


def _match(kb: KnowledgeBase, code: str) -> CauseMatch:
    cause = kb.get(code)
    component = load_catalog().by_id.get(cause.component)
    return CauseMatch(cause, component.layer if component else 0)


def _line_of(config: ConfigFile, wanted: Any) -> QuotedLine:
    """The first line of ``config`` that ``wanted`` accepts (else its first line), quoted."""
    lines = config.text.splitlines() or [""]
    number = next((i for i, line in enumerate(lines, 1) if wanted(line)), 1)
    return QuotedLine(number, lines[number - 1].strip(), config.source)


def _named(message: str, by_path: Mapping[str, ConfigFile]) -> str:
    """A parse error about a node path, told with the file the user gave."""
    for path, config in by_path.items():
        if message.startswith(f"{path}:"):
            return config.source + message[len(path):]
    return message
