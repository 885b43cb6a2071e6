"""What a container asked NVIDIA's runtime for: its two NVIDIA env variables, as the pod spec
sets them.

NVIDIA's runtime (its hook, nvidia-container-cli, or the CDI modes that honour the same
variables) gives a container the GPUs ``NVIDIA_VISIBLE_DEVICES`` names and the driver files of
the capabilities ``NVIDIA_DRIVER_CAPABILITIES`` names (the container toolkit's "Specialized
Configurations with Docker", environment variables:
https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html):

* ``NVIDIA_VISIBLE_DEVICES``: ``all``; ``none`` (no GPU, the driver capabilities still
  mounted); ``void``, empty or unset (the runtime acts as runc: neither GPUs nor
  capabilities); else a comma list of GPU indexes, UUIDs or MIG ids;
* ``NVIDIA_DRIVER_CAPABILITIES``: a comma list of ``compute`` (CUDA, OpenCL: libcuda),
  ``utility`` (nvidia-smi, NVML), ``video`` (the Video Codec SDK: libnvidia-encode,
  libnvcuvid), ``graphics`` (OpenGL, Vulkan, EGL), ``display`` (X11), ``compat32``, ``ngx``;
  ``all`` for every one; empty or unset for the default, ``utility,compute`` (the default
  nerdctl follows too: https://github.com/containerd/nerdctl/pull/1024).

Only a literal ``value`` in the pod spec is known: an unset variable may come from the image
(the CUDA base images set both), and a ``valueFrom`` is resolved when the container starts.
Either is ``None`` here, and a reading of it changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from gpunode.bundle.kube import Container
from gpunode.relazy import lazy_compile

VISIBLE: Final = "NVIDIA_VISIBLE_DEVICES"
CAPABILITIES: Final = "NVIDIA_DRIVER_CAPABILITIES"
#: The capabilities an empty NVIDIA_DRIVER_CAPABILITIES stands for.
DEFAULT_CAPABILITIES: Final = frozenset({"utility", "compute"})
#: NVIDIA_VISIBLE_DEVICES values that ask for no GPU at all (``none`` still gets the driver's files).
NO_GPU: Final = frozenset({"none", "void", ""})
#: Those that ask for nothing of the runtime: it acts as runc, no GPU and no driver file.
NOTHING: Final = frozenset({"void", ""})


@dataclass(frozen=True)
class NvidiaEnv:
    """A container's two NVIDIA variables where the pod spec sets them literally; None: not known."""

    visible: str | None = None
    capabilities: str | None = None

    def lacks(self, capability: str) -> bool:
        """The container's known capabilities exclude ``capability`` (never where unknown or ``all``)."""
        wanted = self.wanted()
        return wanted is not None and "all" not in wanted and capability not in wanted

    def wanted(self) -> frozenset[str] | None:
        """The capabilities asked for (empty: the default), None where not known."""
        if self.capabilities is None:
            return None
        words = frozenset(w.strip().lower() for w in self.capabilities.split(",") if w.strip())
        return words or DEFAULT_CAPABILITIES

    def asks_no_gpu(self) -> bool:
        """NVIDIA_VISIBLE_DEVICES known and naming no GPU (``none``, ``void``, empty)."""
        return self.visible is not None and self.visible.strip().lower() in NO_GPU

    def asks_nothing(self) -> bool:
        """NVIDIA_VISIBLE_DEVICES known and asking the runtime for nothing (``void``, empty)."""
        return self.visible is not None and self.visible.strip().lower() in NOTHING

    def devices(self) -> tuple[str, ...]:
        """The device ids NVIDIA_VISIBLE_DEVICES lists (indexes, UUIDs, MIG ids); () for
        ``all``, no GPU, or not known."""
        if self.visible is None:
            return ()
        ids = tuple(i.strip() for i in self.visible.split(",") if i.strip())
        return () if len(ids) == 1 and ids[0].lower() in ("all", "none", "void") else ids


def nvidia_env(container: Container) -> NvidiaEnv:
    """The container's NVIDIA variables as its pod spec sets them (the last one of a name wins,
    as the runtime applies the list in order)."""
    values: dict[str, str | None] = {}
    for var in container.env:
        if var.name in (VISIBLE, CAPABILITIES):
            values[var.name] = var.value
    return NvidiaEnv(values.get(VISIBLE), values.get(CAPABILITIES))


#: A driver library named in a line, by the capability the runtime mounts it for (the
#: toolkit's library lists: libnvidia-container's nvc_info.c, the same split the docs give).
_CAPABILITY_LIBRARIES: Final = (
    ("compute", lazy_compile(r"\blib(?:cuda|nvidia-ptxjitcompiler|nvidia-nvvm|nvidia-opencl"
                             r"|cudadebugger)\.so\b")),
    ("utility", lazy_compile(r"\blibnvidia-ml\.so\b|\bnvidia-smi\b.{0,40}\bnot found\b")),
    ("video", lazy_compile(r"\blib(?:nvidia-encode|nvcuvid|nvidia-opticalflow)\.so\b")),
    ("graphics", lazy_compile(r"\blib(?:GLX_nvidia|EGL_nvidia|GLESv[12]\w*_nvidia|nvidia-glcore"
                              r"|nvidia-eglcore|nvidia-glsi|nvidia-tls|nvidia-vulkan-producer)\.so\b")),
)


def library_capability(line: str) -> str | None:
    """The capability whose driver library ``line`` names, None where it names none."""
    return next((cap for cap, pattern in _CAPABILITY_LIBRARIES if pattern.search(line)), None)
