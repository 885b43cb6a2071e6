"""A node whose driver never loaded, read from the driver's own installer.

Where the node's facts show no NVIDIA driver loaded (lsmod lists no ``nvidia`` module and
nothing shows the driver answering: no nvidia-smi table or ``-q`` driver version, no
``/proc/driver/nvidia/version``), what the driver's installer said is the driver's own word
on why, and the components above it (a toolkit or validator waiting in its driver check, a
device plugin advertising nothing, an init container waiting for the driver's libraries) are
blocked by it:

- the host installer's log (``/var/log/nvidia-installer.log``, which nvidia-installer writes
  on every run and the probe keeps), read for its decisive line: a catalogued cause of the
  driver whose signature for that file, or for the driver container's log (where the GPU
  Operator runs the same nvidia-installer), matches a line of it, else the class of the line
  that ends the run as a failure (nvidia-installer's ``ERROR:`` lines, DKMS's and make's);
- DKMS's build log of the NVIDIA module (``/var/lib/dkms/nvidia/<version>/build/make.log``, or
  under the module's other DKMS names, ``nvidia-open`` among them, gpunode.parse.dkms;
  the file DKMS names when the module's build fails: "Error! Bad return status for module
  build on kernel: ... Consult /var/lib/dkms/<module>/<version>/build/make.log for more
  information."), newest version first, and Portage's build log of Gentoo's nvidia-drivers
  package (``/var/tmp/portage/x11-drivers/nvidia-drivers-<version>/temp/build.log``): they
  hold kbuild's output for the same sources nvidia-installer and the driver container build,
  so the driver's signatures for their words read them (the kernel's compiler check, "***
  Failed CC version check. Bailing out! ***"), else the class of their decisive line (make's
  "*** [target] Error N" passed over for the failed command's own output). It also says why
  where the installer's own log gives only a class (nvidia-installer quotes DKMS's failure
  and points at this file);
- the host's syslog as the probe keeps it (``/var/log/messages``, ``/var/log/syslog``: only
  the lines that name the GPU or its driver, gpunode.parse.syslog), where configuration
  management or a provisioning script that installs the driver logs: a line there that names
  a catalogued cause of the driver in the driver container's words (a repository it could not
  reach, ComputeCanada/puppet-magic_castle#91's Puppet agent). Only a catalogued cause: the
  host's other lines that mention a GPU are no verdict on the driver;
- GKE's driver installer, the init container ``nvidia-driver-installer`` (the name GKE's
  installer DaemonSets give it, GoogleCloudPlatform/container-engine-accelerators
  nvidia-driver-installer/cos/daemonset-preloaded.yaml, and the one GKE's managed device
  plugin pods run before the plugin), not finished: its log's catalogued line or decisive
  line, else, with nothing said, the driver not loaded.

A bundle without lsmod (no node files collected) says nothing of the module: the driver
stays as its other checks find it. A log of an old run on a node whose driver is loaded now
is history, not a verdict.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

import msgspec

from gpunode.bundle.kube import ContainerStatus, Pod
from gpunode.checks.base import check, problem, reads
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import line_finding
from gpunode.checks.kernel import kernel_failure_owners, refused_module_owner
from gpunode.checks.persistenced import UNIT_WORDS, last_failed_start
from gpunode.decisive import Decisive, decisive_line, without_prefix
from gpunode.kb import Cause, KnowledgeBase, Match
from gpunode.model import Evidence, Finding, Status
from gpunode.parse.dkms import MAKE_LOG_NAME, PORTAGE_LOG_NAME, version_order
from gpunode.parse.syslog import SYSLOG_FILES, names_gpu_driver
from gpunode.relazy import lazy_compile

#: The host installer's log as the probe keeps it (gpunode.probe.host.INSTALLER_LOG).
INSTALLER_LOG = "var/log/nvidia-installer.log"
#: The GPU Operator's driver container, which runs nvidia-installer (NVIDIA/gpu-driver-container).
DRIVER_CONTAINER = "nvidia-driver-ctr"
#: The driver installer's init container in GKE's installer DaemonSets and device plugin pods.
INSTALLER_CONTAINER = "nvidia-driver-installer"
#: The loaded module's own version file (present exactly while nvidia.ko is loaded).
_VERSION_FILE = "proc/driver/nvidia/version"
#: nvidia-smi's table naming the driver it reached.
_SMI_ANSWERS = lazy_compile(r"Driver Version: *\d")
#: nvidia-installer's closing line after any failed install (NVIDIA/nvidia-installer
#: install-from-cwd.c: "Installation has failed.  Please see the file '%s' for details. ..."):
#: it names no reason; the line before it that reads as a failure does.
_CLOSING_SUMMARY = lazy_compile(r"^\s*(?:ERROR: )?Installation has failed\.")
#: The cause of a driver installer that has not finished on a node without a driver, where it
#: said nothing more.
_NOT_LOADED = "driver_not_loaded"
_INCOMPATIBLE = "driver_kernel_incompatible"


def _not_loaded(ctx: NodeContext, component: str, evidence: Evidence) -> Finding:
    """The driver_not_loaded finding on ``evidence``, at its catalogued specificity: the one
    answer every reading of this module gives once its own line settled that the module is
    absent."""
    cause = ctx.kb.get(_NOT_LOADED)
    return problem(component, _NOT_LOADED, evidence,
                   specificity=cause.specificity if cause is not None else 0)


def driver_never_loaded(ctx: NodeContext) -> bool:
    """The node's facts show no NVIDIA driver loaded: lsmod was collected and lists no
    ``nvidia`` module, and nothing shows the driver answering. False where lsmod is absent
    (unknown, not failed)."""
    modules = ctx.modules
    if modules is None or "nvidia" in modules:
        return False
    if _VERSION_FILE in ctx.obs.files:
        return False
    smi = ctx.nvidia_smi
    if smi is not None and smi.driver_version:
        return False
    table = ctx.obs.cmd.get("nvidia-smi.txt")
    return table is None or _SMI_ANSWERS.search(table) is None


@check("driver", needs=("cmd/lsmod.txt",))
def installer_stopped(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The driver's installer says why a node without a loaded driver has none."""
    if not driver_never_loaded(ctx):
        return
    found = _installer_log(ctx, component)
    if found is None or found.cause in {cls.code for cls, _ in ctx.kb.classes}:
        found = _dkms_make_log(ctx, component) or found
    found = (found or _installer_container(ctx, component) or _syslog(ctx, component)
             or _operand_nvml_down(ctx, component) or _driver_unit_failed(ctx, component)
             or _waits_for_driver(ctx, component) or _install_skipped(ctx, component))
    if found is not None:
        yield found


#: The operands that load NVML in their own pods (the device plugin, GFD, the DCGM exporter,
#: the MIG manager).
_NVML_OPERANDS = ("device-plugin", "gfd", "dcgm-exporter", "mig-manager")
#: NVML's initialisation failing with no reason given, or with NVML's own word that the driver
#: is not loaded (NVML_ERROR_DRIVER_NOT_LOADED, nvmlErrorString "Driver Not Loaded"): the
#: device plugin's "Failed to initialize NVML" (NVIDIA/k8s-device-plugin's NVML resource
#: manager), as a line of its own or after a log prefix.
_NVML_DOWN = lazy_compile(r"\bFailed to initialize NVML(?::? *(?:Driver Not Loaded|ERROR_DRIVER_NOT_LOADED))?"
                          r"\.?\s*$")
#: A GPU operand's own word that the node's GPU driver is not ready or not installed (CCE AI
#: Suite's nvidia-gpu-device-plugin: "gpu driver wasn't ready. will re-check in 5s", the Open
#: Telekom Cloud / Huawei Cloud CCE FAQ "What Can I Do If a GPU Card Is Unavailable on a GPU
#: Node?", whose branch for it is a driver installation that never completed).
_DRIVER_NOT_READY = lazy_compile(
    r"(?i:\b(?:gpu|nvidia) driver (?:is not|isn.t|was not|wasn.t|not) (?:yet )?(?:ready|installed|loaded)\b)")


def _operand_nvml_down(ctx: NodeContext, component: str) -> Finding | None:
    """An NVML operand's log saying NVML could not initialise, with no reason or because the
    driver is not loaded, on a node whose driver never loaded: the operand is blocked by the
    driver, which is not loaded (madhank93/homelab's device plugin page: a Talos node not
    installed from the image with the NVIDIA kernel-module extension, its plugin failing to
    initialise NVML until the node is re-provisioned). The operand's own word that the GPU
    driver is not ready or installed (``_DRIVER_NOT_READY``) says the same. A reason that names
    something else (a library not found, insufficient permissions, an unknown error) is not
    read here."""
    cause = ctx.kb.get(_NOT_LOADED)
    for operand in _NVML_OPERANDS:
        for sp in ctx.stack_pods(operand):
            for log in ctx.logs_of(sp.pod):
                index = next((i for i in range(len(log.lines) - 1, -1, -1)
                              if ("initialize NVML" in log.lines[i] and _NVML_DOWN.search(log.lines[i]))
                              or ("river" in log.lines[i] and _DRIVER_NOT_READY.search(log.lines[i]))), None)
                if index is None:
                    continue
                said = f"{operand}: {log.lines[index].strip()[:300]} (no NVIDIA module loaded)"
                return problem(component, _NOT_LOADED, Evidence(f"{log.path}:{index + 1}", said),
                               specificity=cause.specificity if cause is not None else 0)
    return None


#: The conflict a loaded driver makes with an install over it.
_CONFLICT = "host_driver_conflict"
#: nvidia-installer's abort (its ERROR: prefix; the same words as a WARNING: go on to unload).
_INSTALLER_ERROR = lazy_compile(r"^\s*ERROR: ")
#: The installer's own word that a run installed the driver (install-from-cwd.c: "Installation of
#: the NVIDIA Accelerated Graphics Driver for Linux-x86_64 (version: 550.54.15) is now complete.").
_INSTALLED = lazy_compile(r"(?i)\bInstallation of the NVIDIA .{0,200}\bis now complete\b")


@check("driver", may_find=reads(f"files/{INSTALLER_LOG}"))
def installer_refused_loaded(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The host installer's last run aborted because an NVIDIA module it was to replace is
    loaded ("ERROR: An NVIDIA kernel module 'nvidia' appears to already be loaded in your
    kernel", NVIDIA/nvidia-installer kernel.c): on a node whose driver is loaded that module
    is the driver the install did not replace, the catalogued conflict with a driver already
    loaded, which the loaded module confirms rather than contradicts. A node without a loaded
    driver is ``installer_stopped``'s; a log whose run then installed the driver, or whose
    words are the installer's warning that goes on to unload, says nothing here."""
    if driver_never_loaded(ctx):
        return
    split = ctx.text_lines("files", INSTALLER_LOG)
    conflict = ctx.kb.get(_CONFLICT)
    if split is None or conflict is None:
        return
    lines = split[0]
    signed = [(c, m) for c, m in _installer_signatures(ctx.kb, component) if c is conflict]
    index = next((i for i in range(len(lines) - 1, -1, -1)
                  if _INSTALLER_ERROR.search(lines[i]) and any(m.regex.search(lines[i]) for _, m in signed)),
                 None)
    if index is None or any(_INSTALLED.search(line) for line in lines[index:]):
        return
    where = ctx.obs.path_of("files", INSTALLER_LOG)
    said = line_finding(ctx.kb, component, Status.FAILED, Decisive(index + 1, lines[index].strip(), 2),
                        f"{where}:{index + 1}", verb="refuses to install over the loaded driver")
    yield msgspec.structs.replace(said, cause=conflict.code, specificity=conflict.specificity)


def _installer_log(ctx: NodeContext, component: str) -> Finding | None:
    """The host installer log's decisive line: a catalogued cause of the driver for that
    file, else the class of the line that ends its run as a failure."""
    split = ctx.text_lines("files", INSTALLER_LOG)
    if split is None:
        return None
    lines = split[0]
    where = ctx.obs.path_of("files", INSTALLER_LOG)
    return _said(ctx.kb, component, lines, where, _installer_signatures(ctx.kb, component),
                 verb="stops installing", summary=_CLOSING_SUMMARY)


#: modprobe finding no NVIDIA module in a kernel's module tree ("modprobe: FATAL: Module nvidia
#: not found in directory /lib/modules/6.8.0-1015-aws", compiler-explorer/infra#1413;
#: NVIDIA/nvidia-docker#365), the release named by the directory.
_NO_MODULE = lazy_compile(r"\bmodprobe: FATAL: Module nvidia\b[\w-]{0,20} not found in directory "
                          r"/lib/modules/(?P<release>[^\s/]+)")


def _syslog(ctx: NodeContext, component: str) -> Finding | None:
    """A line of the host's syslog (its lines that name the GPU or its driver) in which the
    driver's signatures for nvidia-installer's and the driver container's words name a cause;
    else modprobe's word that no NVIDIA module exists for the kernel the node runs
    (``_module_absent``), else the loader's refusal of the driver's module (``_loader_refused``)."""
    absent: Finding | None = None
    for name in SYSLOG_FILES:
        split = ctx.text_lines("files", name.lstrip("/"))
        if split is None:
            continue
        lines = [line if names_gpu_driver(line) else "" for line in split[0]]
        where = ctx.obs.path_of("files", name.lstrip("/"))
        said = _said(ctx.kb, component, lines, where,
                     _installer_signatures(ctx.kb, component), verb="is not installed", classes=False)
        if said is not None:
            return said
        absent = (absent or _module_absent(ctx, component, lines, where)
                  or _loader_refused(ctx, component, lines, where))
    return absent


def _driver_unit_failed(ctx: NodeContext, component: str) -> Finding | None:
    """The persistence daemon's unit failing to start, in the host's syslog (in the journal's
    form or the boot console's, ``persistenced.last_failed_start``), on a node whose driver
    never loaded: the daemon opens the driver's device files and exits where no module made
    them, so its failure says only that the driver is not loaded (Scaleway's GPU Instances
    troubleshooting, "Fixing GPU issues after upgrading GPU Instances with cloud-init": a
    first-boot dist-upgrade breaks the driver packages, the driver is not loaded and the journal
    shows this line; NVIDIA/nvidia-persistenced's setup_devices fails with NVPD_ERR_DRIVER
    without the device files). A node whose driver is loaded reads the daemon's own words
    instead (checks.persistenced)."""
    for name in SYSLOG_FILES:
        split = ctx.text_lines("files", name.lstrip("/"))
        if split is None or not any(word in split[1] for word in UNIT_WORDS):
            continue
        index = last_failed_start(split[0])
        if index is not None:
            line = split[0][index]
            where = f"{ctx.obs.path_of('files', name.lstrip('/'))}:{index + 1}"
            said = f"no NVIDIA module loaded, and its persistence daemon failed: {line.strip()[:300]}"
            return _not_loaded(ctx, component, Evidence(where, said))
    return None


#: A service held back until a path that only the loaded driver makes exists: the ``nvidia``
#: PCI driver's sysfs directory (made when the module registers its PCI driver), the module's
#: own sysfs or proc directory, or its device files, in the wait condition's words (Talos's
#: service table and console: 'Waiting for file "/sys/bus/pci/drivers/nvidia" to exist').
_WAITS_FOR_DRIVER = lazy_compile(
    r"\b[Ww]aiting for (?:file |path |device )?[\"']?(?:/sys/bus/pci/drivers/nvidia|/sys/module/nvidia|"
    r"/proc/driver/nvidia|/dev/nvidia(?:ctl|\d+))(?:[\"'\s]|$).{0,40}?\bto (?:exist|appear)\b")
_DMESG = "dmesg.txt"


def _waits_for_driver(ctx: NodeContext, component: str) -> Finding | None:
    """A service on a node whose driver never loaded that waits for a path the loaded driver
    makes (``_WAITS_FOR_DRIVER``), in the kernel log or console the node keeps or its syslog:
    it waits for the driver, which is not loaded (dmwoods38/homelab-gitops's Talos GPU guide,
    "Node Stuck in booting Stage": with no NVIDIA module listed in the machine config the
    ext-nvidia-persistenced extension service waits for ``/sys/bus/pci/drivers/nvidia`` for ever
    and the node never leaves the booting stage). The same wait on a node whose driver is
    loaded is a moment of its boot, not read here."""
    sources = [("cmd", _DMESG), *(("files", name.lstrip("/")) for name in SYSLOG_FILES)]
    for kind, name in sources:
        split = ctx.text_lines(kind, name)
        if split is None or "nvidia" not in split[1]:
            continue
        for index, line in enumerate(split[0]):
            if "aiting for" in line and _WAITS_FOR_DRIVER.search(line):
                said = f"no NVIDIA module loaded, and a service waits for it: {line.strip()[:300]}"
                return _not_loaded(ctx, component,
                                   Evidence(f"{ctx.obs.path_of(kind, name)}:{index + 1}", said))
    return None


#: A provisioning script's word that it ends or goes on without installing the GPU driver
#: (kops's nvidia-device-plugin hook, hooks/nvidia-device-plugin in kubernetes/kops: on an
#: instance type its table does not list it prints "This machine is an AWS instance, but not a
#: GPU instance" and "Exiting without installing GPU drivers", kubernetes/kops#6538).
_INSTALL_SKIPPED = lazy_compile(
    r"(?i:\b(?:without installing|not installing|skip(?:s|ping|ped)? (?:the )?install(?:ing|ation)?(?: of)?)"
    r" (?:the |any )?(?:nvidia |gpu |cuda ){1,2}drivers?\b)")
#: A shell's xtrace of the command that prints the line (``set -x``: "+++ echo '...'").
_XTRACE = lazy_compile(r"^\++ ")


def _install_skipped(ctx: NodeContext, component: str) -> Finding | None:
    """A line of the node's journals (``cmd/journal-*.txt``) or syslog, on a node whose driver
    never loaded, in which a boot or provisioning script says it ends or goes on without
    installing the GPU driver (``_INSTALL_SKIPPED``): the driver was never installed, so it is
    not loaded. The script's reason (an instance type it does not know) is its own; the node's
    fact is the driver's absence. The same words on a node whose driver is loaded (a script that
    skips an install because one is there) are not read here."""
    sources = [("cmd", name) for name in sorted(ctx.obs.cmd) if name.startswith("journal-")]
    sources += [("files", name.lstrip("/")) for name in SYSLOG_FILES]
    for kind, name in sources:
        split = ctx.text_lines(kind, name)
        if split is None or "install" not in split[1]:
            continue
        for index in range(len(split[0]) - 1, -1, -1):
            line = split[0][index]
            if "install" not in line or _XTRACE.match(without_prefix(line)):
                continue
            if _INSTALL_SKIPPED.search(line):
                said = f"no NVIDIA module loaded, and its install was skipped: {line.strip()[:300]}"
                return _not_loaded(ctx, component,
                                   Evidence(f"{ctx.obs.path_of(kind, name)}:{index + 1}", said))
    return None


def _loader_refused(ctx: NodeContext, component: str, lines: Sequence[str],
                    where: str) -> Finding | None:
    """The module loader's own refusal of one of the driver's modules in the host's syslog, as
    the boot's or an install script's modprobe or insmod printed it there ("modprobe: ERROR:
    could not insert 'nvidia_drm': No such device", the AlmaLinux wiki's NVIDIA page: the
    precompiled kmod was built for the newest kernel installed, not the older one still
    running; kmod's "could not insert" with the kernel's errno), on a node whose driver never
    loaded: the driver's module was refused, read in its class (error_module_load). The last
    such line counts. Where the kernel's log holds the driver's own failure line (why the
    loader was refused: a relocation, a symbol, a signature), that line is the reading
    (``kernel.kernel_failures``) and nothing is said here."""
    if "driver" in kernel_failure_owners(ctx):
        return None
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index]
        if line and refused_module_owner(line) == "driver":
            found = Decisive(index + 1, line.strip(), 2)
            return line_finding(ctx.kb, component, Status.FAILED, found, f"{where}:{index + 1}",
                                verb="is refused by the module loader")
    return None


def _module_absent(ctx: NodeContext, component: str, lines: Sequence[str], where: str) -> Finding | None:
    """modprobe's "Module nvidia not found in directory /lib/modules/<release>" in the host's
    syslog of a node whose driver never loaded, the release the node runs (or not read): no
    NVIDIA module was built or installed for the booted kernel, so a boot script's modprobe
    finds none and the driver is not loaded (compiler-explorer/infra#1413: an image rebuilt
    with a new runfile driver, its instances failing at startup on this line for the AWS
    kernel; NVIDIA/nvidia-docker#365: the module gone after a kernel upgrade). A line for
    another release (a module tree the node does not boot) says nothing here."""
    running = ctx.node.status.node_info.kernel_version.strip() if ctx.node is not None else ""
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index]
        if "FATAL" not in line:
            continue
        found = _NO_MODULE.search(line)
        if found is None or (running and found["release"] != running):
            continue
        said = f"no NVIDIA module for the running kernel: {line.strip()[:300]}"
        return _not_loaded(ctx, component, Evidence(f"{where}:{index + 1}", said))
    return None


#: make's own report of a recipe that failed ("make[1]: *** [Makefile:219: dp_auxretry.o] Error
#: 127", GNU make's "*** [target] Error N" for a command's exit status N) and of its wait for
#: the other jobs: they name the target, not why its command failed; the command's own output
#: before them does ("/bin/sh: line 1: g++: command not found", NVIDIA/open-gpu-kernel-modules#805).
_MAKE_RECIPE_FAILED = lazy_compile(
    r"^\s*g?make(?:\[\d+\])?: \*\*\* (?:\[[^\]]{0,300}\] Error \d+|Waiting for unfinished jobs)")


#: The compiler's error in a C source or header of the tree DKMS builds (gcc's and clang's
#: "<file>:<line>:<column>: error: ..."), however the build names the file: kbuild prints the
#: module's own sources relative to its tree where make runs in it ("nv-pci.c:237:9: error: too
#: few arguments to function 'pci_resize_resource'", NVIDIA/open-gpu-kernel-modules#1272's
#: make.log on Debian's 6.12.100 kernel; truenas/scale-build#1002 with 570.172.08 on 6.12.97)
#: and by their full path elsewhere (#469). A DKMS make.log of the NVIDIA module holds nothing
#: but that module's build against the kernel, so such an error is its sources not fitting the
#: kernel's interfaces; a header the compiler could not open ("fatal error: ...") is not this.
_TREE_COMPILE_ERROR = r"^\s*(?:\S{0,300}/)?[\w.+-]{1,100}\.[ch]:\d+:\d+: error: "


def _tree_signatures(kb: KnowledgeBase) -> tuple[tuple[Cause, Match], ...]:
    """driver_kernel_incompatible for a compile error of the DKMS tree's own sources."""
    cause = kb.get(_INCOMPATIBLE)
    return ((cause, Match(source="log", pattern=_TREE_COMPILE_ERROR)),) if cause is not None else ()


def _dkms_make_log(ctx: NodeContext, component: str) -> Finding | None:
    """The newest DKMS build log of the NVIDIA module that reads as a failure: a catalogued
    cause of the driver for nvidia-installer's words (and a compile error of the tree's own
    sources, ``_TREE_COMPILE_ERROR``, in DKMS's log), else the class of its decisive line
    (make's own recipe failures passed over where a line of the commands it ran reads as one)."""
    logs = sorted(((version_order(m[m.lastindex or 1]), name) for name in ctx.obs.files
                   if (m := MAKE_LOG_NAME.match(name) or PORTAGE_LOG_NAME.match(name)) is not None),
                  reverse=True)
    for _, name in logs:
        split = ctx.text_lines("files", name)
        if split is None:
            continue
        signed = _installer_signatures(ctx.kb, component)
        if MAKE_LOG_NAME.match(name):
            signed = (*signed, *_tree_signatures(ctx.kb))
        said = _said(ctx.kb, component, split[0], ctx.obs.path_of("files", name),
                     signed, verb="stops building its module", summary=_MAKE_RECIPE_FAILED)
        if said is not None:
            return said
    return None


def _installer_signatures(kb: KnowledgeBase, component: str) -> tuple[tuple[Cause, Match], ...]:
    """The driver's signatures for nvidia-installer's words: those of the host installer's log,
    and those of the driver container's log (or of any log of the driver), where the GPU
    Operator's driver container runs the same nvidia-installer and prints the same lines."""
    own = [(c, m) for c, m in kb.matchers(component, "node_file") if m.name == INSTALLER_LOG]
    ran = [(c, m) for c, m in kb.matchers(component, "log")
           if not m.containers or DRIVER_CONTAINER in m.containers]
    return (*own, *ran)


def _installer_container(ctx: NodeContext, component: str) -> Finding | None:
    """GKE's driver installer init container, not finished on this node, in its own words."""
    for sp in ctx.facts.pods_by_node.get(ctx.name, {}).values():
        for stack in sp:
            status = _unfinished(stack.pod)
            if status is None:
                continue
            pod = stack.pod
            log = next((lf for lf in ctx.logs_of(pod) if lf.container == INSTALLER_CONTAINER
                        and not lf.previous), None)
            where = (log.path if log is not None
                     else f"pod/{pod.metadata.namespace}/{pod.metadata.name} initContainerStatuses")
            verb = f"installer {INSTALLER_CONTAINER} does not finish"
            quoted = tuple((c, m) for c, m in ctx.kb.matchers(component, "log") if not m.containers)
            said = _said(ctx.kb, component, log.lines if log is not None else (), where, quoted,
                         verb=verb)
            if said is not None:
                return said
            state = _state_word(status)
            return _not_loaded(ctx, component, Evidence(where, f"{INSTALLER_CONTAINER}: {state}"))
    return None


def _unfinished(pod: Pod) -> ContainerStatus | None:
    """The pod's driver installer init container where it has not completed."""
    for status in pod.status.init_container_statuses:
        if status.name != INSTALLER_CONTAINER:
            continue
        done = status.state.terminated
        return None if done is not None and done.exit_code == 0 else status
    return None


def _state_word(status: ContainerStatus) -> str:
    state = status.state
    if state.waiting is not None:
        return state.waiting.reason or "waiting"
    if state.terminated is not None:
        return f"exited {state.terminated.exit_code}"
    return "running"


def _said(kb: KnowledgeBase, component: str, lines: Sequence[str], where: str,
          signed: Sequence[tuple[Cause, Match]], *, verb: str,
          summary: re.Pattern[str] | None = None, classes: bool = True) -> Finding | None:
    """The line that names a catalogued cause (the most specific; the last of equals), else
    the decisive line in its class; None where no line reads as a failure. ``summary``: the
    program's closing line that only points at its log, passed over where another line
    reads as a failure. ``classes``: False where only a catalogued cause is a verdict."""
    best: tuple[Cause, int] | None = None
    for index, line in enumerate(lines):
        for cause, match in signed:
            if not match.regex.search(line) or (match.unless_regex and match.unless_regex.search(line)):
                continue
            if not kb.fits(cause, line, match):
                continue
            if best is None or cause.specificity >= best[0].specificity:
                best = (cause, index)
    if best is not None:
        cause, index = best
        at = f"{where}:{index + 1}"
        found = Decisive(index + 1, lines[index].strip(), 2)
        said = line_finding(kb, component, Status.FAILED, found, at, verb=verb)
        return msgspec.structs.replace(said, cause=cause.code, specificity=cause.specificity)
    if not classes:
        return None
    told = [("" if summary is not None and summary.search(line) else line) for line in lines]
    decided = decisive_line(told, kb.class_of) or decisive_line(lines, kb.class_of)
    if decided is None:
        return None
    return line_finding(kb, component, Status.FAILED, decided, f"{where}:{decided.line_no}", verb=verb)
