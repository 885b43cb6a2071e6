"""Layer 1 checks: the driver (operator-managed or host) and Fabric Manager."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from operator import attrgetter

import msgspec

from gpunode.bundle.kube import Pod
from gpunode.checks.base import check, not_deployed, ok, pods_here, problem, reads, unknown
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import line_finding
from gpunode.checks.kernel import kernel_failure_owners
from gpunode.checks.runtime_class import runtime_requested
from gpunode.decisive import Decisive
from gpunode.kb import KnowledgeBase
from gpunode.model import Evidence, Finding, Status
from gpunode.parse.nvidia_smi import GpuInfo, parse_nvidia_smi_failure
from gpunode.relazy import lazy_compile

_FABRIC_OK = {"Completed"}
_VALIDATIONS = "run/nvidia/validations"


@check("driver")
@check("gpu-hardware")
def driver_answers(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """nvidia-smi output is the driver's own word: it answers, or says why not. A failure
    to open one GPU after NVML started is that GPU's word (``_gpu_unanswered``)."""
    text = ctx.obs.cmd.get("nvidia-smi.txt")
    if component != "driver" and (text is None or _HANDLE_LITERAL not in text):
        return  # only a handle failure is the GPU's: no second parse of a healthy table
    failure = parse_nvidia_smi_failure(text) if text is not None else None
    owner = _smi_failure_owner(ctx, failure) if failure else "driver"
    if owner != component:
        return
    if failure:
        where = ctx.obs.path_of("cmd", "nvidia-smi.txt")
        cause, rank = _smi_cause(ctx.kb, component, failure)
        if owner == "gpu-hardware":
            cause, rank = _gpu_unanswered(ctx, text or "", failure, cause, rank)
        said = line_finding(ctx.kb, component, Status.FAILED, Decisive(1, failure, 2), where,
                            verb="fails in nvidia-smi", specificity=rank)
        yield msgspec.structs.replace(said, cause=cause)  # the line quoted, its cause named
        return
    smi = ctx.nvidia_smi
    if smi is not None and smi.driver_version:
        ev = Evidence(ctx.obs.path_of("cmd", "nvidia-smi-q.xml"), f"driver_version={smi.driver_version}")
        yield ok(component, f"driver {smi.driver_version}, CUDA {smi.cuda_version}", ev)


#: The state nvidia-smi's failure is when its words say nothing more.
_SMI_FAILED = "nvidia_smi_failed"
#: nvidia-smi's word that NVML started (so the driver answered) and then could not open one
#: GPU by its handle (nvmlDeviceGetHandleByIndex failing: "Unable to determine the device
#: handle for GPU 0000:0B:00.0: Unknown Error", or "...: GPU is lost"; some releases print
#: no space before the bus id). The error is that GPU's, not the driver's.
_NO_HANDLE = lazy_compile(
    r"Unable to determine the device handle for GPU ?(?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f:.]+)")
_HANDLE_LITERAL = "determine the device handle"
_LOST = "gpu_fallen_off_bus"
_DEVICE_ERROR = "error_device"


def _smi_failure_owner(ctx: NodeContext, failure: str) -> str:
    """The component nvidia-smi's failure line speaks of: a GPU it could not open is the
    GPU hardware's, unless the kernel's log blames the driver and not the GPU (GSP firmware,
    an assertion, the driver refusing the GPU: the driver then could not bring it up)."""
    if _NO_HANDLE.search(failure) is None:
        return "driver"
    owners = kernel_failure_owners(ctx)
    return "driver" if "driver" in owners and "gpu-hardware" not in owners else "gpu-hardware"


def _gpu_unanswered(ctx: NodeContext, text: str, failure: str, cause: str, rank: int) -> tuple[str, int]:
    """A GPU that NVML cannot open: a catalogued cause its words match stands ("GPU is
    lost"); where other GPUs of the node still answer (fewer bus ids fail than the node has
    GPUs), the driver works and this one dropped off the bus; else the line's class."""
    if cause != _SMI_FAILED and cause not in {cls.code for cls, _ in ctx.kb.classes}:
        return cause, rank
    failing = {m["bus"].upper() for m in _NO_HANDLE.finditer(text)}
    expected = ctx.expected_gpus
    if expected is not None and len(failing) < expected:
        lost = ctx.kb.get(_LOST)
        return lost.code, max(lost.specificity, rank)
    # nvidia_smi_failed is the driver's state; a GPU's own NVML error is a device error
    return (_DEVICE_ERROR, rank) if cause == _SMI_FAILED else (cause, rank)


_GSP = "gsp_firmware_unresponsive"
#: The driver release from which GSP firmware runs by default on the GPUs that support it.
_GSP_DEFAULT_FROM = 535
#: nvidia-smi -q's "Driver Version : 580.65.06" field (a line of its own), found by its
#: words and then its line (``_driver_major``).
_DRIVER_VERSION = lazy_compile(r"Driver Version\s*:\s*(\d+)\.")
#: A GPU's field that NVML could not read, in nvidia-smi -q's layout.
_FIELD_UNKNOWN = lazy_compile(r"^\s+[A-Z][\w ]*?\s*:\s*Unknown Error\s*$", re.MULTILINE)
_UNKNOWN_ERROR = "Unknown Error"


@check("driver")
def gpu_fields_unanswered(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """nvidia-smi reached the driver (it prints the driver version) but a GPU's own fields
    read Unknown Error, on a release that runs GSP firmware by default: the module is up and
    the GPU's firmware does not answer (NVIDIA/dcgm-exporter#319, awslabs/amazon-eks-ami#1523:
    g5 A10G with R535). Before that release, or when NVML itself cannot start ("Failed to
    initialize NVML: Unknown Error", which driver_answers reads), nothing is said here."""
    text = ctx.obs.cmd.get("nvidia-smi.txt")
    version = _driver_major(text) if text else None
    if text is None or version is None or int(version) < _GSP_DEFAULT_FROM:
        return
    field = _FIELD_UNKNOWN.search(text) if _UNKNOWN_ERROR in text else None  # (literal first: 30 us less)
    if field is not None:
        ev = Evidence(ctx.obs.path_of("cmd", "nvidia-smi.txt"),
                      f"driver {version}: {' '.join(field[0].split())}")
        yield problem(component, _GSP, ev, specificity=ctx.kb.get(_GSP).specificity)


#: A GPU's second row in nvidia-smi's table: "| Fan  Temp  Perf  Pwr:Usage/Cap |" with Temp and
#: Perf both printed as ERR! ("|ERR!  ERR! ERR!      1W /  N/A |"): NVML could read neither the
#: GPU's temperature sensor nor its performance state.
_TEMP_PERF_ERR = lazy_compile(r"^\|\s*\S+\s+ERR!\s+ERR!\s+\S+\s*/\s*\S+\s*\|", re.MULTILINE)
#: The table's header: "| NVIDIA-SMI 470.57.02    Driver Version: 470.57.02    CUDA Version: 11.4 |".
_TABLE_DRIVER = lazy_compile(r"\bDriver Version:\s*(\d+)\.")
_ERR_LITERAL = "ERR!"


@check("gpu-hardware")
def gpu_rows_unread(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """nvidia-smi answered (its table names the driver) but a GPU's row reads ERR! for both
    its temperature and its performance state: the driver works and that GPU does not answer
    it, a GPU in an error state until it is reset (NVIDIA/dcgm-exporter#46: one A100 of eight
    with ERR! for fan, temperature, perf and ECC, every container start on it failing, cleared
    by a GPU reset). One field alone is not read: a power draw or a fan printed ERR! is
    transient or a reading bug (Azure/azhpc-diagnostics#77, NVIDIA/open-gpu-kernel-modules#1193).
    From the release that runs GSP firmware by default an unread GPU is the firmware's
    (``gpu_fields_unanswered``): nothing is said there."""
    text = ctx.obs.cmd.get("nvidia-smi.txt")
    if text is None or _ERR_LITERAL not in text:
        return
    driver = _TABLE_DRIVER.search(text)
    if driver is None or int(driver[1]) >= _GSP_DEFAULT_FROM:
        return
    row = _TEMP_PERF_ERR.search(text)
    if row is None:
        return
    line_no = text.count("\n", 0, row.start()) + 1
    where = f"{ctx.obs.path_of('cmd', 'nvidia-smi.txt')}:{line_no}"
    said = line_finding(ctx.kb, component, Status.FAILED, Decisive(line_no, row[0].strip(), 2), where,
                        verb="reads ERR! in nvidia-smi")
    yield msgspec.structs.replace(said, cause=_DEVICE_ERROR)


def _driver_major(text: str) -> str | None:
    """The driver's major version from the first ``Driver Version : N.…`` that begins its
    line (only blanks before it; the default table's header line holds the same words after
    other text). The words are searched as a literal, then their line is looked at: what a
    multi-line pattern anchored at each line start answers, at a tenth of its cost."""
    for found in _DRIVER_VERSION.finditer(text):
        start = text.rfind("\n", 0, found.start()) + 1
        if not text[start:found.start()].strip():
            return found[1]
    return None


def _smi_cause(kb: KnowledgeBase, component: str, failure: str) -> tuple[str, int]:
    """What nvidia-smi's own failure line means: a catalogued cause of the driver whose
    signature it matches ("couldn't communicate with the NVIDIA driver" is NVML's Driver Not
    Loaded), else the class of the line ("Failed to initialize NVML: Unknown Error" is a
    device error), else the bare state; ranked at least as the state."""
    state = kb.get(_SMI_FAILED).specificity
    known = [c for source in ("text", "node_cmd") for c, m in kb.matchers(component, source)
             if m.regex.search(failure)]
    if known:
        best = max(known, key=lambda c: c.specificity)
        return best.code, max(best.specificity, state)
    cls = kb.class_of(failure)
    return (cls, state) if cls is not None else (_SMI_FAILED, state)


@check("driver")
def host_driver_evidence(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """Without driver pods, a host driver shows in validation markers and GFD labels."""
    if ctx.stack_pods(component) or ctx.daemonsets_targeting(component):
        return
    marker = ctx.obs.files.get(f"{_VALIDATIONS}/driver-ready")
    if marker is not None and "IS_HOST_DRIVER=true" in marker:
        ev = Evidence(ctx.obs.path_of("files", f"{_VALIDATIONS}/driver-ready"), "IS_HOST_DRIVER=true")
        yield ok(component, "host driver (validated by the GPU Operator)", ev)
        return
    version = ctx.node.metadata.labels.get("nvidia.com/cuda.driver-version.full") if ctx.node else None
    if version:
        ev = Evidence(f"node/{ctx.name} metadata.labels", f"nvidia.com/cuda.driver-version.full={version}")
        yield ok(component, f"host driver {version} (from GFD labels)", ev)
    elif ctx.operand_enabled("driver") is False:
        yield unknown(component, "ClusterPolicy expects a host driver; no evidence of it was collected")


@check("driver", needs=("cmd/lsmod.txt",))
def nouveau_module(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """nouveau loaded without the nvidia module: it holds the GPUs, the driver cannot bind."""
    modules = ctx.modules
    if modules is None or "nouveau" not in modules or "nvidia" in modules:
        return
    ev = Evidence(ctx.obs.path_of("cmd", "lsmod.txt"), "nouveau loaded, nvidia not loaded")
    yield problem(component, "nouveau_loaded", ev, specificity=85)


#: An operand's words for "no libnvidia-ml in my container" (device plugin, GFD, DCGM
#: exporter, MIG manager: "could not load NVML library: libnvidia-ml.so.1: cannot open shared
#: object file", "nvml init failed: ERROR_LIBRARY_NOT_FOUND", "NVML library not found").
_NVML_LIBRARY_MISSING = lazy_compile(
    r"libnvidia-ml\.so(?:\.1)?: cannot open shared object file|could not load NVML|"
    r"ERROR_LIBRARY_NOT_FOUND|NVML library not found", re.IGNORECASE)
#: Operands that load NVML from what the NVIDIA runtime injects from the host.
_NVML_OPERANDS = ("device-plugin", "gfd", "dcgm-exporter", "mig-manager")


@check("driver")
def operand_finds_no_host_nvml(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """Where the node's image installs both the driver and the NVIDIA runtime (EKS's and
    AKS's GPU images), an operand that asks for the NVIDIA runtime and still finds no
    libnvidia-ml was given what the host has: the library is not on the host, so the
    image's driver install is broken or absent (awslabs/amazon-eks-ami#1744: an AMI
    without the user-space libraries; #1817: a standard AMI with no driver at all). No
    NVIDIA kernel module in lsmod makes it the driver not loaded. Only failing operand
    pods count (a restart or a container not ready), never a line a healthy one logged
    once while the driver came up; on other platforms the runtime or the pod's own spec
    may be at fault, and the operand's own causes say so."""
    provides = ctx.platform.provides
    if "driver" not in provides or "container-toolkit" not in provides or ctx.stack_pods(component):
        return
    for operand in _NVML_OPERANDS:
        if not runtime_requested(ctx, operand):
            continue
        for sp in ctx.stack_pods(operand):
            found = _nvml_missing_line(ctx, sp.pod) if _failing(sp.pod) else None
            if found is not None:
                modules = ctx.modules
                loaded = modules is None or "nvidia" in modules
                cause = "nvml_library_missing" if loaded else "driver_not_loaded"
                ev = Evidence(found[0], f"{operand} asks for the NVIDIA runtime, finds no NVML: {found[1]}")
                yield problem(component, cause, ev, specificity=ctx.kb.get(cause).specificity)
                return


#: The Go NVML bindings' words for NVML_ERROR_LIBRARY_NOT_FOUND, a failed dlopen of libnvidia-ml
#: (nvidia-docker 1.x's src/nvml/nvml.go, the gonvml bindings: errors.New("could not load NVML
#: library"); NVML's "NVML Shared Library Not Found",
#: https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceEnumvs.html).
_HOST_NVML_NOT_LOADED = lazy_compile(r"\b[Cc]ould not load NVML library\b")
#: The node's journal of its container runtime and the daemons beside it (gpunode.probe.journal).
_RUNTIME_JOURNAL = "journal-runtime.txt"


@check("driver", may_find=reads(f"cmd/{_RUNTIME_JOURNAL}"))
def host_daemon_finds_no_nvml(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A host daemon of the container stack that loads NVML from the host's own loader path
    (nvidia-docker 1.x's plugin beside dockerd) logging in the node's journal that it could not:
    the host's libnvidia-ml is not in the ld cache, the driver's user-space install left it out
    of the loader's path (NVIDIA/nvidia-docker#470: the driver's directory dropped from
    ld.so.conf by prime-select; #74: RPM Fusion's ld.so.conf entry only in the devel package).
    The same words in a container's log are the runtime's injection (checks.workload_logs), and
    the toolkit CLI's "load library failed" searches its own driver root (the toolkit's)."""
    split = ctx.text_lines("cmd", _RUNTIME_JOURNAL)
    if split is None:
        return
    lines = split[0]
    index = next((i for i in range(len(lines) - 1, -1, -1)
                  if "nvml library" in lines[i].lower() and _HOST_NVML_NOT_LOADED.search(lines[i])), None)
    if index is None:
        return
    ev = Evidence(f"{ctx.obs.path_of('cmd', _RUNTIME_JOURNAL)}:{index + 1}", lines[index].strip()[:300])
    cause = "nvml_library_missing"
    yield problem(component, cause, ev, specificity=ctx.kb.get(cause).specificity)


def _failing(pod: Pod) -> bool:
    """A pod whose containers restarted or are not ready."""
    statuses = pod.status.container_statuses
    return pod.status.phase != "Running" or any(cs.restart_count or not cs.ready for cs in statuses)


def _nvml_missing_line(ctx: NodeContext, pod: Pod) -> tuple[str, str] | None:
    """The last line of the pod's logs that says NVML's library is missing, with its file."""
    for log in ctx.logs_of(pod):
        for line in reversed(log.lines):
            if _NVML_LIBRARY_MISSING.search(line):
                return log.path, line.strip()[:300]
    return None


#: Operating systems NVIDIA publishes driver containers for (the GPU Operator's platform
#: support list, and CentOS Linux 7/8 while operator 1.x supported them): a node on any
#: other runs an image built for one of these. RHCOS is "Red Hat Enterprise Linux CoreOS";
#: Fedora CoreOS and CentOS Stream CoreOS (OKD) are not it.
_PUBLISHED_OS = lazy_compile(r"(?i)\b(?:ubuntu|red hat|rhel|centos linux)\b")
#: The driver container's own words that it could not find the running kernel it must build
#: for (gpu-driver-container's scripts): apt has no package named after it, the kernel
#: version cannot be resolved, or no version string can be read from the kernel image
#: ("Could not locate Linux kernel version string", after extract-vmlinux found none).
_KERNEL_UNRESOLVED = (r"Could not (?:resolve|locate) Linux kernel version|"
                      r"Unable to resolve \w+ version from kernel version")


@check("driver")
def driver_image_foreign_to_node(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The driver container cannot find the node's kernel (it looks up packages named after
    it, "Unable to locate package linux-objects-nvidia-535-server-6.1.51-talos", or cannot
    resolve or read its version) while the node runs an OS NVIDIA publishes no driver image
    for: the image is another OS's (gpu-operator#557 on Debian 11, siderolabs/talos#8402,
    Amazon Linux 2, Fedora CoreOS), so no driver of it will ever fit; the OS, not the
    repository or the headers, is at fault. On a published OS the same words are the
    kernel's (headers missing, a kernel image without a version string)."""
    node = ctx.node
    if node is None:
        return
    info = node.status.node_info
    kernel, os_image = info.kernel_version, info.os_image
    if not kernel or not os_image or _PUBLISHED_OS.search(os_image):
        return
    wanted = re.compile(rf"Unable to locate package \S*{re.escape(kernel)}\b|{_KERNEL_UNRESOLVED}")
    for sp in ctx.stack_pods(component):
        for log in ctx.logs_of(sp.pod):
            line = next((x for x in reversed(log.lines) if wanted.search(x)), None)
            if line is not None:
                ev = Evidence(log.path, f"node OS {os_image}; {line.strip()[:200]}")
                rank = ctx.kb.get("unsupported_os").specificity
                yield problem(component, "unsupported_os", ev, specificity=rank)
                return


def _registration_failed(gpus: Iterable[GpuInfo]) -> str:
    """The GPUs whose fabric state is Completed with another status than Success."""
    bad = [f"{g.pci_bus_id}: fabric.status={g.fabric_status}" for g in gpus
           if g.fabric_state == "Completed" and g.fabric_status not in (None, "Success")]
    return "; ".join(bad[:4]) + (f" (+{len(bad) - 4} more)" if len(bad) > 4 else "")


@check("fabric-manager", needs=("cmd/nvidia-smi-q.xml",))
def fabric_state(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """NVSwitch systems report a fabric state per GPU; others report none."""
    smi = ctx.nvidia_smi
    if smi is None:
        return
    states = set(filter(None, map(_FABRIC_STATE, smi.gpus))) - _NO_STATE  # (in C: no comprehension)
    path = ctx.obs.path_of("cmd", "nvidia-smi-q.xml")
    if not states:
        yield not_deployed(component, "no NVSwitch fabric on this node")
    elif states <= _FABRIC_OK and (failed := _registration_failed(smi.gpus)):
        # Completed with an error status: Fabric Manager ran, the GPU did not join
        yield problem(component, "fabric_registration_failed", Evidence(path, failed), specificity=75)
    elif states <= _FABRIC_OK:
        yield ok(component, "fabric state Completed on all GPUs", Evidence(path, "fabric.state=Completed"))
    else:
        bad = sorted(states - _FABRIC_OK)
        ev = Evidence(path, f"fabric.state={', '.join(bad)}")
        yield problem(component, "fabric_manager_not_running", ev)


#: Readers in C for the node pass (a comprehension is a function of its own a node).
_FABRIC_STATE = attrgetter("fabric_state")
_NO_STATE = frozenset({"N/A"})


#: nvidia-smi's return codes that name a cause by themselves (nvidia-smi(1), RETURN VALUE):
#: 9 the NVIDIA driver is not loaded, 12 the NVML shared library could not be found, 14 the
#: infoROM is corrupted, 15 the GPU has fallen off the bus. Others (2 bad argument, 3 not
#: supported, 4 no permission, 6 query unsuccessful, 255 other) name none.
SMI_RETURN_CODES = {9: "driver_not_loaded", 12: "nvml_library_missing", 14: "inforom_corrupted",
                    15: "gpu_fallen_off_bus"}
#: The validator's init container that runs nvidia-smi to judge the driver (on the host or in
#: the driver's root): every exit status it reports is nvidia-smi's.
_SMI_RUNNER = "driver-validation"
_EXIT_STATUS = lazy_compile(r"\bexit (?:status|code):? (?P<code>\d{1,3})\b")


@check("driver", may_find=pods_here("validator"))
@check("gpu-hardware", may_find=pods_here("validator"))
def smi_return_code(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """nvidia-smi's return code as the validator's driver check reports it ("No pre-installed
    driver detected on the host: exit status 14", NVIDIA/gpu-operator#2596: nvidia-smi printed
    its table and exited 14 for a corrupted infoROM): the code names the cause, on the
    component it belongs to, while that check has not passed. The validator only waits for
    the layer the code names."""
    for pod in (sp.pod for sp in ctx.stack_pods("validator")):
        if _smi_check_passed(pod):
            continue
        for log in ctx.logs_of(pod):
            found = _smi_exit(log.lines, log.container == _SMI_RUNNER)
            if found is None:
                continue
            code, at = found
            known = ctx.kb.get(SMI_RETURN_CODES[code])
            if known.component == component:
                line = log.lines[at].strip()
                said = line_finding(ctx.kb, component, known.severity, Decisive(at + 1, line, 2),
                                    f"{log.path}:{at + 1}", verb="fails in nvidia-smi",
                                    specificity=known.specificity, standalone="true")
                yield msgspec.structs.replace(said, cause=known.code)
            return


def _smi_check_passed(pod: Pod) -> bool:
    """The validator's driver check ended well (its init container completed)."""
    for cs in pod.status.init_container_statuses:
        done = cs.state.terminated
        if cs.name == _SMI_RUNNER and done is not None and done.exit_code == 0:
            return True
    return False


def _smi_exit(lines: Iterable[str], runner: bool) -> tuple[int, int] | None:
    """(nvidia-smi's return code, line index) of the last line that reports one: any exit
    status in the container that runs nvidia-smi, else a line that names nvidia-smi."""
    found: tuple[int, int] | None = None
    for index, line in enumerate(lines):
        status = _EXIT_STATUS.search(line)
        if status is None or not (runner or "nvidia-smi" in line):
            continue
        code = int(status["code"])
        found = (code, index) if code in SMI_RETURN_CODES else None
    return found
