"""Which configured container runtime hands containers the GPUs, whatever it is called.

A runtime is NVIDIA's when the OCI binary it runs is an nvidia-container-runtime
(any path, including the ``.cdi`` and ``.legacy`` modes): AKS names it
``nvidia-container-runtime``, MicroK8s uses that as the handler, the GPU Operator
writes ``nvidia``, ``nvidia-cdi`` and ``nvidia-legacy``. Only a handler whose binary
is not known at all is recognised by an ``nvidia`` name. Pure functions, shared by
the bundle checks and the probe checks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath

from gpunode.lazy import cached_property
from gpunode.parse.docker import DockerConfig
from gpunode.parse.runtime_config import ContainerdConfig, CrioConfig
from gpunode.parse.runtime_handler import RuntimeHandler

NVIDIA_BINARY = "nvidia-container-runtime"


def is_nvidia_runtime(handler: RuntimeHandler) -> bool:
    """The handler runs an nvidia-container-runtime binary (or, binary unknown, is named so)."""
    return _nvidia_handler(handler.binary_name, handler.runtime_type, handler.name)


@lru_cache(maxsize=1024)
def _nvidia_handler(binary: str | None, runtime_type: str | None, name: str) -> bool:
    """``is_nvidia_runtime`` of a handler's binary, type and name (a fleet has a few)."""
    if binary:
        return PurePosixPath(binary).name.startswith(NVIDIA_BINARY)
    if runtime_type and NVIDIA_BINARY in runtime_type:
        return True
    return name.startswith("nvidia")


def nvidia_runtimes(runtimes: Mapping[str, RuntimeHandler]) -> list[str]:
    """Names of the NVIDIA runtimes among ``runtimes``, sorted."""
    return sorted(name for name, handler in runtimes.items() if is_nvidia_runtime(handler))


@dataclass(frozen=True)
class RuntimeSetup:
    """The runtime settings of the node's own container runtime, whichever it is."""

    runtime: str  # "containerd" | "cri-o" | "docker"
    path: str
    runtimes: Mapping[str, RuntimeHandler]
    default_runtime: str | None
    cdi_enabled: bool | None = None
    version: int | None = None
    complete: bool = True  # every import it names was read
    hooks_dirs: tuple[str, ...] = ()  # CRI-O's hooks_dir (empty: its defaults)

    @cached_property
    def nvidia(self) -> list[str]:
        """The NVIDIA runtimes among ``runtimes`` (read by several checks of each node)."""
        return nvidia_runtimes(self.runtimes)

    @property
    def default_is_nvidia(self) -> bool:
        handler = self.runtimes.get(self.default_runtime or "")
        return handler is not None and is_nvidia_runtime(handler)

    def describe(self, name: str) -> str:
        """``name`` plus its binary, for evidence."""
        handler = self.runtimes.get(name)
        binary = handler.binary_name if handler else None
        return f"{name} ({binary})" if binary else name


def from_containerd(config: ContainerdConfig) -> RuntimeSetup:
    return RuntimeSetup(
        runtime="containerd",
        path=config.sources[0] if config.sources else "",
        runtimes=config.runtimes,
        default_runtime=config.default_runtime,
        cdi_enabled=config.enable_cdi,
        version=config.version,
        complete=not config.missing_imports,
    )


def from_crio(config: CrioConfig) -> RuntimeSetup:
    return RuntimeSetup(
        runtime="cri-o",
        path=config.sources[0] if config.sources else "",
        runtimes=config.runtimes,
        default_runtime=config.default_runtime,
        hooks_dirs=config.hooks_dirs,
    )


def from_docker(config: DockerConfig) -> RuntimeSetup:
    return RuntimeSetup(
        runtime="docker", path=config.source, runtimes=config.runtimes, default_runtime=config.default_runtime
    )


def runtime_kind(container_runtime_version: str) -> str | None:
    """``containerd://1.7.2`` → containerd; ``cri-o://…`` → cri-o; ``docker://…`` → docker."""
    scheme = container_runtime_version.partition("://")[0].lower()
    return {"containerd": "containerd", "cri-o": "cri-o", "crio": "cri-o", "docker": "docker"}.get(scheme)
