"""Layer 0 checks: kubelet, container runtime, kernel and the GPUs themselves."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from gpunode.checks.base import check, ok, problem, reads, unknown
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import line_finding
from gpunode.decisive import MAX_LINE, Decisive
from gpunode.errors import ParseError
from gpunode.model import Evidence, Finding, Status
from gpunode.parse.containerd import OptionSpellings, option_spellings
from gpunode.parse.nvidia_smi import GpuInfo
from gpunode.relazy import lazy_compile

_PRESSURE = ("MemoryPressure", "DiskPressure", "PIDPressure")


@check("kubelet", needs=("node",))
def kubelet_ready(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """Node Ready condition: Unknown means the kubelet stopped reporting."""
    assert ctx.node is not None
    ready = ctx.ready_condition
    where = f"node/{ctx.name} status.conditions[Ready]"
    if ready is None:
        yield unknown(component, "node has no Ready condition")
    elif ready.status == "True":
        version = ctx.node.status.node_info.kubelet_version
        yield ok(component, f"Ready, kubelet {version}", Evidence(where, ready.reason))
    elif ready.status == "Unknown":
        ev = Evidence(where, f"{ready.reason}: {ready.message}")
        yield problem(component, "node_not_ready", ev)
    for cond in ctx.node.status.conditions:
        if cond.type in _PRESSURE and cond.status == "True":
            ev = Evidence(f"node/{ctx.name} status.conditions[{cond.type}]", cond.message)
            yield problem(component, "node_pressure", ev, status=Status.DEGRADED)


def runtime_down_message(ctx: NodeContext) -> str | None:
    """The kubelet's Ready=False message when it says the container runtime is down."""
    ready = ctx.ready_condition
    if ready is not None and ready.status == "False" and "runtime" in ready.message:
        return ready.message
    return None


@check("container-runtime", needs=("node",))
def runtime_status(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """Ready=False with a runtime message means the runtime, not the kubelet, is down."""
    assert ctx.node is not None
    ready = ctx.ready_condition
    runtime = ctx.node.status.node_info.container_runtime_version
    where = f"node/{ctx.name} status.conditions[Ready]"
    down = runtime_down_message(ctx)
    if down is not None:
        yield problem(component, "container_runtime_down", Evidence(where, down))
    elif ready is not None and ready.status == "True" and runtime:
        ev = Evidence(f"node/{ctx.name} status.nodeInfo.containerRuntimeVersion", runtime)
        yield ok(component, runtime, ev)


@check("kernel", needs=("node",))
def kernel_reported(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The kernel runs if the node reports; its fitness is judged by the driver."""
    assert ctx.node is not None
    version = ctx.node.status.node_info.kernel_version
    if version and ctx.node_reporting:
        ev = Evidence(f"node/{ctx.name} status.nodeInfo.kernelVersion", version)
        yield ok(component, version, ev)


@check("gpu-hardware", needs=("cmd/nvidia-smi-q.xml",))
def gpus_present(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """nvidia-smi sees as many GPUs as the node should have, none with pending ECC repair."""
    smi = ctx.nvidia_smi
    path = ctx.obs.path_of("cmd", "nvidia-smi-q.xml")
    if smi is None:
        error = ctx.parse_errors.get("cmd/nvidia-smi-q.xml", "")
        yield unknown(component, "nvidia-smi output could not be parsed", Evidence(path, error))
        return
    expected = ctx.expected_gpus or smi.attached_gpus
    if smi.attached_gpus < expected:
        ev = Evidence(path, f"attached_gpus={smi.attached_gpus}, node should have {expected}")
        yield problem(component, "gpu_missing", ev)
    for gpu in smi.gpus:
        yield from _gpu_memory(component, path, gpu)
    if smi.attached_gpus < expected:
        return
    seen = Evidence(path, f"attached_gpus={smi.attached_gpus}")
    ambiguous = ctx.gpu_count_ambiguous
    if ambiguous:  # shared replicas or missing GPUs: never a verdict without the config
        capacity = ctx.node.status.capacity.get("nvidia.com/gpu", "") if ctx.node else ""
        yield unknown(component, ambiguous, seen, Evidence(f"node/{ctx.name} status.capacity",
                                                           f"nvidia.com/gpu={capacity}"))
        return
    product = smi.gpus[0].product_name if smi.gpus else "GPU"
    yield ok(component, f"{smi.attached_gpus}x {product}", seen)


def _gpu_memory(component: str, path: str, gpu: GpuInfo) -> Iterator[Finding]:
    bus = gpu.pci_bus_id
    if gpu.ecc_volatile_dbe:
        ev = Evidence(path, f"GPU {bus}: volatile uncorrectable ECC errors = {gpu.ecc_volatile_dbe}")
        yield problem(component, "uncorrectable_ecc", ev)
    if gpu.remapped_rows_failure:
        ev = Evidence(path, f"GPU {bus}: row remapping failure occurred")
        yield problem(component, "row_remap_failure", ev)
    elif gpu.remapped_rows_pending:
        ev = Evidence(path, f"GPU {bus}: remapped rows pending (reset required)")
        yield problem(component, "uncorrectable_ecc", ev, status=Status.DEGRADED)


@check("gpu-hardware", needs=("cmd/nvidia-smi-q.xml",))
def mig_mode_settled(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A MIG mode change takes effect only after a GPU reset; until then it is pending."""
    smi = ctx.nvidia_smi
    if smi is None:
        return
    path = ctx.obs.path_of("cmd", "nvidia-smi-q.xml")
    for gpu in smi.gpus:
        current, pending = gpu.mig_mode_current, gpu.mig_mode_pending
        if current and pending and current != pending and "N/A" not in (current, pending):
            ev = Evidence(path, f"GPU {gpu.pci_bus_id}: MIG mode {current}, pending {pending}")
            yield problem(component, "mig_mode_change_pending", ev, status=Status.DEGRADED)


#: nvidia-smi's table: a GPU's first row (index, name, ..., its bus id) and the MIG M. cell of
#: its third row, the only row whose first two cells are empty. A mode followed by "*" is the
#: pending mode, not yet in effect ("Enabled*" after ``nvidia-smi -mig 1`` while another client
#: holds the GPU: its "Warning: MIG mode is in pending enable state ... In use by another
#: client", NVIDIA/gpu-operator#1845; "it shows enable with a *" until the reboot,
#: NVIDIA/k8s-device-plugin#343).
_TABLE_GPU = lazy_compile(r"^\|\s+\d+\s+.*\|\s+(?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:"
                          r"[0-9A-Fa-f]{2}\.[0-7])\s")
_TABLE_MIG_PENDING = lazy_compile(r"^\|\s*\|\s*\|\s*(?P<mode>Enabled|Disabled)\*\s*\|\s*$")


def _table_pending(ctx: NodeContext) -> bool:
    """Whether nvidia-smi's table shows a starred MIG mode at all (a healthy table shows none)."""
    table = ctx.obs.cmd.get("nvidia-smi.txt") or ""
    return "Enabled*" in table or "Disabled*" in table


@check("gpu-hardware", may_find=_table_pending)
def mig_mode_settled_in_table(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The same pending MIG mode in nvidia-smi's table (``_TABLE_MIG_PENDING``), where
    ``nvidia-smi -q -x`` does not already show it (``mig_mode_settled``)."""
    table = ctx.obs.cmd.get("nvidia-smi.txt") or ""
    if "*" not in table or any(g.mig_mode_pending and g.mig_mode_current
                               and g.mig_mode_pending != g.mig_mode_current for g in ctx.smi_gpus):
        return
    path = ctx.obs.path_of("cmd", "nvidia-smi.txt")
    bus = ""
    for line in table.splitlines():
        row = line.rstrip()
        if (gpu := _TABLE_GPU.match(row)) is not None:
            bus = gpu["bus"]
        elif bus and (cell := _TABLE_MIG_PENDING.match(row)) is not None:
            mode = cell["mode"]
            ev = Evidence(path, f"GPU {bus}: MIG M. {mode}* (pending {mode}, not in effect until a reset)")
            yield problem(component, "mig_mode_change_pending", ev, status=Status.DEGRADED)
            bus = ""


def runtime_config_may_fail(ctx: NodeContext) -> bool:
    """The ``may_find`` gate of the runtime configuration's checks: open where one of them may
    find anything, shut where the node's runtime setup was read, runs an NVIDIA runtime (a
    drop-in that defines one is then not left unread) that is its default or is reached
    through CDI or a RuntimeClass (no operand without the runtime), no containerd config is
    of version 3 or later (containerd 1.x cannot read one), no file of the node disables a
    plugin (the CRI one), no config is unparsed (its error) and the platform renders no
    config from a template (the toolkit told to write the rendered file). Asked once a node
    for all six, so a healthy node runs none of their code."""
    setup, config = ctx.runtime_setup, ctx.containerd
    if setup is None or not setup.nvidia or (config is not None and (config.version or 0) >= 3):
        return True
    if not setup.default_is_nvidia and (setup.runtime == "docker" or policy_cdi_enabled(ctx) is False):
        return True
    for text in ctx.obs.files.values():  # (loops, not generators: asked on every node)
        if "disabled_plugins" in text:
            return True
    for path in ctx.platform.containerd_configs or ():
        if path.endswith(".tmpl") or "template" in path.rpartition("/")[2]:
            return True
    return False


def policy_cdi_enabled(ctx: NodeContext) -> bool | None:
    """ClusterPolicy ``spec.cdi.enabled``; None where the policy does not say."""
    cdi = ctx.cluster_policy_spec.get("cdi")
    if isinstance(cdi, dict) and "enabled" in cdi:
        return bool(cdi["enabled"])
    return None


@check("container-runtime", needs=("node",), may_find=runtime_config_may_fail)
def config_version_fits_runtime(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """containerd 1.x cannot read a version 3 config (containerd 2.x writes/expects v3)."""
    config = ctx.containerd
    node = ctx.node
    if config is None or node is None or config.version is None:
        return
    runtime = node.status.node_info.container_runtime_version
    if runtime.startswith("containerd://1.") and config.version >= 3:
        source = config.sources[0] if config.sources else "/etc/containerd/config.toml"
        ev = Evidence(f"nodes/{ctx.name}/files{source}", f"version = {config.version} with {runtime}")
        yield problem(component, "containerd_config_version_mismatch", ev)


#: A runtime config file's own format refusing it (gpunode.parse: ``<path>: invalid JSON: ...``
#: for daemon.json, ``<path>: invalid TOML: ...`` for containerd's and CRI-O's files and their
#: drop-ins), with the position the parser gives ('line 3 column 5', '(at line 3, column 9)').
_SYNTAX = lazy_compile(r"^(?P<path>/\S+): invalid (?:JSON|TOML): (?P<why>.+)$", re.DOTALL)
_POSITION = lazy_compile(r"\bline (\d+)")


@check("container-runtime")
def runtime_option_spelled_twice(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """An option of one of containerd's runtime handlers set twice in one file it reads, under
    names that differ only in letter case and with different values: containerd takes the
    name in any case and keeps the last, so the handler runs with what the later writer set
    whatever the earlier one meant. The runtime's own configuration is then wrong, not the
    writer whose key lost (NVIDIA/gpu-operator#1374: Kubespray's template adds ``binaryName =
    '/usr/local/bin/runc'`` under the toolkit's ``BinaryName``, so GPU pods of the nvidia
    handler run plain runc; kubernetes-sigs/kubespray#12167)."""
    setup, config = ctx.runtime_setup, ctx.containerd
    if setup is None or setup.runtime != "containerd" or config is None:
        return
    for source in config.sources:
        text = ctx.obs.files.get(source.lstrip("/"))
        clash = next(iter(_spelled_twice(source, text)), None) if text is not None else None
        if clash is None or text is None:
            continue
        number, line = _key_line(text, clash.last)
        where = f"nodes/{ctx.name}/files{source}"
        found = Decisive(number, line[:MAX_LINE], 2)
        seen = (f"runtimes.{clash.runtime}.options sets {clash.first} and then {clash.last}: "
                f"containerd reads both as one option and keeps the last ({clash.value})")
        yield line_finding(ctx.kb, component, Status.FAILED, found, f"{where}:{number}",
                           verb="runs a handler with an option set twice", line_class=_CONFIG_CLASS,
                           evidence=(Evidence(where, seen),), standalone="true")
        return


@lru_cache(maxsize=64)
def _spelled_twice(path: str, text: str) -> tuple[OptionSpellings, ...]:
    """The file's doubly spelled handler options; none where the file does not parse (another
    check reads that) or is a template the distribution renders first. Read once per path and
    text: a pool's nodes share their runtime config byte for byte."""
    if path.endswith(".tmpl") or "{{" in text or not _may_clash(text):
        return ()
    try:
        return tuple(option_spellings(path, text))
    except ParseError:
        return ()


#: A key assignment at the start of a TOML line (bare, quoted or dotted key).
_ASSIGNED_KEY = lazy_compile(r"""^[ \t]*([\w.'"-]+?)[ \t]*=""", re.MULTILINE)


def _may_clash(text: str) -> bool:
    """Whether any two keys in the file (their last dotted part) differ only in letter case:
    a scan of the text that spares parsing it again on every node whose file cannot hold a
    clash (almost all)."""
    assigned = _ASSIGNED_KEY.findall(text)
    if len(assigned) < 2:
        return False
    unquoted = "\n".join(assigned).replace('"', "").replace("'", "")  # (one pass: no key holds a line end)
    keys = {key.rsplit(".", 1)[-1] for key in unquoted.split("\n")}
    return len(set(map(str.casefold, keys))) != len(keys)  # two keys of one folded name


def _key_line(text: str, key: str) -> tuple[int, str]:
    """The (1-based) number and text of the last line that sets ``key``."""
    setting = re.compile(rf"^\s*['\"]?{re.escape(key)}['\"]?\s*=")
    lines = text.splitlines()
    number = next((n for n in range(len(lines), 0, -1) if setting.match(lines[n - 1])), 1)
    return number, lines[number - 1].strip() if lines else key


@check("container-runtime", may_find=runtime_config_may_fail)
def runtime_config_parses(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The container runtime's own configuration that does not parse in its format (the
    node's runtime's: daemon.json on Docker, containerd's config.toml and its imports, CRI-O's
    crio.conf and drop-ins): the runtime refuses to start on it (dockerd 'unable to configure
    the Docker daemon with file /etc/docker/daemon.json', containerd 'failed to load TOML'),
    so a runtime restarted since the edit is down, and a running one goes down at its next
    restart (NVIDIA/nvidia-docker#1420: a comma missing where nvidia-docker2 merged its
    runtime into daemon.json). Judged only where the kubelet reports the runtime down: a
    runtime that runs parsed another copy of the file, and the copy in the bundle may be cut
    or damaged on its way (tests/fuzz: a damaged input counts as removed), so there it stays
    the toolkit's unknown. A Go template k3s renders (its name or its '{{' actions) is not the
    file the runtime reads, and a file that parses but holds a value gpunode does not read
    stays the toolkit's unknown."""
    if ctx.runtime_setup is not None or (error := ctx.runtime_setup_error) is None:
        return
    said = _SYNTAX.match(error[1])
    text = ctx.obs.files.get(said["path"].lstrip("/")) if said is not None else None
    if said is None or said["path"].endswith(".tmpl") or (text is not None and "{{" in text):
        return  # a template (Go's actions) is rendered before any runtime reads it
    path, why = said["path"], " ".join(said["why"].split())
    where = f"nodes/{ctx.name}/files{path}"
    at = _POSITION.search(why)
    shown = _lines_at(text, int(at.group(1))) if at is not None and text is not None else ()
    line = f"{path}: invalid {'JSON' if path.endswith('.json') else 'TOML'}: {why}"
    found = Decisive(int(at.group(1)) if at is not None else 1, line[:MAX_LINE], 2)
    if runtime_down_message(ctx) is None:
        return  # a runtime that runs read another copy: this one may be damaged in the bundle
    above_state = ctx.kb.get("container_runtime_down").specificity + 1  # the line says why it is down
    yield line_finding(ctx.kb, component, Status.FAILED, found, f"{where}:{found.line_no}" if at else where,
                       verb="cannot parse its configuration", line_class=_CONFIG_CLASS,
                       specificity=above_state,
                       evidence=tuple(Evidence(f"{where}:{n}", shown_line) for n, shown_line in shown),
                       standalone="true")


_CONFIG_CLASS = "error_config_invalid"


def _lines_at(text: str, number: int) -> tuple[tuple[int, str], ...]:
    """The file's line ``number`` and the non-blank line before it: a delimiter missing at the
    end of one line is found at the first token of the next (JSON's "Expecting ','
    delimiter"), so the fault may lie on either."""
    lines = text.splitlines()
    if not 1 <= number <= len(lines):
        return ()
    before = next((n for n in range(number - 1, 0, -1) if lines[n - 1].strip()), None)
    picked = [n for n in (before, number) if n is not None]
    return tuple((n, lines[n - 1].strip()[:MAX_LINE]) for n in picked)  # a line is shown cut, as any


#: The kubelet's own verdict on the runtime, in its journal: PLEG's relist of the runtime's
#: containers not done within its threshold ('"Skipping pod synchronization" err="PLEG is not
#: healthy: pleg was last seen active 3m11.6s ago; threshold is 3m0s"'), or the runtime's
#: status check failing ('container runtime is down'). Not the words every kubelet start logs
#: before its first relist and status check ('pleg has yet to be successful', 'container
#: runtime status check may not have completed yet'), nor PLEG's routine 'SyncLoop (PLEG)'.
_RUNTIME_STALLED = lazy_compile(r"PLEG is not healthy: pleg was last seen active \S+ ago|"
                                r"\bcontainer runtime is down\b")


@check("container-runtime", may_find=reads("cmd/journal-kubelet.txt"))
def runtime_stalled_for_kubelet(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The kubelet's journal says the runtime stopped answering it in the recent past, while
    the node's Ready condition does not say so now: the node flaps between Ready and NotReady
    on it (awslabs/amazon-eks-ami#1228: dockerd's relist stalled until dockerd was
    restarted), so the runtime is degraded with the kubelet's last such line. Where the
    condition says it, the condition's own signature reads it."""
    split = ctx.text_lines("cmd", "journal-kubelet.txt")
    if split is None or runtime_down_message(ctx) is not None or _condition_says_stalled(ctx):
        return
    lines = split[0]
    index = next((i for i in range(len(lines) - 1, -1, -1)
                  if ("PLEG" in lines[i] or "down" in lines[i]) and _RUNTIME_STALLED.search(lines[i])), None)
    if index is None:
        return
    where = f"{ctx.obs.path_of('cmd', 'journal-kubelet.txt')}:{index + 1}"
    yield problem(component, "container_runtime_down", Evidence(where, lines[index].strip()[:MAX_LINE]),
                  status=Status.DEGRADED)


def _condition_says_stalled(ctx: NodeContext) -> bool:
    """The node's Ready condition names the stall itself (its signature is read there)."""
    node = ctx.node
    return node is not None and any(c.type == "Ready" and _RUNTIME_STALLED.search(c.message)
                                    for c in node.status.conditions)
