"""The SR-IOV Network Operator's config daemon: the failure its running log ends on, by the
layer the failing line names.

The config daemon (k8snetworkplumbingwg/sriov-network-operator, ``sriov-network-config-daemon``,
also shipped by NVIDIA's Network Operator and OpenShift) applies the operator's policies on
its node: it discovers the SR-IOV NICs, creates their VFs through sysfs, sets their link type,
MTU and admin MAC over netlink and the NIC's firmware settings with mstconfig. It keeps running
and ready after a policy it could not apply; the node's SriovNetworkNodeState then says
``syncStatus: Failed`` and its log says why, at error level (zap's console or JSON encoder
today, klog's ``E`` lines in older releases). A sync that succeeded since ("syncStatus:
Succeeded", the state changing "to: Succeeded") healed what came before it.

The last error line after the last success is read by the layer its words name (the catalog's
``named_by``, ``gpunode.checks.named``): the kernel's netlink refusing to return a PF's link
("message too long", a kernel capping one netlink message at a page while the PF has many VFs),
the NIC's link or firmware refusing a VF setting (an admin MAC on an InfiniBand link: the RDMA
links). A line that names no other layer is the daemon's own, with its class; one a catalogued
cause reads (the VF count sysfs refused: ``sriov_vfs_missing``) is left to that cause's
signature. A connection that failed for now (the API server) is a retry, not a failure.

The operator's own verdict is read too: the node's SriovNetworkNodeState (named after the node,
in the operator's namespace) says ``syncStatus: Failed`` with the error of the sync that failed
in ``lastSyncError`` (pkg/daemon/status.go updateSyncState; in systemd mode the phase before it,
"pre: ..." or "post: ..."). That error is read as the daemon's failing line is, by the layer it
names; the VF count sysfs refused (``sriov_numvfs``: "cannot allocate memory" where the node's
BIOS leaves SR-IOV or VT-d off) is the catalogued cause whose signature reads the daemon's log
(``sriov_vfs_missing`` of the RDMA links). A state that failed with no error text is the
daemon's, its layer not guessed. Succeeded and InProgress (which keeps the last error until the
next sync ends) say nothing here, nor does a state named after another node.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

import msgspec

from gpunode.bundle.kube import SriovNetworkNodeState
from gpunode.checks.base import check, in_fleet
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import as_catalogued, line_finding
from gpunode.checks.named import named_on_node
from gpunode.decisive import MAX_LINE, Decisive, severity
from gpunode.facts import ClusterFacts, LogFile
from gpunode.kb import Cause, KnowledgeBase
from gpunode.model import Finding, Status
from gpunode.relazy import lazy_compile

COMPONENT = "sriov-config-daemon"
#: The layers other than its own that the daemon's lines name, each judged by its own check here.
_NAMED = ("kernel", "rdma-links")
#: zap's console encoder at error level, with or without its time: "ERROR<TAB>caller<TAB>msg".
_ZAP_ERROR = lazy_compile(r"^(?:\S+\t)?ERROR\t")
#: zap's console fields after the message ('{"device": "0000:29:00.0", "error": "message too long"}'):
#: the error the line carries.
_ERROR_FIELD = lazy_compile(r'"error":\s?"((?:[^"\\]|\\.)*)"')
#: A sync that succeeded: the node state's status as the daemon logs it (klog's
#: "setNodeStateStatus(): syncStatus: Succeeded", zap's "NewSyncStatus": "Succeeded"), or the
#: state changing to it ("Status changed from: InProgress to: Succeeded").
_SUCCEEDED = lazy_compile(r'(?i:sync ?status\W{1,4}Succeeded\b|\bstatus changed from: \w+ to: Succeeded\b)')
#: What fails for now and is retried: the API server out of reach, an update that lost a race.
_FOR_NOW = lazy_compile(r"(?i:\bthe object has been modified\b|\bconnection refused\b|\bi/o timeout\b|"
                        r"\bcontext deadline exceeded\b|\bTLS handshake timeout\b|\bEOF\b)")


def _running_logs(ctx: NodeContext) -> Iterator[LogFile]:
    for sp in ctx.stack_pods(COMPONENT):
        running = {cs.name for cs in sp.pod.status.container_statuses if cs.state.running is not None}
        for log in ctx.logs_of(sp.pod):
            if not log.previous and log.container in running:
                yield log


def _as_read(line: str) -> str:
    """The line as its class and the catalog read it: a zap console line's message (the
    field with words, after its time, level and caller) with its error field after it
    ('DiscoverSriovDevices(): unable to get Link for device, skipping: message too long')."""
    if not _ZAP_ERROR.match(line):
        return line
    parts = [p.strip() for p in line.split("\t")]
    message = next((p for p in parts[1:] if " " in p and not p.startswith("{")), parts[-1])
    error = _ERROR_FIELD.search(line)
    return f"{message}: {error.group(1)}" if error else message


def last_failure(lines: tuple[str, ...] | list[str]) -> tuple[int, str] | None:
    """The index and the line of the last error the daemon logged after its last successful
    sync, None where there is none (or it failed for now)."""
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index]
        if _SUCCEEDED.search(line):
            return None
        if not (_ZAP_ERROR.match(line) or severity(line) == 2):
            continue
        if _FOR_NOW.search(line):
            return None
        return index, line
    return None


def _layer(ctx: NodeContext, read: str, line: str) -> str:
    """The layer a failure the daemon reports names (``_NAMED``), else the daemon's own."""
    target = named_on_node(ctx, read) or named_on_node(ctx, line)
    return target if target in _NAMED else COMPONENT


def _left_to_signature(kb: KnowledgeBase, read: str) -> bool:
    """Whether a catalogued cause of another component reads ``read`` and none of the
    daemon's own does: the line is that cause's symptom."""
    return kb.catalogued_in(COMPONENT, read) is None and kb.catalogued_elsewhere(COMPONENT, read) is not None


def _finding(ctx: NodeContext, component: str) -> Finding | None:
    """The failure the daemon's running log ends on, when it names ``component``."""
    for log in _running_logs(ctx):
        failed = last_failure(log.lines)
        if failed is None:
            continue
        index, line = failed
        read = _as_read(line)
        target = _layer(ctx, read, line)
        if target == COMPONENT and _left_to_signature(ctx.kb, read):
            continue  # a catalogued cause's signature reads it (sriov_vfs_missing)
        if target != component:
            continue
        found = Decisive(index + 1, line.strip()[:MAX_LINE], 2)
        where = f"{log.path}:{index + 1}"
        cls = ctx.kb.line_class(read)
        verb = "keeps running after" if target == COMPONENT else f"refuses what {COMPONENT} sets"
        finding = line_finding(ctx.kb, target, Status.DEGRADED, found, where, verb=verb,
                               line_class=cls.code if cls is not None else None,
                               namespace=log.namespace, pod=log.pod, container=log.container,
                               standalone="true", seen_in=COMPONENT)
        return as_catalogued(ctx.kb, finding, read)
    return None


def _named_below(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The config daemon's last failure charged to ``component``, a layer its line names; read
    only on a node where the daemon runs."""
    if ctx.stack_pods(COMPONENT):
        found = _finding(ctx, component)
        if found is not None:
            yield found


@check(COMPONENT)
def config_daemon_failure(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The config daemon's last failure, where it names no other layer."""
    found = _finding(ctx, component)
    if found is not None:
        yield found


@check("kernel")
def config_daemon_kernel(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The config daemon's last failure, where the kernel refused it (netlink)."""
    yield from _named_below(ctx, component)


@check("rdma-links")
def config_daemon_links(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The config daemon's last failure, where the NIC's link or firmware refused it."""
    yield from _named_below(ctx, component)


# -- The operator's verdict: the node's SriovNetworkNodeState ------------------------------

#: ``status.syncStatus`` of a sync that failed (sriov-network-operator pkg/consts: SyncStatusFailed).
_FAILED = "Failed"


def _any_failed(facts: ClusterFacts) -> bool:
    """Whether any collected node state says its sync failed (most bundles have none)."""
    return any(s.status.sync_status == _FAILED for s in facts.sriov_node_states or ())


def _failed_by_node(states: tuple[SriovNetworkNodeState, ...] | None) -> dict[str, SriovNetworkNodeState]:
    """The SriovNetworkNodeStates whose last sync failed, by the node each is named after (the
    first where two share a name)."""
    out: dict[str, SriovNetworkNodeState] = {}
    for state in states or ():
        if state.status.sync_status == _FAILED:
            out.setdefault(state.metadata.name, state)
    return out


def failed_state(states: tuple[SriovNetworkNodeState, ...] | None, node: str) -> SriovNetworkNodeState | None:
    """The SriovNetworkNodeState of ``node`` (the operator names it after the node) whose last
    sync failed, or None."""
    return _failed_by_node(states).get(node)


#: The key of the failed states by node in ``ClusterFacts.shared``: indexed once for the
#: fleet, not scanned again for each node and each of the three checks that read it.
_SHARED_KEY = "sriov_config_daemon.failed_by_node"


def _node_failed_state(ctx: NodeContext) -> SriovNetworkNodeState | None:
    """This node's failed SriovNetworkNodeState, from the fleet's index (``_SHARED_KEY``)."""
    shared = ctx.facts.shared
    index = shared.get(_SHARED_KEY)
    if index is None:
        index = shared[_SHARED_KEY] = _failed_by_node(ctx.facts.sriov_node_states)
    return cast("dict[str, SriovNetworkNodeState]", index).get(ctx.name)


def _daemon_signature(kb: KnowledgeBase, text: str) -> Cause | None:
    """The catalogued cause of another layer whose log signature is read in the daemon's pods
    (``seen_in``, the knowledge base's ``traced`` signatures) and matches ``text``: what that
    cause reads in the daemon's log, read in the error the daemon recorded in its node state."""
    for cause, m in kb.traced:
        if (cause.component not in ("*", COMPONENT) and m.source == "log" and COMPONENT in m.seen_in
                and m.regex.search(text) and not (m.unless_regex and m.unless_regex.search(text))):
            return cause
    return None


def _state_finding(ctx: NodeContext, component: str) -> Finding | None:
    """The failure the node's SriovNetworkNodeState records, when it is ``component``'s."""
    state = _node_failed_state(ctx)
    if state is None:
        return None
    meta = state.metadata
    where = f"sriovnetworknodestate/{meta.namespace}/{meta.name} status"
    error = " ".join(state.status.last_sync_error.splitlines()).strip()
    if not error:  # the operator failed the sync and said no more: its daemon, no layer guessed
        if component != COMPONENT:
            return None
        found = Decisive(1, f"syncStatus: {_FAILED}", 2)
        return line_finding(ctx.kb, COMPONENT, Status.DEGRADED, found, f"{where}.syncStatus",
                            verb="records a failed sync without its error", namespace=meta.namespace,
                            standalone="true")
    target = _layer(ctx, error, error)
    cause = None
    if target == COMPONENT and ctx.kb.catalogued_in(COMPONENT, error) is None:
        cause = _daemon_signature(ctx.kb, error)
        target = cause.component if cause is not None else COMPONENT
    if target != component:
        return None
    found = Decisive(1, error[:MAX_LINE], 2)
    verb = "records its sync failed after" if target == COMPONENT else f"refuses what {COMPONENT} sets"
    finding = line_finding(ctx.kb, target, Status.DEGRADED, found, f"{where}.lastSyncError", verb=verb,
                           namespace=meta.namespace, standalone="true", seen_in=COMPONENT)
    if cause is None:
        return as_catalogued(ctx.kb, finding, error)
    return msgspec.structs.replace(finding, cause=cause.code,
                                   specificity=max(cause.specificity, finding.specificity))


_STATE_FAILED = in_fleet(_any_failed)


@check(COMPONENT, may_find=_STATE_FAILED)
def node_state_failed(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The failed sync the node's SriovNetworkNodeState records, where its error names no
    other layer (or it gives none)."""
    found = _state_finding(ctx, component)
    if found is not None:
        yield found


@check("kernel", may_find=_STATE_FAILED)
def node_state_kernel(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The failed sync the node's SriovNetworkNodeState records, where the kernel refused it."""
    found = _state_finding(ctx, component)
    if found is not None:
        yield found


@check("rdma-links", may_find=_STATE_FAILED)
def node_state_links(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The failed sync the node's SriovNetworkNodeState records, where the NIC refused it (its
    VFs, its link or firmware settings)."""
    found = _state_finding(ctx, component)
    if found is not None:
        yield found
