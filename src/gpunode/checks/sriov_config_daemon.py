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
"""

from __future__ import annotations

from collections.abc import Iterator

from gpunode.checks.base import check
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import as_catalogued, line_finding
from gpunode.checks.named import named_on_node
from gpunode.decisive import MAX_LINE, Decisive, severity
from gpunode.facts import LogFile
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


def _finding(ctx: NodeContext, component: str) -> Finding | None:
    """The failure the daemon's running log ends on, when it names ``component``."""
    for log in _running_logs(ctx):
        failed = last_failure(log.lines)
        if failed is None:
            continue
        index, line = failed
        read = _as_read(line)
        target = named_on_node(ctx, read) or named_on_node(ctx, line)
        if target not in _NAMED:
            target = COMPONENT
            if ctx.kb.catalogued_in(COMPONENT, read) is None and ctx.kb.catalogued_elsewhere(COMPONENT, read):
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
