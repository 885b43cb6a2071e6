"""Judgements over a node's containerd config files alone, shared by ``diagnose`` (through
the toolkit checks) and ``gpunode explain`` (over the files a user hands it).

Pure: the files arrive as texts keyed by their path on the node; nothing here reads a
disk or knows the cluster, so the same set of files gives the same verdict either way.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath

from gpunode.errors import ParseError
from gpunode.parse.containerd import runtime_table_key, runtimes_defined
from gpunode.parse.runtime_config import ContainerdConfig
from gpunode.relazy import lazy_compile
from gpunode.runtimes import nvidia_runtimes

#: containerd drop-in files: ``*.toml`` in a ``*.d`` directory beside a containerd config.
DROPIN = lazy_compile(r"/containerd/[^/]+\.d/[^/]+\.toml$")


@dataclass(frozen=True)
class UnreadDropin:
    """A drop-in defining NVIDIA runtimes that the config containerd reads does not import."""

    path: str
    runtimes: tuple[str, ...]
    key: str  # the TOML table that defines the first of them

    def detail(self, config: ContainerdConfig, platform: str = "") -> str:
        """The evidence line: what the drop-in defines and what the root imports."""
        imports = ", ".join(config.imports) or "no drop-in directory"
        where = f" ({platform})" if platform else ""
        return f"defines runtime {', '.join(self.runtimes)}, but {config.sources[0]}{where} imports {imports}"


@dataclass(frozen=True)
class VersionClash:
    """An imported NVIDIA drop-in declaring a higher config version than the root file."""

    path: str
    version: int
    root_path: str
    root_version: int

    @property
    def detail(self) -> str:
        return (
            f"drop-in config version {self.version} higher than root config version "
            f"{self.root_version} ({self.root_path})"
        )


def unread_nvidia_dropins(config: ContainerdConfig, dropins: Mapping[str, str]) -> Iterator[UnreadDropin]:
    """Drop-ins (node path → text) that define an NVIDIA runtime containerd never loads.

    Only where the merged config has no NVIDIA runtime at all: otherwise one is loaded
    and an extra unread file changes nothing. Files that do not parse are skipped (the
    caller reports them where it reads them).
    """
    if nvidia_runtimes(config.runtimes):
        return
    for path, text in sorted(dropins.items()):
        if path in config.sources:
            continue
        try:
            defined = nvidia_runtimes(runtimes_defined(path, text))
        except ParseError:
            continue
        if defined:
            yield UnreadDropin(path, tuple(defined), runtime_table_key(path, text, defined[0]) or "")


def dropin_version_above_root(config: ContainerdConfig) -> VersionClash | None:
    """containerd 2.3 refuses to start when an imported NVIDIA drop-in declares a higher config
    version than the top-level file; other releases load the same files, so callers judge
    this only where the runtime is known to be down."""
    if not config.file_versions:
        return None
    root_path, root = config.file_versions[0]
    for path, version in config.file_versions[1:]:
        if root and version and version > root and "nvidia" in PurePosixPath(path).name:
            return VersionClash(path, version, root_path, root)
    return None
