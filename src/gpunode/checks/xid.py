"""GPU hardware health: Xid sightings, memory repair state, PCIe link width, heat.

Xids are found wherever the stack reports them: the kernel log, the driver pod's
log, the device plugin's ``XidCriticalError`` lines and DCGM's Xid metrics. Each
code is classified by the Xid catalog; hardware-class codes become their cause,
application-class codes are kept as evidence only (the GPU is fine, the job was
not), so a buggy workload never makes a node look broken.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from itertools import chain, compress
from operator import attrgetter, ge, not_

import msgspec

from gpunode.checks.base import check, kernel_log_holds, logs_here, problem, unknown
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import line_finding
from gpunode.checks.pcie import reading_of, shortfall
from gpunode.decisive import Decisive, clipped
from gpunode.gpus import gpu_resources
from gpunode.model import Evidence, Finding, Status
from gpunode.parse.gpu_ref import bus_id_in_line, gpu_values, normal_bus_id
from gpunode.parse.kernel_log import iter_xid_events
from gpunode.parse.nvidia_smi import GpuInfo
from gpunode.relazy import lazy_compile
from gpunode.xid import XidInfo, classify, sxid_fatal

MAX_XID_EVIDENCE = 3
_PLUGIN_XID = lazy_compile(r"XidCriticalError: Xid=(\d+)")
_DCGM_XID = "DCGM_FI_DEV_XID_ERRORS"
_DCGM_XID_COUNT = "DCGM_EXP_XID_ERRORS_COUNT"
_THERMAL = frozenset({"hw_thermal_slowdown", "sw_thermal_slowdown"})
GPU = "nvidia.com/gpu"
_DCGM_GPU = lazy_compile(r'\{gpu="(?P<gpu>\d+)"')
#: The severity word the driver writes into an Xid line it handled (NVLink5 Xids 144-150: "Nonfatal"
#: or "Fatal" after the unit name). Alone it leaves the GPU in service; another Xid beside it does not.
_NONFATAL = lazy_compile(r"\bnon-?fatal\b", re.IGNORECASE)


@dataclass(frozen=True)
class XidSeen:
    """One Xid report, where it was seen, and the catalog's word on it."""

    info: XidInfo
    evidence: Evidence


_DRIVER_LOGS, _PLUGIN_LOGS = logs_here("driver"), logs_here("device-plugin")


@check("gpu-hardware")
def xid_reports(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """Hardware Xids become their cause; application Xids are evidence only."""
    log = ctx.kernel_log
    seen = [*_kernel_xids(ctx)] if log is not None and log.xids else []
    if _DRIVER_LOGS(ctx):  # (most nodes: no log of the driver's or the plugin's pods collected)
        seen.extend(_driver_log_xids(ctx))
    if _PLUGIN_LOGS(ctx):
        seen.extend(_device_plugin_xids(ctx))
    gauges = chain(ctx.dcgm_metric(_DCGM_XID) or (), ctx.dcgm_metric(_DCGM_XID_COUNT) or ())
    if not all(map(_AT_MOST_ZERO, map(_VALUE, gauges))):  # (in C: most scrapes' gauges are all zero)
        seen.extend(_dcgm_xids(ctx))
    if not seen:
        return  # (most nodes)
    if all(_NONFATAL.search(s.evidence.excerpt) for s in seen):
        yield unknown(component, _nonfatal_summary(seen), *_evidence(seen))
        return
    by_cause: dict[str, list[XidSeen]] = {}
    for sighting in seen:
        if sighting.info.is_root_cause and sighting.info.cause:
            by_cause.setdefault(sighting.info.cause, []).append(sighting)
    for cause, sightings in by_cause.items():
        yield _xid_problem(ctx, component, cause, sightings)
    benign = [s for s in seen if not s.info.is_root_cause]
    if benign:
        yield unknown(component, _benign_summary(benign), *_evidence(benign))


#: The catalogued cause of a fatal NVSwitch error, and the word every SXid line holds.
_NVSWITCH_FATAL = "nvswitch_fatal_error"
_SXID = "SXid"
#: A report line that carries its own severity word: the cause's signature reads those.
_SXID_WORDED = lazy_compile(r"SXid \(PCI:[^)]*\): \d+, (?i:non-?fatal|fatal)\b")


#: Every line the check reads is an SXid report (the shared kernel-log gate).
_may_hold_sxid = kernel_log_holds(_SXID)


@check("gpu-hardware", may_find=_may_hold_sxid)
def sxid_reports(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """An NVSwitch error report line without its severity word ("nvidia-nvswitch1: SXid
    (PCI:0000:84:00.0): 12028, Data {...}"), read by its number in NVIDIA's SXid catalog
    (data/sxid.toml, the Fabric Manager user guide's appendix D): a number the catalog
    classes fatal is the NVSwitch fatal error whatever line of its report survived; a
    non-fatal or notable number, or one the catalog lacks, says nothing here."""
    split = ctx.text_lines("cmd", "dmesg.txt")
    if split is None:
        return
    path = ctx.obs.path_of("cmd", "dmesg.txt")
    for index, line in enumerate(split[0]):
        if _SXID not in line or _SXID_WORDED.search(line):
            continue
        entry = sxid_fatal(line)
        if entry is None:
            continue
        cause = ctx.kb.get(_NVSWITCH_FATAL)
        yield problem(component, _NVSWITCH_FATAL, _line_evidence(path, index + 1, line),
                      status=cause.severity, specificity=cause.specificity, sxid=str(entry.code),
                      sxid_name=entry.name, sxid_class=entry.sxid_class, sxid_recovery=entry.recovery)
        return


def _xid_problem(ctx: NodeContext, component: str, cause: str, sightings: list[XidSeen]) -> Finding:
    kb_cause = ctx.kb.get(cause)
    first = sightings[0].info
    gpu = next((g for s in sightings if (g := _gpu_of(s.evidence.excerpt))), None)
    return problem(
        component,
        cause,
        *_evidence(sightings),
        status=kb_cause.severity,
        specificity=kb_cause.specificity,
        xid=str(first.code),
        xid_action=first.action,
        ctx=gpu_values(gpu, ctx.gpu_indices),
    )


def _gpu_of(line: str) -> str | None:
    """The GPU an Xid report names: the kernel's PCI bus id, or DCGM's ``gpu`` index label."""
    found = _DCGM_GPU.search(line)
    return bus_id_in_line(line) or (found["gpu"] if found else None)


def _evidence(sightings: Iterable[XidSeen]) -> tuple[Evidence, ...]:
    return tuple(dict.fromkeys(s.evidence for s in sightings))[:MAX_XID_EVIDENCE]


def _nonfatal_summary(seen: list[XidSeen]) -> str:
    codes = ", ".join(sorted({str(s.info.code) for s in seen}))
    return (
        f"Xid {codes} logged by the driver itself as non-fatal, with no other Xid beside it: "
        "the error was handled and the GPU stays in service"
    )


def _benign_summary(benign: list[XidSeen]) -> str:
    codes = ", ".join(
        f"{info.code} ({info.mnemonic})" for info in {s.info.code: s.info for s in benign}.values()
    )
    return f"application or informational Xids only ({codes}): the GPU stays in service"


def _kernel_xids(ctx: NodeContext) -> Iterator[XidSeen]:
    log = ctx.kernel_log
    if log is None:
        return
    path = ctx.obs.path_of("cmd", "dmesg.txt")
    for event in log.xids:
        yield XidSeen(classify(event.xid, event.message), _line_evidence(path, event.line_no, event.line))


def _driver_log_xids(ctx: NodeContext) -> Iterator[XidSeen]:
    """The driver container prints the kernel messages it saw while loading."""
    for sp in ctx.stack_pods("driver"):
        for log in ctx.logs_of(sp.pod):
            for event in iter_xid_events(log.lines):
                evidence = _line_evidence(log.path, event.line_no, event.line)
                yield XidSeen(classify(event.xid, event.message), evidence)


def _device_plugin_xids(ctx: NodeContext) -> Iterator[XidSeen]:
    for sp in ctx.stack_pods("device-plugin"):
        for log in ctx.logs_of(sp.pod):
            for line_no, line in enumerate(log.lines, start=1):
                found = _PLUGIN_XID.search(line)
                if found:
                    yield XidSeen(classify(int(found.group(1))), _line_evidence(log.path, line_no, line))


def _dcgm_xids(ctx: NodeContext) -> Iterator[XidSeen]:
    """DCGM's last-Xid gauge per GPU, and the exporter's windowed count per code."""
    path = ctx.obs.path_of("metrics", "dcgm-exporter.prom")
    samples = [*(ctx.dcgm_metric(_DCGM_XID) or []), *(ctx.dcgm_metric(_DCGM_XID_COUNT) or [])]
    for s in samples:
        if s.value <= 0:
            continue
        gpu = s.labels.get("gpu", "")
        if s.name == _DCGM_XID:
            code = _int(s.labels.get("err_code")) or int(s.value)
            shown = f'{_DCGM_XID}{{gpu="{gpu}",err_code="{code}"}} {int(s.value)}'
            yield XidSeen(classify(code), Evidence(path, shown))
        elif s.name == _DCGM_XID_COUNT and (counted := _int(s.labels.get("xid"))):
            shown = f'{_DCGM_XID_COUNT}{{gpu="{gpu}",xid="{counted}"}} {int(s.value)}'
            yield XidSeen(classify(counted), Evidence(path, shown))


def _line_evidence(path: str, line_no: int, line: str) -> Evidence:
    return Evidence(f"{path}:{line_no}", clipped(line.strip()))


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value else None
    except ValueError:
        return None


#: DCGM's count of corrected (single-bit) ECC errors since the driver loaded, per GPU.
_DCGM_SBE_VOLATILE = "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL"
#: Corrected errors since the driver loaded that make a storm: a GPU correcting thousands a
#: second under load (NVIDIA/DCGM#313: 9.6e9, rising ~17,700/s) against peers at or near none.
SBE_STORM = 1_000_000
#: How far above every peer on the node the storm GPU stands (same model, same job).
SBE_STORM_RATIO = 1000


@check("gpu-hardware")
def correctable_ecc_storm(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A GPU correcting ECC errors by the million while its peers correct almost none is
    degrading memory: the corrections cost every call that touches it (DCGM calls stall past
    45 s under load while DCGM's own health check still calls the GPU healthy, NVIDIA/DCGM#313,
    NVIDIA/NVSentinel#1748). Counts alike on every GPU (a fleet-wide trickle, a long uptime)
    say nothing; a node with one GPU has no peer to read it against, and is not read."""
    found = ctx.dcgm_metric(_DCGM_SBE_VOLATILE) or []
    samples = [s for s in found if "gpu" in s.labels] if len(found) > 1 else found
    if len(samples) < 2:
        return
    top = max(samples, key=lambda s: s.value)
    peers = [s.value for s in samples if s is not top]
    if top.value < SBE_STORM or max(peers) * SBE_STORM_RATIO > top.value:
        return
    gpu = top.labels["gpu"]
    shown = f'{_DCGM_SBE_VOLATILE}{{gpu="{gpu}"}} {int(top.value)}'
    path = ctx.obs.path_of("metrics", "dcgm-exporter.prom")
    peer_note = Evidence(path, f"other GPUs: at most {int(max(peers))} corrected errors each")
    finding = line_finding(ctx.kb, component, Status.DEGRADED, Decisive(1, shown, 1), path,
                           verb="corrects ECC errors by the million", line_class="error_device",
                           evidence=(peer_note,))
    yield msgspec.structs.replace(finding, context={**gpu_values(gpu, ctx.gpu_indices), **finding.context})


@check("gpu-hardware", needs=("cmd/nvidia-smi-q.xml", "node"))
def bad_memory_still_advertised(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """ECC-damaged GPUs should be withdrawn; all GPUs still allocatable means they are not."""
    smi, node = ctx.nvidia_smi, ctx.node
    if smi is None or node is None or not ctx.node_reporting:
        return
    if not any(map(_DBE, smi.gpus)) and not any(map(_REMAP_PENDING, smi.gpus)):
        return  # (in C: most nodes)
    damaged = [g for g in smi.gpus if g.ecc_volatile_dbe or g.remapped_rows_pending]
    allocatable = gpu_resources(node.metadata.labels, node.status.allocatable).advertised
    if allocatable >= (ctx.expected_units or len(smi.gpus)):
        path = ctx.obs.path_of("cmd", "nvidia-smi-q.xml")
        ev = [Evidence(path, _memory_state(g)) for g in damaged]
        ev.append(Evidence(f"node/{ctx.name} status.allocatable", f"{GPU}={allocatable}"))
        gpu = gpu_values(normal_bus_id(damaged[0].pci_bus_id), ctx.gpu_indices)
        yield problem(component, "ecc_gpu_still_advertised", *ev, specificity=88, ctx=gpu)


#: Readers in C for the node pass (a comprehension is a function of its own a node).
_DBE = attrgetter("ecc_volatile_dbe")
_VALUE = attrgetter("value")
_AT_MOST_ZERO = partial(ge, 0)  # (a sample _dcgm_xids passes over)
_REMAP_PENDING = attrgetter("remapped_rows_pending")
_CLOCK_EVENTS = attrgetter("clock_event_reasons_active")


def _memory_state(gpu: GpuInfo) -> str:
    pending = ", row remap pending" if gpu.remapped_rows_pending else ""
    return f"GPU {gpu.pci_bus_id}: volatile uncorrectable ECC = {gpu.ecc_volatile_dbe or 0}{pending}"


@check("gpu-hardware", needs=("cmd/nvidia-smi-q.xml",))
def pcie_link_width(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A busy GPU whose link trained below its slot's maximum (checks/pcie.py says when)."""
    smi = ctx.nvidia_smi
    if smi is None:
        return
    gpus = smi.gpus
    if not any(map(_UTILIZATION, gpus)):
        return  # (in C: a GPU at rest is not busy, and no shortfall is read of its link)
    path = ctx.obs.path_of("cmd", "nvidia-smi-q.xml")
    found = [*map(shortfall, map(reading_of, gpus, map(_GEN_DEVICE_MAX, gpus), map(_GEN_HOST_MAX, gpus)))]
    short = [(g, shown) for g, shown in zip(gpus, found, strict=True) if shown] if any(found) else []
    if short:
        ev = [Evidence(path, f"GPU {g.pci_bus_id}: {found}") for g, found in short]
        gpu = gpu_values(normal_bus_id(short[0][0].pci_bus_id), ctx.gpu_indices)
        yield problem(
            component, "pcie_link_downtrained", *ev, status=Status.DEGRADED, specificity=60, ctx=gpu
        )


#: Readers in C for the node pass (a comprehension is a function of its own a node).
_GEN_DEVICE_MAX = attrgetter("pcie_gen_device_max")
_UTILIZATION = attrgetter("utilization_gpu_pct")
_GEN_HOST_MAX = attrgetter("pcie_gen_host_max")


@check("gpu-hardware", needs=("cmd/nvidia-smi-q.xml",))
def thermal_slowdown(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A thermal clock-event reason active now means the GPU is throttling for heat."""
    smi = ctx.nvidia_smi
    if smi is None:
        return
    path = ctx.obs.path_of("cmd", "nvidia-smi-q.xml")
    hot = list(compress(smi.gpus, map(not_, map(_THERMAL.isdisjoint, map(_CLOCK_EVENTS, smi.gpus)))))
    if hot:
        ev = [Evidence(path, _thermal_state(g)) for g in hot]
        yield problem(component, "gpu_thermal_slowdown", *ev, status=Status.DEGRADED, specificity=55)


def _thermal_state(gpu: GpuInfo) -> str:
    reasons = ", ".join(r for r in gpu.clock_event_reasons_active if r in _THERMAL)
    limit = f" (slowdown at {gpu.slowdown_temp_c} C)" if gpu.slowdown_temp_c else ""
    return f"GPU {gpu.pci_bus_id}: {reasons} active at {gpu.temperature_c} C{limit}"
