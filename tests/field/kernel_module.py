"""Which flavour of the NVIDIA kernel module a case's node loaded: open or proprietary.

The simulator writes the open module's banner (``NVIDIA UNIX Open Kernel Module for x86_64``)
for every node. The open modules exist only from R515; before R560 the GPU Operator
(``driver.kernelModuleType`` / the legacy ``useOpenKernelModules``) and NVIDIA's installers
load the proprietary module unless told otherwise, and GPUs without a GSP (Kepler, Maxwell,
Pascal, Volta) are driven by the proprietary module only. The case's node gets, in order:
``cluster.gpu_node.kernel_module``; the flavour an NVRM banner of its evidence names (dmesg,
/proc/driver/nvidia/version, a log); the flavour its ClusterPolicy or NVIDIADriver evidence
sets; else the default of its driver branch and GPU. A proprietary node's kernel log and
/proc/driver/nvidia/version carry the proprietary module's banners, and a GPU without a GSP
has no GSP firmware (nvidia-smi -q prints N/A).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from gpunode.sim.models import DRIVER_VERSION

#: The first branch with open kernel modules, and the first whose installers load them by default.
FIRST_OPEN = 515
FIRST_OPEN_DEFAULT = 560

#: GPU names (as reports and nvidia-smi print them) of the generations without a GSP, which the
#: open modules do not drive: Tesla/Quadro K, M, P and V parts (GRID V100D vGPUs too), Quadro
#: GV100, GeForce GT/GTX 6xx-10xx and the Maxwell, Pascal and Volta TITANs. Turing's GTX 16xx
#: and every RTX part have one.
NO_GSP = re.compile(
    r"(?i)(?:^|[\s-])(?:Tesla[\s-]?)?(?:K\d{1,2}0?m?|M\d{1,2}0?|P\d{1,3}|V100\w*)(?:\b|[-_])"
    r"|\bQuadro[\s-](?:K\d{3,4}|M\d{3,4}|P\d{3,4}|GV100)\b"
    r"|\bGTX?[\s-](?:[6-9]\d{2}M?|10\d{2})(?:[\s-]?Ti)?\b"
    r"|\bTITAN[\s-](?:X|Xp|V|Black|Z)\b"
)

#: GPUs that are no PCIe device of an nvidia.ko (Jetson and other Tegra SoCs): left as simulated.
_TEGRA = re.compile(r"(?i)\b(?:Jetson|Tegra|Orin|Xavier|nvgpu)\b")

_OPEN_BANNER = re.compile(r"NVIDIA UNIX Open Kernel Module for \w+")
_PROPRIETARY_BANNER = re.compile(r"NVIDIA UNIX (?:x86_64|aarch64|ppc64le) Kernel Module")

_SIM_BANNER = re.compile(
    r"NVIDIA UNIX Open Kernel Module for x86_64  (?P<v>\S+)  Release Build  \([^)]*\)  "
    r"(?P<date>[^\n]*?UTC \d{4})")
_SIM_MODESET = re.compile(
    r"nvidia-modeset: Loading NVIDIA UNIX Open Kernel Mode Setting Driver for x86_64  (?P<v>\S+)  "
    r"Release Build  \([^)]*\)  (?P<date>[^\n]*?UTC \d{4})")
_OUT_OF_TREE = re.compile(
    r"^(?P<stamp>\[[ \d.]+\]) nvidia: loading out-of-tree module taints kernel\.$", re.M)
_GSP = re.compile(r"<gsp_firmware_version>[^<]*</gsp_firmware_version>")


def branch_of(driver: str | None) -> int:
    return int((driver or DRIVER_VERSION).split(".", 1)[0])


def without_gsp(gpu: str | None) -> bool:
    """Whether the reported GPU model has no GSP (so no open module drives it)."""
    return bool(gpu) and NO_GSP.search(gpu or "") is not None and not _TEGRA.search(gpu or "")


def module_problem(flavour: str | None, driver: str | None) -> str | None:
    """Why ``kernel_module`` cannot be built with ``driver`` (the field, then the reason)."""
    if flavour == "open" and branch_of(driver) < FIRST_OPEN:
        branch = branch_of(driver)
        return f"kernel_module: open kernel modules exist from R{FIRST_OPEN}, not on branch {branch}"
    return None


def banner_flavour(texts: list[str]) -> str | None:
    """The flavour the last NVRM module banner among ``texts`` names, if any names one."""
    found: tuple[int, int, str] | None = None
    for i, text in enumerate(texts):
        for pattern, flavour in ((_OPEN_BANNER, "open"), (_PROPRIETARY_BANNER, "proprietary")):
            for match in pattern.finditer(text):
                if found is None or (i, match.start()) > found[:2]:
                    found = (i, match.start(), flavour)
    return found[2] if found else None


def policy_flavour(objects: list[tuple[str, Any]]) -> str | None:
    """The flavour a ClusterPolicy's ``spec.driver`` or an NVIDIADriver's ``spec`` sets
    (``kernelModuleType`` open/proprietary, else ``useOpenKernelModules``); ``auto`` sets none."""
    for resource, obj in objects:
        if not isinstance(obj, dict):
            continue
        spec = obj.get("spec") or {}
        section = {"clusterpolicies": spec.get("driver"), "nvidiadrivers": spec}.get(resource)
        if not isinstance(section, dict):
            continue
        kind = section.get("kernelModuleType")
        if kind in ("open", "proprietary"):
            return str(kind)
        if kind is None and isinstance(section.get("useOpenKernelModules"), bool):
            return "open" if section["useOpenKernelModules"] else "proprietary"
    return None


def default_flavour(driver: str | None, gpu: str | None) -> str:
    """What the installers load when nothing says: proprietary before R560 or on a GPU
    without a GSP, else open."""
    return "proprietary" if branch_of(driver) < FIRST_OPEN_DEFAULT or without_gsp(gpu) else "open"


def reflavour(root: Path, flavour: str, gpu: str | None) -> None:
    """The node's written kernel facts (``root`` = nodes/<node>) show ``flavour``'s module;
    a GPU without a GSP shows no GSP firmware."""
    if gpu is not None and _TEGRA.search(gpu):
        return
    if flavour == "proprietary":
        for rel in ("cmd/dmesg.txt", "files/proc/driver/nvidia/version"):
            path = root / rel
            if path.is_file():
                path.write_text(_proprietary(path.read_text(encoding="utf-8")), encoding="utf-8")
    xml = root / "cmd" / "nvidia-smi-q.xml"
    if without_gsp(gpu) and xml.is_file():
        text = _GSP.sub("<gsp_firmware_version>N/A</gsp_firmware_version>", xml.read_text(encoding="utf-8"))
        xml.write_text(text, encoding="utf-8")


def _proprietary(text: str) -> str:
    """The simulator's open-module kernel lines as the proprietary module prints them: its
    banner (no "Release Build" builder tag), the modeset driver's, and the license taint."""
    text = _SIM_BANNER.sub(lambda m: f"NVIDIA UNIX x86_64 Kernel Module  {m['v']}  {m['date']}", text)
    text = _SIM_MODESET.sub(
        lambda m: f"nvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver for UNIX platforms  {m['v']}  "
                  f"{m['date']}", text)
    return _OUT_OF_TREE.sub(
        lambda m: f"{m[0]}\n{m['stamp']} nvidia: module license 'NVIDIA' taints kernel.", text)
