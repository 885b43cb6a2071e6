"""The flavour of nvidia.ko the node loaded against the generation of its GPUs.

Since R515 the driver ships two flavours of its kernel modules. NVIDIA's driver installation
guide ("Kernel Modules", docs.nvidia.com/datacenter/tesla/driver-installation-guide/
kernel-modules.html): the proprietary flavour is required for Maxwell, Pascal and Volta GPUs,
and the open modules "are only for Turing and newer architectures" (they run on the GPU's
GSP, first in Turing). NVIDIA's announcement of the move to the open modules (developer blog,
"NVIDIA Transitions Fully Towards Open-Source GPU Kernel Modules", 2024): Grace Hopper and
Blackwell must use the open modules, the proprietary driver is unsupported there. A flavour
the GPU cannot run leaves the module loaded and the GPU unserved: RM's adapter init fails
in the kernel log and nvidia-smi finds no devices, lines that alone read as a GPU that does
not come up (checks.kernel). The flavour loaded is the node's fact
(``/proc/driver/nvidia/version``, else the module's load banner in the kernel log), the
model the GPUs' names (nvidia-smi -q, else GFD's ``nvidia.com/gpu.product``); where either is
unknown, or nothing shows the GPU unserved, nothing is said.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpunode.checks.base import check
from gpunode.checks.context import NodeContext
from gpunode.errors import ParseError
from gpunode.model import Evidence, Finding
from gpunode.parse.driver_version import parse_proc_driver_version
from gpunode.relazy import lazy_compile

_VERSION_FILE = "proc/driver/nvidia/version"
#: The module's load banner in the kernel log ("NVRM: loading NVIDIA UNIX Open Kernel Module
#: for x86_64  580.95.05 ...", the proprietary one "NVRM: loading NVIDIA UNIX x86_64 Kernel
#: Module  535.183.01 ...").
_BANNER = lazy_compile(r"NVRM: loading NVIDIA UNIX "
                       r"(?:(?P<open>Open Kernel Module)|(?:x86_64|aarch64|ppc64le) Kernel Module)")
#: GPUs the proprietary flavour does not drive: Blackwell (B100/B200/B300, GB200/GB300, the
#: GeForce RTX 50 series, the RTX PRO Blackwell boards) and Grace Hopper (GH200), by the names
#: nvidia-smi prints and GFD's labels (spaces as hyphens) carry.
_NEEDS_OPEN = lazy_compile(
    r"(?i)\bBlackwell\b|(?:^|[\s-])G?B[123]00(?=$|[\s_-])|(?:^|[\s-])GH200(?=$|[\s_-])"
    r"|\bRTX[\s-]50[5-9]0\b|\bRTX[\s-]PRO[\s-]\d{4}\b")
#: GPUs without a GSP, which the open flavour does not drive: Kepler, Maxwell, Pascal and Volta
#: data-centre parts (Tesla K80, M60, P100, P40, V100 and its variants), the Quadro K, M, P
#: and GV100 boards, GeForce GTX 6xx to 10xx and the TITANs of those generations. Turing's T4,
#: GTX 16xx and every RTX part have one.
_NO_GSP = lazy_compile(
    r"(?i)(?:^|[\s-])(?:Tesla[\s-])?(?:K\d{1,2}0?m?|M\d{1,2}0?|P\d{1,3}|V100\w*)(?=$|[\s_-])"
    r"|\bQuadro[\s-](?:K\d{3,4}|M\d{3,4}|P\d{3,4}|GV100)\b"
    r"|\bGTX[\s-](?:[6-9]\d{2}M?|10\d{2})(?:[\s-]?Ti)?\b"
    r"|\bTITAN[\s-](?:X|Xp|V|Black|Z)\b")
#: Tegra GPUs are no PCIe device of nvidia.ko.
_TEGRA = lazy_compile(r"(?i)\b(?:Jetson|Tegra|Orin|Xavier|nvgpu)\b")
#: The driver not bringing the GPU up: RM's adapter init failing, the PCI probe taking none,
#: nvidia-smi's whole answer that it sees none.
_UNSERVED = lazy_compile(r"\bRmInitAdapter failed|NVRM: The NVIDIA probe routine failed"
                         r"|NVRM: No NVIDIA (?:GPUs?|devices?) (?:were )?(?:found|probed)")
_NO_DEVICES = lazy_compile(r"(?m)^\s*No devices were found\s*$")

REQUIRED = "open_kernel_modules_required"
UNSUPPORTED = "open_kernel_modules_unsupported_gpu"


def loaded_flavour(ctx: NodeContext) -> str | None:
    """"open" or "proprietary": the module the node loaded, from its version file, else the
    last load banner of the kernel log; None where neither says."""
    text = ctx.obs.files.get(_VERSION_FILE)
    if text:
        try:
            return parse_proc_driver_version(text).kernel_module_type
        except ParseError:
            pass
    dmesg = ctx.obs.cmd.get("dmesg.txt") or ""
    found = None
    if "NVRM: loading" in dmesg:
        for match in _BANNER.finditer(dmesg):
            found = "open" if match["open"] else "proprietary"
    return found


def _gpu_names(ctx: NodeContext) -> list[str]:
    names = [g.product_name for g in ctx.smi_gpus if g.product_name]
    label = ctx.gpu_product_label
    return names or ([label] if label else [])


def flavour_misfit(ctx: NodeContext) -> tuple[str, str, str] | None:
    """(cause, flavour, GPU name) where the loaded flavour cannot drive one of the node's GPUs."""
    memo = ctx.memo
    if "module_flavour" not in memo:
        memo["module_flavour"] = _misfit(ctx)
    known = memo["module_flavour"]
    assert known is None or isinstance(known, tuple)
    return known


def _misfit(ctx: NodeContext) -> tuple[str, str, str] | None:
    names = [n for n in _gpu_names(ctx) if not _TEGRA.search(n)]
    if not names:
        return None
    flavour = loaded_flavour(ctx)
    for name in names:
        if flavour == "proprietary" and _NEEDS_OPEN.search(name):
            return REQUIRED, flavour, name
        if flavour == "open" and _NO_GSP.search(name):
            return UNSUPPORTED, flavour, name
    return None


def _unserved(ctx: NodeContext) -> Evidence | None:
    """The line that shows the driver not serving the GPU: the kernel log's, else nvidia-smi's."""
    split = ctx.text_lines("cmd", "dmesg.txt")
    if split is not None:
        for index, line in enumerate(split[0]):
            if _UNSERVED.search(line):
                return Evidence(f"{ctx.obs.path_of('cmd', 'dmesg.txt')}:{index + 1}", line.strip())
    table = ctx.obs.cmd.get("nvidia-smi.txt")
    if table and _NO_DEVICES.search(table):
        return Evidence(ctx.obs.path_of("cmd", "nvidia-smi.txt"), "No devices were found")
    return None


#: Words one of which the lines ``_unserved`` reads hold: a healthy node's files hold none, so
#: its pass never parses the version file or reads the GPU names here.
_UNSERVED_WORDS = ("RmInitAdapter failed", "probe routine failed", "NVRM: No NVIDIA")


def _may_misfit(ctx: NodeContext) -> bool:
    dmesg = ctx.obs.cmd.get("dmesg.txt") or ""
    unserved = (any(map(dmesg.__contains__, _UNSERVED_WORDS))
                or "No devices were found" in (ctx.obs.cmd.get("nvidia-smi.txt") or ""))
    return unserved and flavour_misfit(ctx) is not None


@check("driver", may_find=_may_misfit)
def module_flavour(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The loaded module's flavour does not drive the node's GPU model, and the driver serves
    no GPU: the flavour is the cause."""
    misfit = flavour_misfit(ctx)
    if misfit is None:
        return
    unserved = _unserved(ctx)
    if unserved is None:
        return
    cause, flavour, name = misfit
    known = ctx.kb.get(cause)
    fact = Evidence(ctx.obs.path_of("files", _VERSION_FILE), f"{flavour} kernel module loaded for {name}")
    yield Finding(component, known.severity, known.code, (unserved, fact), {}, known.specificity)
