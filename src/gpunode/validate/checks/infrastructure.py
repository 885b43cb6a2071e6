"""Infrastructure: nodes, control plane, API endpoint, version skew, host consistency."""

from __future__ import annotations

import ipaddress
from collections import defaultdict
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

from gpunode.bundle.kube import Node
from gpunode.model import Evidence
from gpunode.relazy import lazy_compile
from gpunode.unread import could_not_read, unread_lists
from gpunode.validate.context import ValidationContext, condition_status
from gpunode.validate.registry import count, failed, named, passed, skipped, unknown, validation, warned
from gpunode.validation import CATEGORY, Outcome

CAT = CATEGORY.INFRASTRUCTURE
PRESSURE = ("MemoryPressure", "DiskPressure", "PIDPressure")
CONTROL_PLANE_TAINTS = ("node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master")
_MINOR = lazy_compile(r"^v?(\d+)\.(\d+)")
# Kubelets may be this many minor versions older than the API server (never newer);
# the window grew from 2 to 3 with Kubernetes 1.28.
SKEW_SINCE_1_28 = 3
SKEW_BEFORE_1_28 = 2
UNREAD_FIX = ("Let the kubeconfig's user list nodes and pods cluster-wide (deploy/rbac-readonly.yaml), "
              "and check what answers at the server URL (a login page, an expired SSO session, a proxy); "
              "then validate again.")


@validation(
    "infra.nodes-ready",
    CAT,
    "Every node is Ready",
    fix="Check the kubelet and container runtime on the named nodes (systemctl status kubelet containerd).",
    needs=("cluster/nodes",),
)
def nodes_ready(ctx: ValidationContext) -> Outcome:
    """Ready=True on every node; False or Unknown (kubelet silent) fails."""
    nodes = ctx.facts.nodes
    if not nodes:
        return unknown("cluster/nodes.json lists no nodes")
    bad = {n: _ready_detail(node) for n, node in nodes.items() if condition_status(node, "Ready") != "True"}
    if not bad:
        return passed(f"{len(nodes)} nodes Ready", Evidence("cluster/nodes.json", "Ready=True on all"))
    evidence = [Evidence(f"node/{n} status.conditions[Ready]", detail) for n, detail in bad.items()]
    return failed(f"not Ready: {named(list(bad))}", *evidence, nodes=list(bad))


def _ready_detail(node: Node) -> str:
    cond = next((c for c in node.status.conditions if c.type == "Ready"), None)
    if cond is None:
        return "no Ready condition"
    return f"{cond.status} {cond.reason}: {cond.message}".strip()


@validation(
    "infra.node-pressure",
    CAT,
    "No node under memory, disk or PID pressure",
    fix=(
        "Free memory/disk or raise eviction thresholds on the named nodes; the kubelet evicts pods meanwhile."
    ),
    needs=("cluster/nodes",),
)
def node_pressure(ctx: ValidationContext) -> Outcome:
    """MemoryPressure, DiskPressure and PIDPressure must all be False."""
    bad: list[Evidence] = []
    unreported: list[str] = []
    for name, node in ctx.facts.nodes.items():
        for kind in PRESSURE:
            status = condition_status(node, kind)
            if status == "True":
                bad.append(Evidence(f"node/{name} status.conditions[{kind}]", _message(node, kind)))
            elif status != "False":
                unreported.append(name)
    pressured = sorted({ev.source.split()[0].removeprefix("node/") for ev in bad})
    if bad:
        return failed(f"under pressure: {named(pressured)}", *bad, nodes=pressured)
    if unreported:
        names = sorted(set(unreported))
        return unknown(f"pressure conditions not reported by {named(names)}", nodes=names)
    return passed(f"{len(ctx.facts.nodes)} nodes without pressure")


def _message(node: Node, kind: str) -> str:
    cond = next(c for c in node.status.conditions if c.type == kind)
    return f"{cond.reason}: {cond.message}"


@validation(
    "infra.control-plane-ha",
    CAT,
    "At least three control-plane nodes",
    fix="Run three (or five) control-plane nodes so etcd and the API survive the loss of one.",
    needs=("cluster/nodes",),
)
def control_plane_ha(ctx: ValidationContext) -> Outcome:
    """Three control-plane nodes tolerate one failure; one or two tolerate none."""
    names = sorted(n.metadata.name for n in ctx.control_plane)
    ev = Evidence("cluster/nodes.json", f"control-plane nodes: {named(names) or 'none'}")
    if not names:
        return skipped("no control-plane nodes registered (managed control plane)", ev)
    if len(names) >= 3:
        return passed(f"{len(names)} control-plane nodes", ev)
    return warned(f"only {len(names)} control-plane node{'s' * (len(names) > 1)}: no fault tolerance", ev)


@validation(
    "infra.control-plane-tainted",
    CAT,
    "Control-plane nodes tainted NoSchedule",
    fix="kubectl taint node NODE node-role.kubernetes.io/control-plane=:NoSchedule",
    needs=("cluster/nodes",),
)
def control_plane_tainted(ctx: ValidationContext) -> Outcome:
    """Untainted control-plane nodes take workloads (and GPU-stack DaemonSets) meant for workers."""
    if not ctx.control_plane:
        return skipped("no control-plane nodes registered")
    untainted = sorted(n.metadata.name for n in ctx.control_plane if not _has_cp_taint(n))
    if untainted:
        ev = [
            Evidence(f"node/{n} spec.taints", "no node-role.kubernetes.io/control-plane taint")
            for n in untainted
        ]
        return warned(f"not tainted NoSchedule: {named(untainted)}", *ev, nodes=untainted)
    return passed(f"{len(ctx.control_plane)} control-plane nodes tainted NoSchedule")


def _has_cp_taint(node: Node) -> bool:
    return any(
        t.key in CONTROL_PLANE_TAINTS and t.effect in ("NoSchedule", "NoExecute") for t in node.spec.taints
    )


@validation(
    "infra.api-reachable",
    CAT,
    "The kubeconfig's API endpoint answers",
    fix="Check the load balancer in front of the API servers and the kubeconfig's server URL.",
)
def api_reachable(ctx: ValidationContext) -> Outcome:
    """Live: /version answered just now; a bundle collected live answered at collection time.
    Either way it fails when the node or pod list could not be read (refused, an HTML login
    page, a redirect, a stall): an endpoint that answers /version alone is not one a readiness
    verdict can rest on (gpunode.unread)."""
    unread = unread_lists(ctx.facts.manifest)
    if unread:
        ev = Evidence("manifest.json missing", "; ".join(unread))
        return failed(could_not_read(unread), ev, fix=UNREAD_FIX)
    live = ctx.options.live
    if live is not None:
        ev = Evidence(f"GET {live.api_url}/version", live.detail)
        return (
            passed(f"{live.api_url} answered", ev)
            if live.answered
            else failed(f"{live.api_url}: {live.detail}", ev)
        )
    manifest = ctx.facts.manifest
    if manifest.source == "live":
        ev = Evidence("manifest.json", f"source=live collected_at={manifest.collected_at}")
        return passed(f"{manifest.api_server or 'API server'} answered during collection", ev)
    return skipped(f"bundle from source {manifest.source!r}: not checked against a live endpoint")


@validation(
    "infra.api-load-balanced",
    CAT,
    "API endpoint is load-balanced, not one control-plane node",
    fix="Point the kubeconfig at a load balancer or VIP in front of all API servers (controlPlaneEndpoint).",
)
def api_load_balanced(ctx: ValidationContext) -> Outcome:
    """The endpoint's host must not be a single control-plane node's name or address."""
    url = ctx.options.live.api_url if ctx.options.live else ctx.facts.manifest.api_server
    if not url:
        return unknown("the API server URL was not recorded (manifest.json api_server)")
    host = (urlsplit(url).hostname or "").lower()
    ev = Evidence("manifest.json api_server" if not ctx.options.live else "kubeconfig server", url)
    owner = _node_owning(host, ctx.control_plane)
    if owner:
        return warned(f"{url} is control-plane node {owner}'s own address: a single point of failure", ev)
    if _is_loopback(host):  # a tunnel (port-forward, ssh, a proxy) or a one-node cluster: cannot tell
        return unknown(f"{url} is a loopback address: reached through a tunnel or on a single node, "
                       "the API's own endpoint cannot be judged from here", ev)
    return passed(f"{url} is not any single control-plane node's address", ev)


def _node_owning(host: str, nodes: Sequence[Node]) -> str | None:
    for node in nodes:
        names = {node.metadata.name.lower(), *(a.address.lower() for a in node.status.addresses)}
        if host in names:
            return node.metadata.name
    return None


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@validation(
    "infra.kubelet-skew",
    CAT,
    "Kubelet versions within the supported skew of the API server",
    fix=(
        "Upgrade the named kubelets; a kubelet may be at most three minor versions older than the "
        "API server, never newer."
    ),
    needs=("cluster/nodes",),
)
def kubelet_skew(ctx: ValidationContext) -> Outcome:
    """Kubelets no newer than the API server and at most 3 (before 1.28: 2) minors older."""
    server = ctx.facts.version.get("gitVersion") or _major_minor(ctx.facts.version)
    server_minor = _minor(server)
    if server_minor is None:
        return unknown("API server version not recorded (cluster/version.json)")
    window = SKEW_SINCE_1_28 if server_minor >= (1, 28) else SKEW_BEFORE_1_28
    bad: list[Evidence] = []
    for name, node in ctx.facts.nodes.items():
        kubelet = node.status.node_info.kubelet_version
        minor = _minor(kubelet)
        if minor is None or minor > server_minor or server_minor[1] - minor[1] > window:
            bad.append(Evidence(f"node/{name} status.nodeInfo.kubeletVersion", kubelet or "not reported"))
    server_ev = Evidence("cluster/version.json gitVersion", server)
    if bad:
        names = [ev.source.split()[0].removeprefix("node/") for ev in bad]
        return failed(f"outside the supported skew of {server}: {named(names)}", server_ev, *bad, nodes=names)
    kubelets = sorted({n.status.node_info.kubelet_version for n in ctx.facts.nodes.values()})
    return passed(f"kubelets {', '.join(kubelets)} within skew of API server {server}", server_ev)


def _major_minor(version: dict[str, str]) -> str:
    major, minor = version.get("major", ""), version.get("minor", "").rstrip("+")
    return f"v{major}.{minor}" if major and minor else ""


def _minor(version: str) -> tuple[int, int] | None:
    match = _MINOR.match(version or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


@validation(
    "infra.runtime-consistent",
    CAT,
    "One container runtime and version across GPU nodes",
    fix=(
        "Install the same container runtime version on every GPU node; the toolkit configures one "
        "runtime kind cluster-wide."
    ),
    needs=("cluster/nodes",),
)
def runtime_consistent(ctx: ValidationContext) -> Outcome:
    """Different runtimes fail (one ClusterPolicy runtime setting); version drift warns."""
    groups = _gpu_node_groups(ctx, lambda n: n.status.node_info.container_runtime_version)
    if groups is None:
        return unknown("no GPU node reports its container runtime")
    kinds = {value.split("://")[0] for value in groups}
    return _consistency(
        groups, "container runtime", "status.nodeInfo.containerRuntimeVersion", strict=len(kinds) > 1
    )


@validation(
    "infra.kernel-consistent",
    CAT,
    "One kernel version across GPU nodes",
    fix=(
        "Bring the named nodes to the fleet's kernel; driver containers are built (or "
        "precompiled) per kernel."
    ),
    needs=("cluster/nodes",),
)
def kernel_consistent(ctx: ValidationContext) -> Outcome:
    """Mixed kernels mean a node missed maintenance, and per-kernel driver builds or images."""
    groups = _gpu_node_groups(ctx, lambda n: n.status.node_info.kernel_version)
    if groups is None:
        return unknown("no GPU node reports its kernel version")
    return _consistency(groups, "kernel", "status.nodeInfo.kernelVersion", strict=False)


def _gpu_node_groups(ctx: ValidationContext, value: Callable[[Node], str]) -> dict[str, list[str]] | None:
    groups: dict[str, list[str]] = defaultdict(list)
    for name in ctx.gpu_nodes:
        node = ctx.node(name)
        if node is not None and value(node):
            groups[value(node)].append(name)
    return dict(groups) or None


def _consistency(groups: dict[str, list[str]], what: str, field: str, *, strict: bool) -> Outcome:
    """One value passes; several name the nodes off the most common value."""
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    if len(ordered) == 1:
        value, names = ordered[0]
        return passed(f"{what} {value} on all {len(names)} GPU nodes", Evidence(f"nodes {field}", value))
    evidence = [
        Evidence(f"node/{names[0]} {field}", f"{value} ({count(len(names), 'node')})")
        for value, names in ordered
    ]
    odd = [n for _, names in ordered[1:] for n in names]
    summary = f"{len(ordered)} {what} versions: " + "; ".join(f"{v} on {named(ns)}" for v, ns in ordered)
    verdict = failed if strict else warned
    return verdict(summary, *evidence, nodes=odd)
