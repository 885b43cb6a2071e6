"""Skipped is unknown: what gpunode could not read never becomes a verdict.

Two kinds of input are read only in part, and a check that meets the gap would judge it
as if it were a fact:

- **an item skipped as malformed** (bundle.load keeps the rest of its list): the node's
  CSINode skipped reads as a node whose CSI driver never registered (``csi_not_registered``);
  an NFD worker pod or a labelled Node skipped as "no NFD" (``nfd_not_deployed``);
- **a probe value gpunode does not know** (a newer driver's recovery action ``8``, a fabric
  state or port state outside the vocabulary, an NVML init error that is no NVML error, a
  negative count): the probe checks read anything but the values they know as a failure.

A ``Doubt`` names the causes such a gap produces, where their evidence comes from and why
it is not to be trusted. ``settle`` runs over a node's (or the cluster's) judgements before
any status is read: a finding a doubt explains is dropped, the component's positive
findings go with it (what rests on the gap is not affirmed either), and an ``unknown``
finding says why. Problems with other evidence stay: a crash-looping CSI pod is still
failed. Nothing here reads files; the loader records the skipped items
(``ClusterFacts.skipped``) and the probe is the one the checks parsed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Protocol

from gpunode.checks.context import NodeContext
from gpunode.facts import ClusterFacts, SkippedItems
from gpunode.model import PROBLEMS, Evidence, Finding, Status
from gpunode.probe.nvml import NvmlGpu
from gpunode.probe.result import ProbeResult

PROBE_FILE = "gpunode-probe.json"

#: Values the probe writes (gpunode.probe.nvml, parse.infiniband); anything else is unknown to
#: this engine (tests/core/test_doubt.py holds the probe to these sets).
RECOVERY_ACTIONS = frozenset({"None", "GPU Reset Required", "Node Reboot Required", "Drain P2P",
                              "Drain and Reset", "Recover IMEX Domain", "Bus Reset", "System Reboot"})
FABRIC_STATES = frozenset({"Not Started", "In Progress", "Completed"})
MIG_MODES = frozenset({"Enabled", "Disabled"})
#: InfiniBand port states (ib_verbs): NOP, DOWN, INIT, ARMED, ACTIVE, ACTIVE_DEFER.
PORT_STATES = frozenset(range(6))
#: NVML's return codes (nvml.h ``NVML_ERROR_*``, lower case, as the probe names them) and the
#: probe's own words for an NVML step that did not run.
NVML_ERRORS = frozenset({
    "uninitialized", "invalid_argument", "not_supported", "no_permission", "already_initialized",
    "not_found", "insufficient_size", "insufficient_power", "driver_not_loaded", "timeout",
    "irq_issue", "library_not_found", "function_not_found", "corrupted_inforom", "gpu_is_lost",
    "reset_required", "operating_system", "lib_rm_version_mismatch", "in_use", "memory", "no_data",
    "vgpu_ecc_not_supported", "insufficient_resources", "freq_not_supported",
    "argument_version_mismatch", "deprecated", "not_ready", "gpu_not_found", "invalid_state",
    "reset_type_not_supported", "unknown"})
PROBE_WORDS = frozenset({"bindings_missing", "probe_error"})


@dataclass(frozen=True)
class Doubt:
    """Findings of ``causes`` whose evidence all comes from ``source`` (any, when None) rest on
    data gpunode could not read: ``reason`` says which."""

    causes: frozenset[str]
    reason: str
    source: str | None = None
    #: where the unreadable data is, for the evidence shown (default: ``source``)
    at: str = ""

    def explains(self, finding: Finding) -> bool:
        if finding.status not in PROBLEMS or finding.cause not in self.causes:
            return False
        return self.source is None or all(ev.source == self.source for ev in finding.evidence)


class _Judged(Protocol):
    """What ``settle`` needs of a judgement (diagnose.Judgement)."""

    findings: list[Finding]


def settle(judged: Mapping[str, _Judged], doubts: Iterable[Doubt]) -> None:
    """Make every component a doubt explains ``unknown`` with the reason, unless a problem
    with other evidence stands. Call before any judgement's status is read (it is cached)."""
    doubts = tuple(doubts)
    if not doubts:
        return
    for component, judgement in judged.items():
        acting = [d for d in doubts if any(d.explains(f) for f in judgement.findings)]
        if not acting:
            continue
        kept = [f for f in judgement.findings
                if (f.status in PROBLEMS and not any(d.explains(f) for d in acting))
                or f.status == Status.UNKNOWN]
        for doubt in acting:
            seen = [ev for f in judgement.findings if doubt.explains(f) for ev in f.evidence]
            shown = Evidence(doubt.at or doubt.source or "bundle", doubt.reason)
            kept.append(Finding(component, Status.UNKNOWN, "", (shown, *seen[:3]),
                                {"summary": doubt.reason}))
        judgement.findings[:] = kept


# --- doubts of one node --------------------------------------------------------------------


def doubts_of(ctx: NodeContext) -> list[Doubt]:
    """``node_doubts`` of the node a check context is about (nothing to look at: none)."""
    has_probe = PROBE_FILE in ctx.obs.cmd
    if not ctx.facts.skipped and not has_probe:
        return []
    probe = ctx.probe if has_probe else None
    return node_doubts(ctx.facts, ctx.name, probe, ctx.obs.path_of("cmd", PROBE_FILE))


def node_doubts(facts: ClusterFacts, node: str, probe: ProbeResult | None,
                probe_source: str | None) -> list[Doubt]:
    """What ``node``'s checks may judge from data gpunode could not read: its list items
    skipped as malformed, values of its probe gpunode does not know (``probe``: the node's
    parsed probe facts, from ``probe_source``)."""
    found = list(_skipped_here(facts, node)) if facts.skipped else []
    if probe is not None and probe_source is not None:
        found += probe_doubts(probe, probe_source)
    return found


def _skipped_here(facts: ClusterFacts, node: str) -> Iterator[Doubt]:
    csinodes = facts.skipped.get("csinodes")
    if csinodes is not None and node not in facts.csi_nodes and csinodes.may_be(node):
        said = (f"CSINode {node} was skipped as malformed" if node in csinodes.names
                else f"this node's CSINode may be one of {_items(csinodes)} skipped as malformed")
        yield Doubt(frozenset({"csi_not_registered"}),
                    f"{said} (cluster/csinodes.json {csinodes.first}): whether a CSI driver "
                    "registered here is unknown", at="cluster/csinodes.json")
    pods = facts.skipped.get("pods")
    if pods is not None and pods.may_be_on(node):
        yield Doubt(frozenset({"nfd_not_deployed"}),
                    f"{_items(pods)} of cluster/pods.json skipped as malformed ({pods.first}) may "
                    "include this node's NFD worker: whether NFD runs here is unknown",
                    at="cluster/pods.json")


def cluster_doubts(facts: ClusterFacts) -> list[Doubt]:
    """The cluster checks' share: no NFD anywhere rests on every pod and every Node label."""
    lists = [name for name in ("pods", "nodes") if name in facts.skipped]
    if not lists:
        return []
    lost = [f"{_items(facts.skipped[name])} of cluster/{name}.json ({facts.skipped[name].first})"
            for name in lists]
    return [Doubt(frozenset({"nfd_not_deployed"}),
                  f"{' and '.join(lost)} skipped as malformed may include an NFD pod or NFD's "
                  "node labels: whether NFD is deployed is unknown",
                  at=", ".join(f"cluster/{name}.json" for name in lists))]


#: Lists whose items belong to one node by name, and pods (by ``spec.nodeName``).
_BY_NODE_NAME = frozenset({"nodes", "csinodes"})


def skipped_behind(facts: ClusterFacts, needs: Iterable[str], nodes: Iterable[str] = ()) -> list[str]:
    """Why a verdict that read ``needs`` (``cluster/<list>``) may rest on items skipped as
    malformed: one line per such list, empty when none. With ``nodes`` (the verdict names
    them) a list whose items belong to a node counts only where a skipped item may be one of
    theirs; any other list with skipped items always counts."""
    named = list(nodes)
    lines = []
    for need in needs:
        plural = need.removeprefix("cluster/")
        skipped = facts.skipped.get(plural)
        if skipped is None:
            continue
        if named and plural in _BY_NODE_NAME and not any(skipped.may_be(n) for n in named):
            continue
        if named and plural == "pods" and not any(skipped.may_be_on(n) for n in named):
            continue
        lines.append(f"cluster/{plural}.json: {_items(skipped)} skipped as malformed ({skipped.first})")
    return lines


def _items(skipped: SkippedItems) -> str:
    return "1 item" if skipped.count == 1 else f"{skipped.count:,} items"


# --- values of the probe gpunode does not know ----------------------------------------------


def probe_doubts(probe: ProbeResult, source: str) -> list[Doubt]:
    """One doubt per probe value outside the vocabulary the probe checks know, for the cause
    that value would otherwise produce (``source``: the probe file's bundle path)."""
    nvml = probe.nvml
    found: list[tuple[str, str, object, Iterable[object]]] = []  # cause, what, value, known values
    error = nvml.init_error
    if not nvml.init_ok and error is not None and error not in NVML_ERRORS | PROBE_WORDS:
        found.append(("nvidia_smi_failed", "NVML init error", error, ()))
    if nvml.device_count is not None and nvml.device_count < 0:
        found.append(("gpu_missing", "NVML GPU count", nvml.device_count, ()))
    for gpu in nvml.gpus:
        found += _gpu_values(gpu)
    found += [("rdma_port_down", f"RDMA port {port.device}/{port.port} state",
               f"{port.state_id}: {port.state}", PORT_STATES)
              for port in probe.host.rdma_ports if port.state_id not in PORT_STATES]
    return [Doubt(frozenset({cause}), _unknown_value(what, value, known), source)
            for cause, what, value, known in found]


def _gpu_values(gpu: NvmlGpu) -> list[tuple[str, str, object, Iterable[object]]]:
    name = f"GPU {gpu.index}"
    found: list[tuple[str, str, object, Iterable[object]]] = []
    if gpu.recovery_action is not None and gpu.recovery_action not in RECOVERY_ACTIONS:
        found.append(("xid_154_recovery_action", f"{name} recovery action", gpu.recovery_action,
                      RECOVERY_ACTIONS))
    if gpu.fabric_state is not None and gpu.fabric_state not in FABRIC_STATES:
        found.append(("fabric_manager_not_running", f"{name} fabric state", gpu.fabric_state, FABRIC_STATES))
    status = gpu.fabric_status
    if status is not None and status != "Success" and status not in NVML_ERRORS:
        found.append(("fabric_registration_failed", f"{name} fabric status", status, ()))
    for mode, value in (("current", gpu.mig_mode_current), ("pending", gpu.mig_mode_pending)):
        if value is not None and value not in MIG_MODES:
            found.append(("mig_mode_change_pending", f"{name} {mode} MIG mode", value, MIG_MODES))
    if gpu.ecc_volatile_dbe is not None and gpu.ecc_volatile_dbe < 0:
        found.append(("uncorrectable_ecc", f"{name} uncorrectable ECC count", gpu.ecc_volatile_dbe, ()))
    thermal = any("thermal" in reason for reason in gpu.clock_event_reasons_active or ())
    if gpu.slowdown_temp_c is not None and gpu.slowdown_temp_c <= 0 and not thermal:
        found.append(("gpu_thermal_slowdown", f"{name} slowdown temperature", gpu.slowdown_temp_c, ()))
    return found


def _unknown_value(what: str, value: object, known: Iterable[object]) -> str:
    listed = f" (known: {', '.join(sorted(map(str, known)))})" if known else ""
    return f"gpunode probe: {what} {value!r} is not a value gpunode knows{listed}: what it means is unknown"
