"""The kernel's own vocabulary: NVRM and module-loader failures, whatever their wording.

The Xid check and catalogued signatures know particular lines. The kernel says
more than those: any ``NVRM:`` line that reads as a failure (an init, assertion,
GSP firmware, RPC or heartbeat timeout, a lost GPU, "caused by previous Xid")
and any module the loader refused (unknown symbol, version disagreement, bad
signature or format; not the taint notice "module verification failed", after which
the module loads) is evidence against the component that owns it; so is a stack
program the kernel killed for a fault (a segfault, a general protection fault in its
binary or library). The
owner is the lowest component the line names (``named_by`` in the catalog: a
BAR or VBIOS problem names the GPU hardware), else the module's family: the
``nvidia*`` modules are the driver's, and so is the GPU's peer-memory client whatever its
name (the out-of-tree ``nv_peer_mem`` before R470, ``nvidia_peermem`` since): it is built
against the GPU driver's p2p symbols and registers with MOFED, but it is the GPU stack's
GPUDirect RDMA module; the Mellanox and RDMA ones are MOFED's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import partial
from operator import methodcaller

import msgspec

from gpunode.checks.base import check
from gpunode.checks.context import NodeContext
from gpunode.checks.crashes import CRASH_WORDS as _CRASH_WORDS
from gpunode.checks.crashes import crashed_program
from gpunode.checks.decisive import line_finding
from gpunode.checks.driver_oops import _HEADER as _OOPS_HEADER
from gpunode.checks.driver_oops import _HEADER_WORDS as _OOPS_WORDS
from gpunode.checks.module_flavour import flavour_misfit
from gpunode.checks.workload_logs import gdr_capable, interposer_owner
from gpunode.decisive import Decisive, severity
from gpunode.model import Finding, Status
from gpunode.relazy import lazy_compile

#: The kernel's list of loaded modules in an oops or warning report (``print_modules``):
#: ``Modules linked in: ... nvidia_uvm(OE-) nvidia(OE) ...``, each module's taint flags then
#: its state, ``-`` while it is being unloaded and ``+`` while it is being loaded. A driver
#: module in transition when the kernel oopsed failed in its own load or unload (an
#: nvidia_uvm wedged in uvm_global_exit after the GPU Operator's driver was removed,
#: NVIDIA/aicr#1553), whatever words the trace holds.
_LINKED_IN = "Modules linked in:"
_IN_TRANSITION = lazy_compile(r"\b(?P<module>nvidia\w*|nv_peer_mem)\([A-Z]*[-+]\)")
_MODULE_LOAD = "error_module_load"
_DEVICE = "error_device"
_CONFIG_INVALID = "error_config_invalid"
#: Literals one of which every line of ``_MODULE_LINE``, ``crashes.crashed_program`` and
#: ``_PEER_MEMORY`` holds: a line without them is not searched by the pattern (each backtracks
#: over every word of a routine line, 5 to 20 µs a line, while the test is under 1 µs).
_MODULE_WORDS = ("Unknown symbol", "disagrees about version", "Invalid module format",
                 "Key was rejected", "could not insert", "ailed to insert module",
                 "rror loading module", "ailed to load module", "version magic '",
                 "this_module section size", "Unknown rela relocation")
_PEER_WORDS = ("nv_mem ", "nvidia-peermem ")
_MODULE_GATE, _CRASH_GATE, _PEER_GATE = (
    lazy_compile("|".join(map(re.escape, words))) for words in (_MODULE_WORDS, _CRASH_WORDS, _PEER_WORDS))
#: The x86 module loader's refusal of a module whose relocations do not fit the running kernel
#: (arch/x86/kernel/module.c apply_relocate_add: "x86/modules: Skipping invalid relocation
#: target, existing value is nonzero for type %d, loc %p, val %Lx", then ENOEXEC, which modprobe
#: reports as "Exec format error"; "overflow in relocation type %d val %Lx"). The module was
#: built against another configuration of the kernel (flatcar-archive/coreos-overlay#1839: the
#: NVIDIA module built in a developer container without pahole). The line names no module.
_RELOCATION = "x86/modules: "
_UNNAMED_REFUSAL = lazy_compile(r"\bx86/modules: Skipping invalid relocation target\b|"
                                r"\boverflow in relocation type \d+ val\b")
#: The kernel's Indirect Branch Tracking trap (X86_KERNEL_IBT, arch/x86/kernel/cet.c and before it
#: traps.c: "Missing ENDBR: %pS"): an indirect call landed on a function without the ENDBR
#: instruction CET requires, and the kernel stops the caller. The symbol is printed with its
#: module in brackets where it is a module's ("sym+0x0/0x10 [nvidia]"). The kernel's own code
#: and the modules kbuild compiles are built for it (-fcf-protection, objtool's IBT pass); a
#: module linked from an object compiled without it is not: NVIDIA's driver before its releases
#: for IBT kernels (NVIDIA/open-gpu-kernel-modules#256: "Missing ENDBR:
#: _portMemAllocatorAllocNonPagedWrapper+0x0/0x10" while nvidia.ko loads on Linux 5.18, the
#: module never coming up until ibt=off or a driver built for IBT).
_ENDBR = lazy_compile(
    r"\bMissing ENDBR: [\w.]{1,200}\+0x[0-9a-f]+/0x[0-9a-f]+(?: \[(?P<module>[\w-]{1,40})\])?")
_ENDBR_WORDS = "Missing ENDBR: "
#: A livepatch module refused the same way names what it patches on the next line
#: ("livepatch: failed to initialize patch 'livepatch_nfsd' for module 'nfsd' (-8)").
_LIVEPATCH = "livepatch:"
#: Literals one of which every line judged here holds (most nodes' logs: none).
#: NVRC, the NVIDIA init (PID 1) of the Kata Containers GPU guest image, logs to the guest's
#: kernel console as "NVRC::<function>[1]: <text>" (kata-containers/kata-containers#11622). Its
#: line that reads as a failure, or that met a value it does not know and went on with a guess
#: ("CC mode for BDF 0000:02:00.0 (via BAR0): unknown value 0x1, assuming off": NVRC's table of
#: the GPU's confidential-computing register lacked Hopper's 0x1 and set the GPU up for the
#: non-confidential path, after which nvidia.ko could not attach it; fixed in NVIDIA/nvrc#19),
#: is the sandbox runtime's guest setup: the container runtime's, below the driver that failed
#: after it, and a guess over an unknown value is its configuration's class.
_NVRC_WORD = "NVRC"
_NVRC = lazy_compile(r"\bNVRC(?:::\w+)*\[\d+\]: (?P<text>.+)")
_NVRC_GUESS = lazy_compile(r"(?i:\bunknown value\b.{0,80}\bassuming\b)")
_LITERALS = (_RELOCATION, "overflow in relocation type", _ENDBR_WORDS, "NVRM", _NVRC_WORD, "nvidia-nvlink: ",
             "nvidia-uvm: ", "nvidia-fs:", *_MODULE_WORDS, *_PEER_WORDS, *_CRASH_WORDS, _LINKED_IN)
#: The GPU peer-memory client's own error lines: its ``peer_err`` prints the module's name
#: (``nv_mem`` for nv_peer_mem, ``nvidia-peermem``), the function and the source line
#: ("nv_mem nv_get_p2p_free_callback:144 nv_get_p2p_free_callback -- invalid page_table"):
#: what the GPU driver's p2p interface handed it (pages freed under it) is the driver's.
_PEER_MEMORY = lazy_compile(r"(?:^|\]\s*|\s)(?:nv_mem|nvidia-peermem) \w+:\d+ (?P<text>.+)")
_MODULE_LINE = lazy_compile(
    # the module's own name before its refusal; not the loader's (kmod's "modprobe: ERROR:
    # could not insert 'nvidia': Key was rejected by service" names the module it inserts)
    r"(?:^|\]\s*|\s)(?!(?:modprobe|insmod): )(?P<module>[a-z][a-z0-9_]{1,40}): "
    r"(?:Unknown symbol|disagrees about version of symbol|"
    r".{0,80}Invalid module format|.{0,80}Key was rejected|version magic '[^']*' should be '|"
    # the x86 loader's refusal of a relocation type it does not know (arch/x86/kernel/module.c
    # apply_relocate_add: "module: nvidia: Unknown rela relocation: 4"): the module's assembler
    # and linker emitted a type the running kernel's loader was not built to apply
    r"Unknown rela relocation: \d+)|"
    # the loader's ENOEXEC for a module built against another kernel's headers (kernel/module:
    # "module nvidia: .gnu.linkonce.this_module section size must match the kernel's built
    # struct module size at run time"); its vermagic check above ("nvidia: version magic
    # '5.15.0-105-generic SMP mod_unload ' should be '5.15.0-106-generic SMP mod_unload '")
    r"\bmodule (?P<sized>[a-z][a-z0-9_]{1,40}): \.gnu\.linkonce\.this_module section size must match|"
    # kmod's own refusal, as a loader service (driverdog, systemd-modules-load) logs it
    r"\b(?:modprobe|insmod): (?:ERROR|FATAL): could not insert '(?P<inserted>[a-z][\w-]{1,40})'|"
    # insmod's refusal of the file it was given ("insmod: ERROR: could not insert module
    # .../nvidia-current.ko: Invalid module format", kmod's tools/insmod.c), named by its file
    r"\binsmod: ERROR: could not insert module (?:\S{0,200}/)?(?P<path>[a-z][\w-]{1,40})\.ko\b|"
    # a loader that names the module it failed to load: systemd-modules-load ("Failed to insert
    # module 'nvidia': Key was rejected by service"), Talos's KernelModuleSpecController
    # ("error loading module \"nvidia\": load nvidia failed: key was rejected by service",
    # siderolabs/talos#7174), its quotes escaped as the JSON of its log writes them
    r"\b(?:[Ff]ailed to (?:insert|load) module|[Ee]rror loading module) (?:\\x5c|\\)?['\"]"
    r"(?P<loaded>[a-z][\w-]{1,40})"
)
#: The driver's own prefix: ``NVRM: `` or, in the first open kernel modules (515), ``NVRM``
#: and the reporting function's name with no colon between ("NVRM kgspInitRm_IMPL: missing
#: NVDEC0 engine, cannot initialize GSP-RM", NVIDIA/open-gpu-kernel-modules#116; "NVRM
#: RmInitAdapter: Failed to load gsp_log_*.bin", its discussion #490). The name is a C
#: function's (an upper-case letter or an underscore in it), not a word such as "version".
#: The driver's other kernel modules print under their own names, the NVLink core inside
#: nvidia.ko ("nvidia-nvlink: Failed to initialize driver : -12", "nvidia-nvlink:
#: alloc_chrdev_region failed: -16", kernel-open/nvidia/nvlink_linux.c) and the unified-memory
#: module ("nvidia-uvm: uvm init failed: -22", kernel-open/nvidia-uvm/uvm.c): read as NVRM lines
#: (their notices, "Nvlink Core is being initialized", "Loaded the UVM driver", say no failure).
#: GPUDirect Storage's nvidia-fs module prints every message, error or notice, under
#: "nvidia-fs:" with no space (its nvfs_err/nvfs_info macros, NVIDIA/gds-nvidia-fs
#: src/nvfs-core.h): "nvidia-fs:write IO failed :-14" is the module failing a GPU IO, read
#: as the driver's like the other modules' lines ("nvidia-fs:Initializing nvfs driver module"
#: says no failure).
_NVRM = lazy_compile(
    r"(?:NVRM(?:: | (?=\w*[A-Z_]\w*: ))|\bnvidia-(?:nvlink|uvm): |\bnvidia-fs:\s?)(?P<text>.+)")
#: Module name prefixes and the component whose modules they are.
_MODULE_OWNERS = (
    ("nvidia", "driver"),
    ("nv_peer_mem", "driver"),
    ("mlx", "ofed"),
    ("ib_", "ofed"),
    ("rdma", "ofed"),
    ("knem", "ofed"),
)
#: Storage and file systems over RDMA (nvme_rdma, nvmet_rdma, rpcrdma): MOFED/DOCA rebuilds
#: them against its own RDMA core, so their symbol errors are MOFED's too.
_RDMA_MODULE = lazy_compile(r"rdma")
#: NVRM lines that are routine, whatever word they hold.
_ROUTINE = lazy_compile(r"NVRM: (?:loading NVIDIA|GPU at PCI|Persistence mode is deprecated|"
                        r"\S+: .{0,60}Clearing it\.?$)|NVRM: Xid |"
                        # the NVLink core's and the UVM module's load banners, on every healthy node
                        r"nvidia-nvlink: Nvlink Core is being initialized|nvidia-uvm: Loaded the UVM driver")
_OWNED = ("driver", "gpu-hardware", "ofed")
#: The components an NVRM failure line may name as its owner instead of the driver: the GPU
#: (a BAR, the VBIOS) and Fabric Manager, whose state the driver's status codes name
#: (NV_ERR_FABRIC_STATE_OUT_OF_SYNC from multicast setup after Fabric Manager restarted under
#: live GPUs; the catalog's named_by).
_NVRM_OWNERS = ("gpu-hardware", "driver", "fabric-manager")
#: nvidia.ko's own word that its PCI probe took no GPU ("NVRM: No NVIDIA devices probed.",
#: after "NVRM: GPU 0000:01:00.0 is already bound to NovaCore." where another kernel driver
#: holds it, beclab/Olares#3963): the module's init then fails with ENODEV and it does not
#: load, though no error word says so.
_NO_GPU_PROBED = lazy_compile(r"NVRM: No NVIDIA (?:GPUs?|devices?) (?:were )?(?:found|probed)")
#: Components whose host binaries the kernel may report killed by a fault (``checks.crashes``).
#: A vGPU plugin's binary runs in every container it serves: HAMi-core, the interposer it
#: preloads there, so a job that faults inside it ("python[3864703]: segfault at 0 ip ...
#: error 4 in libvgpu.so[7efeb767e000+38000]", Project-HAMi/HAMi-core#333's cuMemGetInfo_v2,
#: HAMi#1219) crashed in the plugin's code, not its own (checks.workload_logs.interposer_owner).
_CRASHING = ("container-toolkit", "container-runtime", "fabric-manager", "imex", "dcgm-exporter",
             "hami-device-plugin", "volcano-device-plugin")
#: The driver could not bring up one GPU (the module itself loaded): RM's adapter init
#: failed. Alone, that GPU is the one at fault (its BARs, power or seating, the BIOS's
#: Above 4G / Resizable BAR, a VM's MMIO window); a driver problem says so in other NVRM
#: lines (GSP firmware, an assertion, an unsupported GPU), which then own it.
_ADAPTER_INIT = lazy_compile(r"(?i:\bRmInitAdapter failed|\brm_init_adapter failed)")
#: RM's adapter init failure with its own status triple ("RmInitAdapter failed! (0x63:0x55:2344)":
#: the init stage that failed, the NV_STATUS, the source line). The stage is the RM_INIT_*
#: enumeration of the driver's arch/nvalloc/unix/src/osinit.c (NVIDIA/open-gpu-kernel-modules):
#: 0x2x the GPU's own bring-up, 0x30-0x32 its VBIOS, 0x60 and up RM's firmware (policy, fetch,
#: validation in some releases, init): the GSP-RM firmware the driver ships and loads onto the
#: GPU. A firmware stage is the driver's own step whatever the GPU (CuPy's CI, cupy/cupy#6310:
#: (0x63:0x55) on a T4 after reloading 510.39.01 in place, fixed by pinning the 495 driver).
_ADAPTER_FIRMWARE = lazy_compile(r"\bRmInitAdapter failed! \(0x6[0-9a-fA-F]:0x[0-9a-fA-F]+:\d+\)")
#: A kernel oops inside the adapter's own failure report: its header ("BUG: unable to handle page
#: fault for address: 0000000000004628", arch/x86/mm/fault.c) printed between RM's
#: "RmInitAdapter failed! (...)" and the module's "rm_init_adapter failed, device minor number 0"
#: for the same GPU, or in the lines right after. The fault came from the code bringing the GPU up,
#: which is the driver's (rm_init_adapter under the faulting frame in Microsoft's support article
#: 4023409), so the failed init is the driver build's, not the board's: a driver build that cannot
#: initialise a passed-through GeForce and oopses doing so, cured by another build of the same
#: card's driver (Scotchman0/NVIDIA_Drivers README, "RmInitAdapter failed ... esxi 7.0u3
#: passthrough pci gtx 1650"). A GPU that does not answer is reported by the driver as a failed
#: init, not as a fault in kernel code.
_ADAPTER_OOPS_SPAN = 3
#: The driver refusing a GPU by its PCI id as one its release does not support ("NVRM: The
#: NVIDIA GPU 000a:00:00.0 (PCI ID: 10de:2330) installed in this system is not supported by
#: the NVIDIA 580.126.09 driver release."), then failing the probe for it.
_REFUSED_ID = lazy_compile(r"NVRM: The NVIDIA GPU \S+ \(PCI ID: 10de:(?P<device>[0-9a-fA-F]{4})\)")
_PROBE_FAILED = lazy_compile(
    r"NVRM: (?:The NVIDIA probe routine failed for \d+ device|The NVIDIA GPU \S+ \(PCI ID)")
#: A kernel module's request to pin GPU memory for a third-party device refused: the GPU
#: driver's nvidia_p2p_get_pages (its GPUDirect RDMA interface, kernel-open/nvidia/nv-p2p.c)
#: returned an errno, as GPUDirect Storage's nvidia-fs reports it ("nvidia-fs:nvfs_pin_gpu_pages:
#: 1292 Error ret -22 invoking nvidia_p2p_get_pages", NVIDIA/gds-nvidia-fs#14). GeForce and
#: workstation boards do not do GPUDirect RDMA at all (NVIDIA's GPUDirect RDMA and GDS docs:
#: data-center GPUs only), so there the GPU itself refuses the operation; on other GPUs the
#: same errno is as often the caller's buffer, and nothing is said.
_P2P_PIN_REFUSED = lazy_compile(r"\bError ret -\d+ invoking nvidia_p2p_get_pages\b|"
                                r"\bnvidia_p2p_get_pages\b.{0,60}\b(?:failed|ret(?:urned)?)\b\W{0,3}-\d+")
#: The literal every line of ``_P2P_PIN_REFUSED`` holds.
_P2P_PIN = "nvidia_p2p_get_pages"


def kernel_failures(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The last kernel failure line owned by ``component``, as a degraded finding of its
    class; catalogued signatures of the same line (more specific) name the cause instead."""
    found = _failures(ctx).get(component)
    if found is None:
        return
    line_no, line = found
    where = f"{ctx.obs.path_of('cmd', 'dmesg.txt')}:{line_no}"
    moving = _LINKED_IN in line  # a driver module oopsed while loading or unloading
    # a GPU that refused to pin its pages for a peer: the device's answer, whatever its words
    pinned = component == "gpu-hardware" and _P2P_PIN_REFUSED.search(line) is not None
    guessed = component == "container-runtime" and _NVRC_GUESS.search(line) is not None
    line_class = _MODULE_LOAD if moving else _DEVICE if pinned else _CONFIG_INVALID if guessed else None
    finding = line_finding(ctx.kb, component, Status.DEGRADED, Decisive(line_no, line, 1), where,
                           verb="fails in the kernel log", standalone="true", line_class=line_class)
    smi = ctx.nvidia_smi
    refused = component == "gpu-hardware" and _PROBE_FAILED.search(line) is not None
    if (component == "gpu-hardware" and (refused or _ADAPTER_INIT.search(line))
            and smi is not None and smi.attached_gpus > 0):
        # the driver serves the other GPUs: the one it could not bring up is missing (the GPU's
        # cause; an adapter failure the driver owns keeps the driver's reading)
        missing = ctx.kb.get("gpu_missing")
        finding = msgspec.structs.replace(finding, cause=missing.code, status=Status.FAILED,
                                          specificity=missing.specificity)
    yield finding


def _any_failure(ctx: NodeContext) -> bool:
    """Whether the node's kernel log holds a failure line against any component (on nearly
    every node none: ``kernel_failures`` is then called for none of its ten components)."""
    return bool(_failures(ctx))


for _owned in (*_OWNED, *_CRASHING):
    check(_owned, may_find=_any_failure)(kernel_failures)


def kernel_failure_owners(ctx: NodeContext) -> frozenset[str]:
    """The components the node's kernel log holds a failure line against."""
    return frozenset(_failures(ctx))


def _failures(ctx: NodeContext) -> dict[str, tuple[int, str]]:
    """Owner -> its last failure line in the node's kernel log (found once per node)."""
    known = ctx.memo.get("kernel_failures")
    if known is None:
        known = ctx.memo["kernel_failures"] = _read_failures(ctx)
    assert isinstance(known, dict)
    return known


def _read_failures(ctx: NodeContext) -> dict[str, tuple[int, str]]:
    text = ctx.obs.cmd.get("dmesg.txt")
    if not text or not any(map(text.__contains__, _LITERALS)):  # (in C: every node)
        return {}
    split = ctx.text_lines("cmd", "dmesg.txt")
    assert split is not None
    out: dict[str, tuple[int, str]] = {}
    catalog = ctx.facts.catalog

    def named_in(line: str) -> str | None:
        return catalog.named_in(line) or interposer_owner(ctx, line)

    # the gates asked of the whole log first: most logs hold none of their words, and then
    # no line is asked (a word in a line is in the log)
    gates = tuple(filter(methodcaller("search", text), (_MODULE_GATE, _CRASH_GATE, _PEER_GATE)))
    # a refused P2P pin's owner, asked only where the log names the pin call at all
    pinned = partial(_pin_owner, ctx) if _P2P_PIN in text else None
    adapter: tuple[int, str] | None = None
    adapter_at: list[int] = []  # the 0-based indexes of the adapter failure lines
    firmware = False  # an adapter failure at one of RM's firmware stages
    unnamed: tuple[int, str] | None = None
    lines = split[0]
    for index, line in enumerate(lines):
        if (("relocation" in line and _UNNAMED_REFUSAL.search(line))
                and not (index + 1 < len(lines) and _LIVEPATCH in lines[index + 1])):
            unnamed = (index + 1, line.strip())
            continue
        owner = (_trapped_owner(ctx, line) if _ENDBR_WORDS in line
                 else _oops_owner(line) if _LINKED_IN in line
                 else "container-runtime" if _NVRC_WORD in line and _nvrc_failed(line)
                 else _owner(line, named_in, gates, pinned))
        if owner == _ADAPTER:
            adapter = (index + 1, line.strip())
            adapter_at.append(index)
            firmware = firmware or _ADAPTER_FIRMWARE.search(line) is not None
        elif owner is not None:
            out[owner] = (index + 1, line.strip())
    if unnamed is not None and _modules_settled(ctx, "ofed"):
        # a refusal that names no module: on a GPU node the module built against the node's
        # kernel outside its tree is the driver's, unless MOFED's driver pods, which build
        # theirs too, are not all up (then either may be refused: nothing is said)
        out.setdefault("driver", unnamed)
    if adapter is not None:  # the GPU's own, unless the driver said why (its own line, failure or notice)
        # (or the module loaded is a flavour that cannot drive the node's GPU model)
        driver_speaks = ("driver" in out or firmware or flavour_misfit(ctx) is not None
                         or _oops_in_adapter_report(lines, adapter_at)
                         or any(_driver_notice(line, catalog.named_in) for line in split[0]))
        out.setdefault("driver" if driver_speaks else "gpu-hardware", adapter)
    if _PROBE_FAILED.search(out.get("driver", (0, ""))[1]) and _refused_served(ctx, text):
        out.setdefault("gpu-hardware", out.pop("driver"))
    return out


def _oops_in_adapter_report(lines: list[str], adapter_at: list[int]) -> bool:
    """Whether a kernel oops header lies within the adapter failure's own report
    (``_ADAPTER_OOPS_SPAN`` lines of one of its lines): the driver's init code faulted."""
    for at in adapter_at:
        for line in lines[max(0, at - _ADAPTER_OOPS_SPAN):at + _ADAPTER_OOPS_SPAN + 1]:
            if any(word in line for word in _OOPS_WORDS) and _OOPS_HEADER.search(line):
                return True
    return False


def _trapped_owner(ctx: NodeContext, line: str) -> str | None:
    """The owner of a function the IBT trap stopped at: its module's, where the kernel names
    one; none named, the driver's where lsmod lists no NVIDIA module (the load that trapped
    never finished), else nobody's."""
    trapped = _ENDBR.search(line)
    if trapped is None:
        return None
    name = (trapped["module"] or "").replace("-", "_")
    if name:
        return _stack_owner(name)
    modules = ctx.modules
    return "driver" if modules is not None and "nvidia" not in modules else None


def _nvrc_failed(line: str) -> bool:
    """An NVRC line (``_NVRC``) that reads as a failure or guessed over a value it does not know."""
    said = _NVRC.search(line)
    return said is not None and (_NVRC_GUESS.search(said["text"]) is not None or severity(said["text"]) > 0)


def _modules_settled(ctx: NodeContext, component: str) -> bool:
    """Whether ``component``'s pods on the node, if any, all run ready without a restart: the
    modules they build loaded."""
    for sp in ctx.stack_pods(component):
        for status in sp.pod.status.container_statuses:
            if not status.ready or status.restart_count:
                return False
    return True


def _refused_served(ctx: NodeContext, text: str) -> bool:
    """Whether the driver refused a GPU as unsupported whose PCI id it serves on this node:
    the same model works beside it under the same driver, so the refusal is spurious and the
    GPU itself is at fault (an H100 of an AKS ND96isr H100 v5 node that failed the probe while
    its seven siblings ran, NVIDIA/aicr#1858)."""
    smi = ctx.nvidia_smi if "nvidia-smi-q.xml" in ctx.obs.cmd else None
    served = {(g.pci_device_id or "")[:4].lower() for g in smi.gpus} if smi is not None else set()
    return any(m["device"].lower() in served for m in _REFUSED_ID.finditer(text))


#: ``_owner``'s answer for an adapter init failure: the GPU's unless the driver said why.
_ADAPTER = "adapter"
#: What ``_owner`` keeps of an NVRM line's reading: the adapter's failure or an owner among
#: ``_NVRM_OWNERS`` (any other is the driver's).
_NVRM_KEPT = (_ADAPTER, *_NVRM_OWNERS)


def _driver_notice(line: str, named_in: Callable[[str], str | None]) -> bool:
    """An NVRM line that is no routine, no adapter failure and names no GPU hardware: the
    driver's own word (the open module refusing a GeForce, a GPU its release does not
    support), which explains an adapter init failure after it."""
    return (_NVRM.search(line) is not None and not _ROUTINE.search(line) and not _ADAPTER_INIT.search(line)
            and named_in(line) != "gpu-hardware")


def _notice(text: str, line: str) -> bool:
    """An NVRM line that reports no failure (an assertion whose status says only that a call
    does not apply here among them: ``decisive.ROUTINE_RM_STATUS``). Asked only after the cheap
    routine-line test: the severity reading is the costly part of a dmesg pass (about 0.6 s of
    CPU at 5,000 nodes)."""
    return severity(text) == 0 and not _NO_GPU_PROBED.search(line)


def _pin_owner(ctx: NodeContext) -> str | None:
    """The owner of a refused P2P pin: the node's GPUs where they cannot do GPUDirect at all."""
    return None if gdr_capable(ctx) else "gpu-hardware"


def _module_owner(module: re.Match[str]) -> str | None:
    """The component whose module a loader refusal names, None where it is no stack module's."""
    named = module["module"] or module["inserted"] or module["loaded"] or module["sized"] or module["path"]
    name = named.replace("-", "_")
    return _stack_owner(name) or ("ofed" if _RDMA_MODULE.search(name) else None)


def _stack_owner(name: str) -> str | None:
    """The component a kernel module of the stack belongs to, by its name's prefix."""
    return next((owner for prefix, owner in _MODULE_OWNERS if name.startswith(prefix)), None)


def refused_module_owner(line: str) -> str | None:
    """The component whose kernel module a line of the module loader's refusal names (the
    kernel's own words or modprobe's, insmod's, a loader service's), None for any other line."""
    if not _MODULE_GATE.search(line):
        return None
    module = _MODULE_LINE.search(line)
    return _module_owner(module) if module is not None else None


def _oops_owner(line: str) -> str | None:
    """The driver where an oops's module list shows one of its modules loading or unloading."""
    return "driver" if _IN_TRANSITION.search(line) else None


def _owner(line: str, named_in: Callable[[str], str | None],
           gates: tuple[re.Pattern[str], ...] = (_MODULE_GATE, _CRASH_GATE, _PEER_GATE),
           pinned: Callable[[], str | None] | None = None) -> str | None:
    """The component a failing kernel line is evidence against, or None (not a failure).
    ``gates``: those of the three patterns' literal gates the log holds words of (a pattern
    whose gate is not among them is not searched); ``pinned``: a refused P2P pin's owner
    (``_pin_owner``), None where the log names no pin call."""
    if pinned is not None and _P2P_PIN in line and _P2P_PIN_REFUSED.search(line):
        return pinned()
    if _MODULE_GATE in gates and _MODULE_GATE.search(line):
        module = _MODULE_LINE.search(line)
        if module is not None:
            return _module_owner(module)
    if _CRASH_GATE in gates and _CRASH_GATE.search(line):
        crashed = crashed_program(line)
        if crashed is not None:
            return named_in(crashed)
    peer = _PEER_MEMORY.search(line) if _PEER_GATE in gates and _PEER_GATE.search(line) else None
    if peer is not None:
        return "driver" if severity(peer["text"]) else None
    nvrm = _NVRM.search(line)
    if nvrm is None or _ROUTINE.search(line) or _notice(nvrm["text"], line):
        return None
    named = _ADAPTER if _ADAPTER_INIT.search(line) else named_in(line)
    return named if named in _NVRM_KEPT else "driver"
