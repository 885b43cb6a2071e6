"""A GPU job's NVML refused its devices on a node whose toolkit skips the device cgroup.

``no-cgroups = true`` in the toolkit's config.toml ([nvidia-container-cli]) tells
libnvidia-container not to add the GPU devices to the container's device cgroup: the setting
rootless runtimes need, since they may not change cgroups. Under a rootful runtime the
container's cgroup then denies the GPUs, and NVML inside it fails at initialisation in its
words for refused access ("GPU access blocked by the operating system", "Insufficient
Permissions") while nvidia-smi on the host works; setting it back to false fixes it
(NVIDIA/nvidia-container-toolkit#85, on WSL2 and rootful Docker; NVIDIA/nvidia-container-toolkit#381,
the maintainers: no-cgroups = true is only for rootless containers; microsoft/WSL#9938). The
setting is the toolkit's, so the refusal is the toolkit's. NVML's "Unknown Error" is left to
the readings of devices lost after the start (checks.devices_lost): its words do not say the
access was refused. A config not collected, or one that does not parse, says nothing.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpunode.errors import ParseError
from gpunode.parse._toml import load_toml
from gpunode.relazy import lazy_compile

#: The toolkit's config file, wherever it is installed.
_TOOLKIT_CONFIG = lazy_compile(r"(?:^|/)nvidia-container-runtime/config\.toml$")
#: NVML's words for access to the GPU refused, as nvidia-smi and the bindings print them
#: (nvmlErrorString; pynvml's NVMLError_NoPermission).
_NVML_REFUSED = lazy_compile(r"\bGPU access blocked by the operating system\b"
                             r"|\bFailed to initialize NVML: Insufficient Permissions\b"
                             r"|\bNVMLError_NoPermission\b")
#: The class a refusal is read as.
REFUSED = "error_permission_denied"


def nvml_refused(line: str) -> bool:
    """``line`` is NVML's refusal of access to the GPU."""
    return ("blocked" in line or "ermission" in line) and _NVML_REFUSED.search(line) is not None


def skips_device_cgroup(files: Mapping[str, str]) -> bool:
    """A collected toolkit config sets ``no-cgroups = true`` for nvidia-container-cli."""
    for path, text in files.items():
        if not _TOOLKIT_CONFIG.search(path) or "no-cgroups" not in text:
            continue
        try:
            cli = load_toml("/" + path, text).get("nvidia-container-cli")
        except ParseError:
            continue
        if isinstance(cli, dict) and cli.get("no-cgroups") is True:
            return True
    return False
