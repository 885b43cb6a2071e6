"""Checks over the node probe's own facts (``cmd/gpunode-probe.json``, docs/probe.md).

The probe asks NVML and reads the host directly, so these checks judge layers 0-2
where no cluster data exists at all (``gpunode probe`` on a bare GPU machine, the
agent's in-memory bundle) and add the host's view where it does. Absence is only
called ``not-deployed`` when the probe could see it: never for a node the cluster
knows, and never when the host's processes were out of the probe's sight.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime

from gpunode.checks.base import ALL_POD_COMPONENTS, check, not_deployed, ok, problem, unknown
from gpunode.checks.context import NodeContext
from gpunode.checks.crio_hooks import HookFile, judge_hooks
from gpunode.checks.operator import vm_reason, vm_workload
from gpunode.checks.pcie import reading_of, shortfall
from gpunode.decisive import clipped
from gpunode.model import Evidence, Finding, Status
from gpunode.parse.k3s_template import is_template
from gpunode.parse.oci_hooks import OCI_HOOK_DIRS
from gpunode.probe import ProbeResult
from gpunode.probe.host_facts import RuntimeConfigFact
from gpunode.probe.nvml import NvmlGpu
from gpunode.relazy import lazy_compile
from gpunode.runtimes import NVIDIA_BINARY, nvidia_runtimes
from gpunode.xid import classify

PROBE_FILE = "gpunode-probe.json"
#: The kernel driver that hands a PCI function whole to a VM.
VFIO_DRIVER = "vfio-pci"
NEEDS = (f"cmd/{PROBE_FILE}",)

KUBELET_PROCESSES = ("kubelet", "k3s-server", "k3s-agent", "rke2", "kubelite")
RUNTIME_PROCESSES = ("containerd", "crio")
# Which runtime config a running Kubernetes flavour reads (RuntimeConfigFact.distribution).
_CONFIG_OF_PROCESS = {
    "kubelet": ("containerd", "k0s"),
    "k3s-server": ("k3s",),
    "k3s-agent": ("k3s",),
    "rke2": ("rke2",),
    "kubelite": ("microk8s",),
    "crio": ("cri-o",),
}
# NVML init errors that mean the driver itself does not work (docs/probe.md, "nvml").
_DRIVER_DOWN_ERRORS = frozenset({"library_not_found", "driver_not_loaded", "lib_rm_version_mismatch"})
# Init errors that say nothing about the driver, only about the probe's reach.
_UNJUDGEABLE_INIT = {
    "no_permission": "NVML refused the probe (no permission): run it as root or with the /dev/nvidia* nodes",
    "bindings_missing": "nvidia-ml-py is not installed where the probe ran; NVML was not asked",
    "probe_error": "the probe's NVML step crashed (see the probe's errors); NVML state unknown",
}
# Kernel refusals of an unsigned module (lines the probe keeps in kernel_log.nvrm_errors).
_MODULE_REFUSALS = (
    "Key was rejected by service",
    "Loading of unsigned module is rejected",
    "unsigned module loading is restricted",
)
_THERMAL_REASONS = ("sw_thermal_slowdown", "hw_thermal_slowdown")
# Recovery actions that only restrict peer-to-peer or IMEX use; the rest need a reset or reboot.
_LIGHT_RECOVERY = ("Drain P2P", "Recover IMEX Domain")
_FABRIC_DONE = "Completed"
_FABRIC_OK = "Success"
_PORT_UP_STATES = (4, 5)  # ACTIVE, ACTIVE_DEFER
_GPUDIRECT_MARKER = lazy_compile(r"GPU_DIRECT_RDMA_ENABLED\s*[:=]\s*true", re.IGNORECASE)
_VALIDATIONS = "run/nvidia/validations"
# Pod-run components with probe checks of their own, which say more than "no kubelet".
_OWN_PROBE_CHECKS = frozenset({"driver", "ofed", "container-toolkit", "validator"})
MAX_LISTED = 4


# --- facts shared by several checks (pure functions of the probe) -----------------


def module_loaded(probe: ProbeResult, name: str) -> bool | None:
    """Whether a kernel module is loaded; None when /proc/modules could not be read."""
    if probe.host.modules_error is not None:
        return None
    return name in probe.host.modules


def kernel_module_absent(probe: ProbeResult) -> bool:
    """No NVIDIA kernel module: /proc/driver/nvidia/version is absent and nvidia is not listed."""
    return probe.host.driver_error == "absent" and module_loaded(probe, "nvidia") is not True


def driver_down(probe: ProbeResult) -> bool:
    """The driver certainly does not work: no module, or NVML's init names a driver fault."""
    nvml = probe.nvml
    return kernel_module_absent(probe) or (not nvml.init_ok and nvml.init_error in _DRIVER_DOWN_ERRORS)


def processes_visible(probe: ProbeResult) -> bool:
    """Whether ``processes`` can be trusted to show absence.

    On the host itself (host root ``/``) the probe sees every process; in a pod it
    sees the host's only with ``hostPID``, and then some watched daemon shows up.
    """
    return probe.host_root == "/" or any(probe.host.processes.values())


def running(probe: ProbeResult, names: Iterable[str]) -> list[str]:
    return [name for name in names if probe.host.processes.get(name)]


def kubernetes_absent(ctx: NodeContext, probe: ProbeResult) -> bool:
    """Nothing Kubernetes-side on this host: no kubelet, its sockets or operator markers.

    A node the cluster reports is never "absent", whatever the probe could see.
    """
    host = probe.host
    return (
        ctx.node is None
        and processes_visible(probe)
        and not running(probe, KUBELET_PROCESSES)
        and not host.kubelet_registration_socket
        and not host.device_plugin_sockets
        and not host.validations
    )


def _ev(ctx: NodeContext, excerpt: str) -> Evidence:
    return Evidence(ctx.obs.path_of("cmd", PROBE_FILE), excerpt)


def _kernel_line(ctx: NodeContext, line_no: int, line: str) -> Evidence:
    """Evidence in the same form as a dmesg.txt signature hit, so duplicates merge."""
    return Evidence(f"{ctx.obs.path_of('cmd', 'dmesg.txt')}:{line_no}", clipped(line.strip()))


def _found(
    ctx: NodeContext, component: str, cause: str, *evidence: Evidence, status: Status | None = None
) -> Finding:
    """A problem ranked as the knowledge base ranks its cause (its status unless overridden)."""
    known = ctx.kb.get(cause)
    return problem(
        component, cause, *evidence, status=status or known.severity, specificity=known.specificity
    )


def _unreadable(ctx: NodeContext, component: str) -> Finding:
    error = ctx.parse_errors.get(f"cmd/{PROBE_FILE}", "not a gpunode probe result")
    return unknown(component, "the probe's facts could not be read", _ev(ctx, error))


def _listed(items: Iterable[str]) -> str:
    shown = list(items)
    extra = f" (+{len(shown) - MAX_LISTED} more)" if len(shown) > MAX_LISTED else ""
    return ", ".join(shown[:MAX_LISTED]) + extra


def _gpu(gpu: NvmlGpu) -> str:
    return f"GPU {gpu.index} ({gpu.pci_bus_id or gpu.uuid or 'bus id unknown'})"


def _when(epoch: float | None) -> str:
    if epoch is None:
        return "unknown"
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


# --- layer 1: the driver ----------------------------------------------------------


@check("driver", needs=NEEDS)
def probe_driver(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """NVML's own answer: it starts (driver and CUDA version), or its error says why not."""
    probe = ctx.probe
    if probe is None:
        yield _unreadable(ctx, component)
    elif probe.nvml.init_ok:
        yield _driver_ok(ctx, probe, component)
        yield from _uvm_ready(ctx, probe, component)
    elif (for_vms := gpus_for_vms(ctx, probe)) is not None:
        yield not_deployed(component, for_vms)
    else:
        yield _init_failure(ctx, probe, component)


def gpus_for_vms(ctx: NodeContext, probe: ProbeResult) -> str | None:
    """Why the node's GPUs need no NVIDIA driver: they go whole to VMs, as the operator's
    vm-passthrough workload says, or as the PCI bus shows (every NVIDIA GPU bound to
    vfio-pci). None on a node whose GPUs serve containers."""
    node = ctx.node
    labels = node.metadata.labels if node is not None else {}
    config = vm_workload(labels, ctx.cluster_policy_spec, bool(ctx.facts.cluster_policies))
    if config == "vm-passthrough":
        return vm_reason(config)
    gpus = probe.host.pci_gpus if probe.host.pci_read else ()
    if gpus and all(g.driver == VFIO_DRIVER for g in gpus):
        return f"every NVIDIA GPU on the PCI bus ({len(gpus)}) is bound to {VFIO_DRIVER}: they go to VMs"
    return None


def _driver_ok(ctx: NodeContext, probe: ProbeResult, component: str) -> Finding:
    nvml, driver = probe.nvml, probe.host.driver
    kind = f" ({driver.kernel_module_type} kernel module)" if driver else ""
    modules = [m for m in ("nvidia", "nvidia_uvm") if module_loaded(probe, m)]
    ev = _ev(
        ctx,
        f"nvmlInit ok: driver {nvml.driver_version}{kind}, CUDA {nvml.cuda_driver_version}, "
        f"{nvml.device_count} GPU(s); modules loaded: {', '.join(modules) or 'not read'}",
    )
    # the summary is worded as the nvidia-smi check words it, so the two merge when both ran
    return ok(component, f"driver {nvml.driver_version}, CUDA {nvml.cuda_driver_version}", ev)


def _init_failure(ctx: NodeContext, probe: ProbeResult, component: str) -> Finding:
    """Map NVML's init error (and the host's module facts) to a cause."""
    nvml = probe.nvml
    error = nvml.init_error or "unknown"
    message = f" ({nvml.init_error_message})" if nvml.init_error_message else ""
    said, module = _ev(ctx, f"nvmlInit failed: {error}{message}"), _module_evidence(ctx, probe)
    if error == "lib_rm_version_mismatch":
        return _found(ctx, component, "driver_library_mismatch", said, module)
    if kernel_module_absent(probe):
        return _found(ctx, component, "driver_not_loaded", said, module)
    if error == "driver_not_loaded":  # module loaded, NVML still cannot reach it: device nodes?
        return _found(ctx, component, "driver_not_loaded", said, module, _device_nodes(ctx, probe))
    if error in _UNJUDGEABLE_INIT:
        return unknown(component, _UNJUDGEABLE_INIT[error], said)
    if error == "library_not_found":
        return _found(ctx, component, "nvml_library_missing", said, module)
    return _found(ctx, component, "nvidia_smi_failed", said, module)


def _module_evidence(ctx: NodeContext, probe: ProbeResult) -> Evidence:
    host = probe.host
    if host.driver is not None:
        text = f"kernel module {host.driver.version} ({host.driver.kernel_module_type}) is loaded"
    elif host.driver_error == "absent":
        text = "no NVIDIA kernel module: /proc/driver/nvidia/version is absent"
    else:
        text = f"/proc/driver/nvidia/version: {host.driver_error}"
    return _ev(ctx, text)


def _device_nodes(ctx: NodeContext, probe: ProbeResult) -> Evidence:
    nodes = probe.host.device_nodes
    return _ev(ctx, f"/dev/nvidia*: {_listed(nodes)}" if nodes else "no /dev/nvidia* device nodes")


def _uvm_ready(ctx: NodeContext, probe: ProbeResult, component: str) -> Iterator[Finding]:
    """CUDA needs nvidia_uvm and /dev/nvidia-uvm; nvidia-smi does not, so it can look healthy."""
    nodes = probe.host.device_nodes
    if not nodes:  # /dev was not readable where the probe ran: no claim either way
        return
    missing = []
    if module_loaded(probe, "nvidia_uvm") is False:
        missing.append("module nvidia_uvm is not loaded")
    if "nvidia-uvm" not in nodes:
        missing.append(f"/dev/nvidia-uvm is absent (have: {_listed(nodes)})")
    if missing:
        yield _found(ctx, component, "nvidia_uvm_missing", _ev(ctx, "; ".join(missing)))


@check("driver", needs=NEEDS)
def probe_peermem(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """With GPUDirect RDMA asked for, the driver's nvidia_peermem module must be loaded.

    Judged on the driver (the module ships with it and its container loads it), and
    only while the driver itself works, so a dead driver stays the one root cause.
    """
    probe = ctx.probe
    if probe is None or driver_down(probe):
        return
    asked = gpudirect_requested(ctx, probe)
    loaded = module_loaded(probe, "nvidia_peermem")
    if asked is None or loaded is None:
        return
    if loaded:
        yield ok(
            component, "nvidia_peermem loaded (GPUDirect RDMA)", _ev(ctx, f"{asked}; nvidia_peermem loaded")
        )
    else:
        ev = _ev(ctx, f"{asked}; nvidia_peermem is not in /proc/modules")
        yield _found(ctx, component, "peermem_not_loaded", ev)


def gpudirect_requested(ctx: NodeContext, probe: ProbeResult) -> str | None:
    """Where GPUDirect RDMA is asked for: the driver's ready marker, a peermem marker, the ClusterPolicy."""
    marker = ctx.obs.files.get(f"{_VALIDATIONS}/.driver-ctr-ready", "")
    if _GPUDIRECT_MARKER.search(marker):
        return "/run/nvidia/validations/.driver-ctr-ready: GPU_DIRECT_RDMA_ENABLED true"
    if any(m.name == "nvidia-peermem-ready" for m in probe.host.validations):
        return "/run/nvidia/validations/nvidia-peermem-ready exists"
    driver = ctx.cluster_policy_spec.get("driver")
    rdma = driver.get("rdma") if isinstance(driver, dict) else None
    if isinstance(rdma, dict) and rdma.get("enabled") is True:
        return "ClusterPolicy spec.driver.rdma.enabled=true"
    return None


# --- layer 0: kernel, GPUs, runtime, kubelet --------------------------------------


@check("kernel", needs=NEEDS)
def probe_kernel(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The running kernel, and what in it keeps the NVIDIA module out (Secure Boot, nouveau)."""
    probe = ctx.probe
    if probe is None:
        yield _unreadable(ctx, component)
        return
    host = probe.host
    if host.kernel_release:
        pretty = host.os_release.get("PRETTY_NAME", "OS unknown")
        ev = _ev(ctx, f"kernel_release={host.kernel_release}; {pretty}")
        yield ok(component, host.kernel_release, ev)
    yield from _secure_boot(ctx, probe, component)
    yield from _nouveau(ctx, probe, component)


def _secure_boot(ctx: NodeContext, probe: ProbeResult, component: str) -> Iterator[Finding]:
    """Secure Boot is only a cause when a module load was tried and the module is not there.

    "Tried" means the kernel logged a refused module, or NVML's library is installed
    but finds no module (driver_not_loaded); a node without any driver is not blamed
    on Secure Boot, and a node whose driver works never is.
    """
    if probe.host.secure_boot != "enabled" or not kernel_module_absent(probe):
        return
    refusals = [
        _kernel_line(ctx, n, line)
        for n, line in probe.host.kernel_log.nvrm_errors
        if any(marker in line for marker in _MODULE_REFUSALS)
    ]
    if refusals or probe.nvml.init_error == "driver_not_loaded":
        ev = _ev(ctx, "secure_boot=enabled; no NVIDIA kernel module is loaded")
        yield _found(ctx, component, "secure_boot_enabled", ev, *refusals[:3])


def _nouveau(ctx: NodeContext, probe: ProbeResult, component: str) -> Iterator[Finding]:
    """nouveau claims the GPUs first; with the NVIDIA driver down it is the reason."""
    if module_loaded(probe, "nouveau") is not True:
        return
    down = driver_down(probe)
    ev = _ev(ctx, "module nouveau is loaded" + ("; the NVIDIA driver is not working" if down else ""))
    yield _found(ctx, component, "nouveau_loaded", ev, status=Status.FAILED if down else Status.DEGRADED)


@check("gpu-hardware", needs=NEEDS)
def probe_gpus(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """Each GPU as NVML sees it: lost, memory errors and repairs, heat, recovery action."""
    probe = ctx.probe
    if probe is None:
        yield _unreadable(ctx, component)
        return
    yield from _kernel_log_faults(ctx, probe, component)
    nvml = probe.nvml
    if not nvml.init_ok:
        yield _gpus_unasked(ctx, probe, component)
        return
    if nvml.device_count is None:
        call = nvml.calls.get("nvmlDeviceGetCount", "not called")
        yield unknown(
            component, f"NVML did not count the GPUs ({call})", _ev(ctx, f"nvmlDeviceGetCount: {call}")
        )
        return
    yield from _gpu_count(ctx, nvml.device_count, component)
    for gpu in nvml.gpus:
        yield from _gpu_health(ctx, gpu, component)
    yield _gpus_seen(ctx, probe, component)


def _gpus_unasked(ctx: NodeContext, probe: ProbeResult, component: str) -> Finding:
    error = probe.nvml.init_error or "unknown"
    ev = _ev(ctx, f"nvmlInit failed: {error}")
    if error == "gpu_not_found":
        return _found(ctx, component, "gpu_missing", ev)
    return unknown(component, "NVML did not start: the GPUs could not be asked", ev)


def _gpu_count(ctx: NodeContext, count: int, component: str) -> Iterator[Finding]:
    """Fewer GPUs than labels, capacity or nvidia-smi say the node has."""
    expected = ctx.expected_gpus
    if expected and count < expected:
        ev = _ev(ctx, f"nvmlDeviceGetCount={count}, the node should have {expected}")
        yield _found(ctx, component, "gpu_missing", ev)


def _gpu_health(ctx: NodeContext, gpu: NvmlGpu, component: str) -> Iterator[Finding]:
    if gpu.lost:
        lost = next((call for call, outcome in gpu.calls.items() if outcome == "gpu_is_lost"), "a query")
        yield _found(
            ctx, component, "gpu_fallen_off_bus", _ev(ctx, f"{_gpu(gpu)}: {lost} answered gpu_is_lost")
        )
        return  # nothing else was asked of a lost GPU
    yield from _gpu_memory(ctx, gpu, component)
    yield from _gpu_heat(ctx, gpu, component)
    yield from _gpu_recovery(ctx, gpu, component)
    yield from _gpu_mig(ctx, gpu, component)
    yield from _gpu_link(ctx, gpu, component)


def _gpu_memory(ctx: NodeContext, gpu: NvmlGpu, component: str) -> Iterator[Finding]:
    """Uncorrectable ECC since driver load; row remapping failed or waiting for a reset."""
    name = _gpu(gpu)
    if gpu.ecc_volatile_dbe:
        ev = _ev(ctx, f"{name}: {gpu.ecc_volatile_dbe} uncorrectable ECC error(s) since driver load")
        yield _found(ctx, component, "uncorrectable_ecc", ev)
    if gpu.remapped_rows_failure:
        yield _found(ctx, component, "row_remap_failure", _ev(ctx, f"{name}: row remapping failure occurred"))
    elif gpu.remapped_rows_pending or gpu.retired_pages_pending:
        what = "remapped rows" if gpu.remapped_rows_pending else "retired pages"
        ev = _ev(ctx, f"{name}: {what} pending (a GPU reset activates them)")
        yield _found(ctx, component, "row_remap_pending", ev)


def _gpu_heat(ctx: NodeContext, gpu: NvmlGpu, component: str) -> Iterator[Finding]:
    """At or above the GPU's own slowdown temperature, or a thermal clock-event reason active."""
    reasons = [r for r in gpu.clock_event_reasons_active or () if r in _THERMAL_REASONS]
    temp, limit = gpu.temperature_c, gpu.slowdown_temp_c
    too_hot = temp is not None and limit is not None and temp >= limit
    if reasons or too_hot:
        temps = f"{temp} °C (slowdown at {limit} °C)"
        active = f"; active: {', '.join(reasons)}" if reasons else ""
        ev = _ev(ctx, f"{_gpu(gpu)}: {temps}{active}")
        yield _found(ctx, component, "gpu_thermal_slowdown", ev)


def _gpu_recovery(ctx: NodeContext, gpu: NvmlGpu, component: str) -> Iterator[Finding]:
    """The driver's own verdict (R565+): anything but None needs doing before the GPU is used."""
    action = gpu.recovery_action
    if action is None or action == "None":
        return
    status = Status.DEGRADED if action in _LIGHT_RECOVERY else Status.FAILED
    ev = _ev(ctx, f"{_gpu(gpu)}: recovery action {action}")
    yield _found(ctx, component, "xid_154_recovery_action", ev, status=status)


def _gpu_mig(ctx: NodeContext, gpu: NvmlGpu, component: str) -> Iterator[Finding]:
    current, pending = gpu.mig_mode_current, gpu.mig_mode_pending
    if current and pending and current != pending:
        ev = _ev(ctx, f"{_gpu(gpu)}: MIG mode {current}, pending {pending}")
        yield _found(ctx, component, "mig_mode_change_pending", ev)


def _gpu_link(ctx: NodeContext, gpu: NvmlGpu, component: str) -> Iterator[Finding]:
    """A busy GPU whose link trained below its maximum (checks/pcie.py says when)."""
    found = shortfall(reading_of(gpu))
    if found:
        yield _found(ctx, component, "pcie_link_downtrained", _ev(ctx, f"{_gpu(gpu)}: {found}"))


def _gpus_seen(ctx: NodeContext, probe: ProbeResult, component: str) -> Finding:
    gpus = probe.nvml.gpus
    names = sorted({g.name or "unknown GPU" for g in gpus})
    summary = f"{len(gpus)}x {', '.join(names)}" if gpus else "no GPUs"
    return ok(component, summary, _ev(ctx, f"nvmlDeviceGetCount={probe.nvml.device_count}"))


def _kernel_log_faults(ctx: NodeContext, probe: ProbeResult, component: str) -> Iterator[Finding]:
    """Hardware Xids the probe found in the kernel log, when its text is not in the bundle.

    With ``cmd/dmesg.txt`` present the Xid check and the KB signatures read the text
    itself; the probe's parsed list only stands in for it when it is missing.
    """
    if "dmesg.txt" in ctx.obs.cmd:
        return
    by_cause: dict[str, list[Evidence]] = {}
    for event in probe.host.kernel_log.xids:
        info = classify(event.xid, event.message)
        if info.is_root_cause and info.cause:
            by_cause.setdefault(info.cause, []).append(_ev(ctx, f"kernel log: {event.line.strip()[:300]}"))
    for line_no, line in probe.host.kernel_log.fallen_off_bus:
        by_cause.setdefault("gpu_fallen_off_bus", []).append(_ev(ctx, f"kernel log line {line_no}: {line}"))
    for cause, evidence in by_cause.items():
        yield _found(ctx, component, cause, *evidence[:3])


# --- layer 1: fabric manager ------------------------------------------------------


@check("fabric-manager", needs=NEEDS)
def probe_fabric(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """NVSwitch systems: every GPU's fabric state Completed/Success and Fabric Manager up."""
    probe = ctx.probe
    if probe is None:
        yield _unreadable(ctx, component)
        return
    switches = [d for d in probe.host.device_nodes if d.startswith("nvidia-nvswitch")]
    states = [g for g in probe.nvml.gpus if g.fabric_state is not None]
    if states:
        yield from _fabric_states(ctx, probe, states, component)
    elif switches:
        yield _fabric_process(ctx, probe, switches, component)
    elif probe.nvml.init_ok:
        yield not_deployed(component, "no NVSwitch fabric on this node")
    else:
        yield unknown(component, "NVML did not start: whether this node has NVSwitches is unknown")


def _fm_process(probe: ProbeResult) -> str:
    if probe.host.processes.get("nv-fabricmanager"):
        return "nv-fabricmanager running"
    return "no nv-fabricmanager process" if processes_visible(probe) else "host processes not visible"


def _fabric_states(
    ctx: NodeContext, probe: ProbeResult, gpus: list[NvmlGpu], component: str
) -> Iterator[Finding]:
    waiting = [g for g in gpus if g.fabric_state != _FABRIC_DONE]
    failed = [g for g in gpus if g.fabric_state == _FABRIC_DONE and g.fabric_status not in (None, _FABRIC_OK)]
    fm = _fm_process(probe)
    if waiting:
        shown = _listed(f"{_gpu(g)} {g.fabric_state}" for g in waiting)
        yield _found(ctx, component, "fabric_manager_not_running", _ev(ctx, f"fabric state: {shown}; {fm}"))
    if failed:
        shown = _listed(f"{_gpu(g)} {g.fabric_status}" for g in failed)
        ev = _ev(ctx, f"fabric state Completed with {shown}")
        yield _found(ctx, component, "fabric_registration_failed", ev)
    if not waiting and not failed:
        ev = _ev(ctx, f"fabric state Completed/Success on {len(gpus)} GPU(s); {fm}")
        yield ok(component, f"fabric Completed on {len(gpus)} GPU(s), {fm}", ev)


def _fabric_process(ctx: NodeContext, probe: ProbeResult, switches: list[str], component: str) -> Finding:
    """NVSwitches without NVML fabric state (before Hopper): the daemon is the evidence."""
    fm = _fm_process(probe)
    ev = _ev(ctx, f"/dev: {_listed(switches)}; {fm}")
    if probe.host.processes.get("nv-fabricmanager"):
        return ok(component, f"{len(switches)} NVSwitch(es), {fm}", ev)
    if processes_visible(probe):
        return _found(ctx, component, "fabric_manager_not_running", ev)
    return unknown(component, f"{len(switches)} NVSwitch(es); whether Fabric Manager runs is not visible", ev)


# --- layer 0: container runtime and kubelet ---------------------------------------


@check("container-runtime", needs=NEEDS)
def probe_runtime(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """containerd or CRI-O: configured and running, down under a kubelet, or not installed."""
    probe = ctx.probe
    if probe is None:
        yield _unreadable(ctx, component)
        return
    configs = probe.host.runtime_configs
    up = running(probe, RUNTIME_PROCESSES)
    where = _listed(c.path for c in configs) or "no config"
    if up:
        yield ok(
            component, f"{', '.join(up)} running", _ev(ctx, f"processes: {', '.join(up)}; config: {where}")
        )
    elif configs and processes_visible(probe) and running(probe, KUBELET_PROCESSES):
        kubelet = ", ".join(running(probe, KUBELET_PROCESSES))
        ev = _ev(ctx, f"{kubelet} runs, no containerd/crio process; config: {where}")
        yield _found(ctx, component, "container_runtime_down", ev)
    elif configs:
        yield unknown(component, f"configured ({where}); no runtime process seen", _ev(ctx, where))
    elif ctx.node is None and processes_visible(probe):
        yield not_deployed(component, "no containerd or CRI-O on this host")


@check("kubelet", needs=NEEDS)
def probe_kubelet(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A kubelet process (any flavour), or none with none of its sockets: not deployed."""
    probe = ctx.probe
    if probe is None:
        yield _unreadable(ctx, component)
        return
    host = probe.host
    up = running(probe, KUBELET_PROCESSES)
    sockets = (["kubelet.sock"] if host.kubelet_registration_socket else []) + list(
        host.device_plugin_sockets
    )
    if up:
        detail = f"; device-plugin sockets: {_listed(sockets)}" if sockets else ""
        yield ok(component, f"{up[0]} running", _ev(ctx, f"processes: {', '.join(up)}{detail}"))
    elif kubernetes_absent(ctx, probe):
        yield not_deployed(component, "no kubelet on this host")
    elif ctx.node is None and sockets and processes_visible(probe):
        ev = _ev(ctx, f"/var/lib/kubelet/device-plugins: {_listed(sockets)}; no kubelet process")
        yield unknown(component, "kubelet sockets exist but no kubelet process runs", ev)


@check(ALL_POD_COMPONENTS, needs=NEEDS)
def probe_no_kubelet(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """Pods need a kubelet: on a host without one, pod-run components are not deployed.

    Host-installed alternatives (a host driver, MOFED, the toolkit) are judged by
    their own checks; their ok or problem outranks this.
    """
    probe = ctx.probe
    if component in _OWN_PROBE_CHECKS or probe is None:
        return
    if kubernetes_absent(ctx, probe):
        yield not_deployed(component, "no kubelet on this host: nothing runs as a pod")


# --- layer 2: container toolkit ---------------------------------------------------


@check("container-toolkit", needs=NEEDS)
def probe_toolkit(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The runtime config in use carries the nvidia handler; CDI specs parse."""
    probe = ctx.probe
    if probe is None:
        yield _unreadable(ctx, component)
        return
    configs = configs_in_use(probe)
    if not configs and ctx.node is None:
        yield not_deployed(component, "no container runtime config on this host")
    for config in configs:
        yield _runtime_handler(ctx, config, component)
    yield from _cdi_specs(ctx, probe, component)


def configs_in_use(probe: ProbeResult) -> tuple[RuntimeConfigFact, ...]:
    """The configs the running Kubernetes flavour reads; all of them when that is unknown.

    A leftover /etc/containerd/config.toml on a k3s node is not what k3s runs with.
    """
    configs = probe.host.runtime_configs
    flavours = {d for p in running(probe, _CONFIG_OF_PROCESS) for d in _CONFIG_OF_PROCESS[p]}
    used = tuple(c for c in configs if c.distribution in flavours) or configs
    rendered = {c.path for c in used if not is_template(c.path)}
    return tuple(c for c in used if not _rendered_beside(c.path, rendered))


def _rendered_beside(path: str, rendered: set[str]) -> bool:
    """A k3s/RKE2 template whose rendered config.toml was read beside it: the rendered file
    is what containerd runs with (k3s adds the runtimes it found when rendering)."""
    return is_template(path) and f"{posixpath.dirname(path)}/config.toml" in rendered


def _runtime_handler(ctx: NodeContext, config: RuntimeConfigFact, component: str) -> Finding:
    if config.error is not None:
        return unknown(
            component, f"{config.path} could not be read", _ev(ctx, f"{config.path}: {config.error}")
        )
    if config.containerd is not None:
        runtimes, default = config.containerd.runtimes, config.containerd.default_runtime
    elif config.crio is not None:
        runtimes, default = config.crio.runtimes, config.crio.default_runtime
    else:
        return unknown(component, f"{config.path}: no runtime settings")
    handlers = ", ".join(sorted(runtimes)) or "none"
    nvidia = nvidia_runtimes(runtimes)
    if nvidia:
        shown, default = ", ".join(nvidia), default or "runc"
        ev = _ev(ctx, f"{config.path}: runtimes {handlers}; NVIDIA runtime {shown}; default {default}")
        return ok(component, f"nvidia runtime in {config.path} (default {default})", ev)
    if config.crio is not None:  # CRI-O may use the OCI hook instead
        return _crio_hooks(ctx, config.path, config.crio.hooks_dirs, component)
    if config.containerd is not None and config.containerd.ignored_cri_tables:
        # containerd 2.x also reads 2.x table names in a version 2 file (AKS writes such
        # files); the probe does not know which containerd runs, so it cannot tell.
        tables = "; ".join(config.containerd.ignored_cri_tables)
        ev = _ev(ctx, f"{config.path}: runtimes {handlers}; more runtimes under {tables}")
        return unknown(
            component, f"{config.path}: runtimes under tables only some containerd versions read", ev
        )
    return _not_patched(ctx, config.path, handlers, component)


def _not_patched(ctx: NodeContext, path: str, handlers: str, component: str) -> Finding:
    """A containerd config without an NVIDIA runtime; a k3s/RKE2 template read without its
    rendered config.toml is unknown (k3s adds the NVIDIA runtimes it finds when rendering)."""
    if is_template(path):
        ev = _ev(ctx, f"{path}: runtimes {handlers}; the rendered config.toml was not found")
        return unknown(component, f"{path}: a template, its rendered config.toml not read", ev)
    ev = _ev(ctx, f"{path}: runtimes {handlers}; none runs {NVIDIA_BINARY}")
    return _found(ctx, component, "containerd_not_patched", ev)


def _crio_hooks(ctx: NodeContext, path: str, hooks_dirs: tuple[str, ...], component: str) -> Finding:
    """CRI-O without an NVIDIA handler, judged by the hook files the probe read."""
    host = ctx.probe.host if ctx.probe is not None else None
    if host is None or not host.oci_hook_dirs:  # a probe older than the hook reader
        return unknown(component, f"no NVIDIA runtime in {path}; OCI hooks not read")
    hooks = [HookFile(f.file, f.hook, f.error, f.binary_present) for f in host.oci_hooks]
    verdict = judge_hooks(hooks, hooks_dirs or OCI_HOOK_DIRS)
    ev = _ev(ctx, verdict.detail)
    if verdict.cause is None:
        return ok(component, f"NVIDIA OCI hook {verdict.file} (CRI-O, no NVIDIA runtime in {path})", ev)
    return _found(ctx, component, verdict.cause, ev)


def _cdi_specs(ctx: NodeContext, probe: ProbeResult, component: str) -> Iterator[Finding]:
    specs = probe.host.cdi_specs
    for spec in [s for s in specs if s.error][:MAX_LISTED]:
        yield _found(ctx, component, "cdi_spec_invalid", _ev(ctx, f"{spec.path}: {spec.error}"))
    kinds = sorted({s.kind for s in specs if s.kind and not s.error and "nvidia.com/" in s.kind})
    if kinds:
        ev = _ev(ctx, "CDI: " + _listed(f"{s.path} ({s.kind}, {len(s.devices)} devices)" for s in specs))
        yield ok(component, f"CDI specs: {', '.join(kinds)}", ev)


# --- cluster control on the node: validator markers -------------------------------


@check("validator", needs=NEEDS)
def probe_validations(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """GPU Operator markers must be newer than the driver they vouch for."""
    probe = ctx.probe
    if probe is None:
        yield _unreadable(ctx, component)
        return
    markers = probe.host.validations
    if not markers:
        if ctx.node is None:
            yield not_deployed(component, "no GPU Operator validation markers on this host")
        return
    loaded = _when(probe.host.driver_loaded_at)
    stale = [m.name for m in markers if m.older_than_driver_load]
    if stale:
        ev = _ev(ctx, f"{_listed(stale)} older than the driver load at {loaded}")
        yield _found(ctx, component, "validation_markers_stale", ev)
    else:
        names = _listed(m.name for m in markers)
        yield ok(component, f"validated: {names}", _ev(ctx, f"{names}; driver loaded at {loaded}"))


# --- layer 1: RDMA (MOFED/DOCA or inbox) ------------------------------------------


@check("ofed", needs=NEEDS)
def probe_rdma(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """RDMA devices and their ports; a down port (not administratively disabled) degrades."""
    probe = ctx.probe
    if probe is None:
        yield _unreadable(ctx, component)
        return
    host = probe.host
    for error in host.rdma_errors[:MAX_LISTED]:
        yield unknown(component, "an RDMA port could not be read", _ev(ctx, error))
    if not host.rdma_ports:
        mlx5 = " (mlx5_core loaded, Ethernet only)" if module_loaded(probe, "mlx5_core") else ""
        yield not_deployed(component, f"no RDMA devices on this node{mlx5}")
        return
    # the ports' own states are judged on rdma-links (checks/interconnect.py)
    down = [p for p in host.rdma_ports if p.state_id not in _PORT_UP_STATES and p.phys_state != "Disabled"]
    yield _rdma_summary(ctx, probe, len(down), component)


def _rdma_summary(ctx: NodeContext, probe: ProbeResult, down: int, component: str) -> Finding:
    ports = probe.host.rdma_ports
    layers = ", ".join(sorted({p.link_layer for p in ports if p.link_layer})) or "link layer unknown"
    modules = [m for m in ("mlx5_core", "mlx5_ib", "ib_core") if module_loaded(probe, m)]
    summary = f"{len(ports) - down}/{len(ports)} RDMA ports active ({layers})"
    return ok(
        component, summary, _ev(ctx, f"{summary}; modules: {', '.join(modules) or 'built in or not read'}")
    )
