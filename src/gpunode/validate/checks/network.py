"""Network: Network Operator, OFED, RDMA resources and ports, GPUDirect RDMA, CNI."""

from __future__ import annotations

import json
from collections.abc import Iterable

from gpunode.bundle.kube import CustomResource, Node, Pod
from gpunode.checks.context import NodeContext
from gpunode.checks.pods import judge_pod
from gpunode.model import Evidence, Status
from gpunode.parse.infiniband import RdmaPort, parse_rdma_port
from gpunode.relazy import lazy_compile
from gpunode.validate.context import (
    WANTED_IMAGES,
    WANTED_OWNERS,
    ValidationContext,
    condition_status,
    quantity,
)
from gpunode.validate.registry import (
    failed,
    named,
    node_validation,
    passed,
    skipped,
    unknown,
    validation,
    warned,
)
from gpunode.validation import CATEGORY, Outcome

CAT = CATEGORY.NETWORK
MELLANOX_LABEL = "feature.node.kubernetes.io/pci-15b3.present"
MOFED_WAIT = "network.nvidia.com/operator.mofed.wait"
PORT_ACTIVE, PHYS_LINK_UP = 4, 5
PEERMEM_MARKER = "run/nvidia/validations/nvidia-peermem-ready"
_IB_PORT_FILE = lazy_compile(r"^sys/class/infiniband/([^/]+)/ports/(\d+)/state$")


@validation(
    "network.operator-ready",
    CAT,
    "Network Operator and NicClusterPolicy ready",
    fix="kubectl describe nicclusterpolicy; check the network-operator pod's log for the failing state.",
)
def operator_ready(ctx: ValidationContext) -> Outcome:
    """Where installed: operator pods healthy and every NicClusterPolicy state ready."""
    pods = [sp.pod for sp in ctx.facts.cluster_pods.get("network-operator", [])]
    policies = ctx.facts.nic_policies
    if not pods and not policies:
        return skipped("Network Operator not installed")
    bad = [f for f in (judge_pod(p, "network-operator") for p in pods) if f.status != Status.OK]
    if bad:
        return failed("network-operator pod unhealthy", *(ev for f in bad for ev in f.evidence))
    if not ctx.facts.has("nicclusterpolicies"):
        return unknown("NicClusterPolicies not collected (cluster/nicclusterpolicies.json)")
    if not policies:
        return warned("operator runs but no NicClusterPolicy exists: it deploys nothing")
    not_ready = [p for p in policies if p.status.state != "ready"]
    if not_ready:
        evidence = [
            Evidence(f"nicclusterpolicy/{p.metadata.name} status", _policy_detail(p)) for p in not_ready
        ]
        return failed(
            f"NicClusterPolicy {not_ready[0].metadata.name} is {not_ready[0].status.state}", *evidence
        )
    names = ", ".join(p.metadata.name for p in policies)
    return passed(
        f"NicClusterPolicy {names} ready", Evidence(f"nicclusterpolicy/{names} status.state", "ready")
    )


def _policy_detail(policy: CustomResource) -> str:
    bad = [s for s in policy.status.applied_states if s.get("state") not in ("ready", "ignore")]
    states = "; ".join(f"{s.get('name')}={s.get('state')}" for s in bad)
    return f"state={policy.status.state or 'unset'}" + (f" ({states})" if states else "")


def has_rdma_nics(node: Node | None) -> bool:
    return node is not None and node.metadata.labels.get(MELLANOX_LABEL) == "true"


def _policy_section(ctx: ValidationContext, section: str) -> dict[str, object] | None:
    for policy in ctx.facts.nic_policies:
        value = policy.spec.get(section)
        if isinstance(value, dict):
            return value
    return None


@node_validation(
    "network.ofed-ready",
    CAT,
    "OFED driver ready on GPU nodes with RDMA NICs",
    fix=(
        "Check the mofed/doca-driver pod's log on the node (driver build, kernel headers, repository access)."
    ),
)
def ofed_ready(ctx: ValidationContext, node: NodeContext) -> Outcome | None:
    """Network-Operator OFED pod Running and ready (mofed.wait=false); host OFED: mlx5 modules loaded."""
    if not has_rdma_nics(node.node):
        return None
    assert node.node is not None
    if _policy_section(ctx, "ofedDriver") is None:
        return _host_ofed(node)
    pods = [sp.pod for sp in node.stack_pods("ofed")]
    if not pods:
        return failed(
            "no OFED driver pod on the node", Evidence("cluster/pods.json", f"no mofed pod on {node.name}")
        )
    findings = [judge_pod(p, "ofed") for p in pods]
    bad = [f for f in findings if f.status != Status.OK]
    if bad:
        return failed(f"OFED driver pod not ready ({_pod_names(pods)})", *bad[0].evidence)
    wait = node.node.metadata.labels.get(MOFED_WAIT)
    if wait == "true":
        return failed(
            f"{MOFED_WAIT}=true", Evidence(f"node/{node.name} metadata.labels", f"{MOFED_WAIT}=true")
        )
    return passed("OFED driver pod ready", *findings[0].evidence)


def _host_ofed(node: NodeContext) -> Outcome:
    modules = node.modules
    if modules is None:
        return unknown("host OFED: loaded kernel modules not observed")
    path = node.obs.path_of("cmd", "lsmod.txt")
    if "mlx5_core" in modules and "mlx5_ib" in modules:
        return passed("host OFED: mlx5_core and mlx5_ib loaded", Evidence(path, "mlx5_core, mlx5_ib"))
    missing = [m for m in ("mlx5_core", "mlx5_ib") if m not in modules]
    return failed(f"host OFED: {', '.join(missing)} not loaded", Evidence(path, f"no {', '.join(missing)}"))


def _pod_names(pods: Iterable[Pod]) -> str:
    return ", ".join(p.metadata.name for p in pods)


@node_validation(
    "network.rdma-allocatable",
    CAT,
    "RDMA / SR-IOV resources allocatable on GPU nodes",
    fix=(
        "Check the RDMA shared device plugin (or SR-IOV device plugin) pod and its device "
        "selectors on the node."
    ),
)
def rdma_allocatable(ctx: ValidationContext, node: NodeContext) -> Outcome | None:
    """Every RDMA/SR-IOV resource the cluster configures is allocatable (>0) on each RDMA node."""
    expected = ctx.memo("network-resources", lambda: _expected_network_resources(ctx))
    if node.node is None or not (has_rdma_nics(node.node) or expected & set(node.node.status.capacity)):
        return None
    where = f"node/{node.name} status.allocatable"
    if not expected:
        return warned("RDMA NICs present but no RDMA or SR-IOV resource is advertised in the cluster")
    alloc = node.node.status.allocatable
    shown = ", ".join(f"{r}={alloc.get(r, 'absent')}" for r in sorted(expected))
    empty = sorted(r for r in expected if quantity(alloc.get(r)) <= 0)
    if empty:
        return failed(f"not allocatable: {', '.join(empty)}", Evidence(where, shown))
    return passed(shown, Evidence(where, shown))


def _expected_network_resources(ctx: ValidationContext) -> set[str]:
    """Resources named in the NicClusterPolicy plugin configs, plus rdma/* seen on any GPU node."""
    names = {
        key
        for name in ctx.gpu_nodes
        if (n := ctx.node(name)) is not None
        for key in n.status.capacity
        if key.startswith("rdma/")
    }
    rdma = _policy_section(ctx, "rdmaSharedDevicePlugin")
    for entry in _config_list(rdma, "configList"):
        names.add(f"{entry.get('resourcePrefix') or 'rdma'}/{entry.get('resourceName')}")
    sriov = _policy_section(ctx, "sriovDevicePlugin")
    for entry in _config_list(sriov, "resourceList"):
        names.add(f"{entry.get('resourcePrefix') or 'nvidia.com'}/{entry.get('resourceName')}")
    return {n for n in names if not n.endswith("/None")}


def _config_list(section: dict[str, object] | None, key: str) -> list[dict[str, object]]:
    """The JSON document in a plugin section's ``config`` string (its resource list)."""
    raw = section.get("config") if section else None
    try:
        doc = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        return []
    entries = doc.get(key, []) if isinstance(doc, dict) else []
    return [e for e in entries if isinstance(e, dict)]


@node_validation(
    "network.rdma-ports",
    CAT,
    "RDMA ports up at the expected rate",
    fix=(
        "Check cabling, transceivers and switch ports of the named HCAs (ibstat, mlxlink); reseat or replace."
    ),
)
def rdma_ports(ctx: ValidationContext, node: NodeContext) -> Outcome | None:
    """Port state ACTIVE, physical state LinkUp, rate at the expected speed (node exporter or probe)."""
    ports, source = _ports(node)
    if not ports:
        if has_rdma_nics(node.node):
            return unknown("RDMA NICs present but no port state observed (node exporter or probe)")
        return None
    down = [
        p for p in ports if p.state_id != PORT_ACTIVE or p.phys_state not in ("LinkUp", str(PHYS_LINK_UP))
    ]
    rates = [p.rate_gbps for p in ports if p.rate_gbps]
    want = ctx.options.rdma_rate_gbps or (max(rates) if rates else None)
    slow = [p for p in ports if want and p.rate_gbps and p.rate_gbps < want]
    evidence = [Evidence(source, _port_line(p)) for p in [*down, *slow][:4]]
    if down:
        return failed(f"{len(down)} of {len(ports)} ports not active: {_port_names(down)}", *evidence)
    if slow:
        return warned(f"{_port_names(slow)} below {want:g} Gb/s", *evidence)
    rate = f" at {want:g} Gb/s" if want else ""
    return passed(f"{len(ports)} ports ACTIVE{rate}", Evidence(source, f"{len(ports)} ports state 4 LinkUp"))


def _ports(node: NodeContext) -> tuple[list[RdmaPort], str]:
    samples = node.node_exporter_samples or []
    by_port: dict[tuple[str, str], dict[str, float]] = {}
    for s in samples:
        if s.name.startswith("node_infiniband_") and "device" in s.labels and "port" in s.labels:
            by_port.setdefault((s.labels["device"], s.labels["port"]), {})[s.name] = s.value
    decoded = [_port_from_metrics(dev, port, v) for (dev, port), v in sorted(by_port.items())]
    ports = [p for p in decoded if p is not None]
    if ports:
        return ports, node.obs.path_of("metrics", "node-exporter.prom")
    probe = node.probe
    if probe is not None and probe.host.rdma_ports:
        return list(probe.host.rdma_ports), node.obs.path_of("cmd", "gpunode-probe.json")
    return _ports_from_sysfs(node), node.obs.path_of("files", "sys/class/infiniband")


def _port_from_metrics(device: str, port: str, values: dict[str, float]) -> RdmaPort | None:
    state = values.get("node_infiniband_state_id")
    if state is None:
        return None
    phys = values.get("node_infiniband_physical_state_id")
    rate = values.get("node_infiniband_rate_bytes_per_second")
    return RdmaPort(
        device=device,
        port=int(port),
        state="ACTIVE" if state == PORT_ACTIVE else str(int(state)),
        state_id=int(state),
        phys_state="LinkUp" if phys == PHYS_LINK_UP else str(int(phys or 0)),
        link_layer="",
        rate_gbps=rate * 8 / 1e9 if rate else None,
    )


def _ports_from_sysfs(node: NodeContext) -> list[RdmaPort]:
    out = []
    for path in sorted(node.obs.files):
        match = _IB_PORT_FILE.match(path)
        if match:
            device, port = match.group(1), int(match.group(2))
            prefix = f"sys/class/infiniband/{device}/ports/{port}/"
            files = {p.removeprefix(prefix): t for p, t in node.obs.files.items() if p.startswith(prefix)}
            out.append(parse_rdma_port(device, port, files))
    return out


def _port_line(port: RdmaPort) -> str:
    rate = f" {port.rate_gbps:g} Gb/s" if port.rate_gbps else ""
    return f"{port.device}/{port.port} state {port.state_id} {port.state} phys {port.phys_state}{rate}"


def _port_names(ports: list[RdmaPort]) -> str:
    return named([f"{p.device}/{p.port}" for p in ports])


@node_validation(
    "network.peermem",
    CAT,
    "nvidia_peermem loaded where GPUDirect RDMA is configured",
    fix="Check the nvidia-peermem-ctr container of the driver pod; it needs the OFED driver loaded first.",
)
def peermem_loaded(ctx: ValidationContext, node: NodeContext) -> Outcome | None:
    """With ClusterPolicy driver.rdma.enabled (or a peermem sidecar), the module must be loaded."""
    if not _gpudirect_configured(node):
        return None
    modules = node.modules
    if modules is not None:
        path = node.obs.path_of("cmd", "lsmod.txt")
        if "nvidia_peermem" in modules:
            return passed("nvidia_peermem loaded", Evidence(path, "nvidia_peermem"))
        return failed(
            "GPUDirect RDMA configured but nvidia_peermem is not loaded", Evidence(path, "no nvidia_peermem")
        )
    if PEERMEM_MARKER in node.obs.files:
        return passed(
            "nvidia-peermem-ready marker present",
            Evidence(node.obs.path_of("files", PEERMEM_MARKER), "present"),
        )
    return unknown("GPUDirect RDMA configured; loaded modules not observed")


def _gpudirect_configured(node: NodeContext) -> bool:
    driver = node.cluster_policy_spec.get("driver")
    rdma = driver.get("rdma") if isinstance(driver, dict) else None
    if isinstance(rdma, dict) and rdma.get("enabled"):
        return True
    return any(
        c.name == "nvidia-peermem-ctr" for sp in node.stack_pods("driver") for c in sp.pod.spec.containers
    )


@node_validation(
    "network.cni-healthy",
    CAT,
    "CNI pods healthy on GPU nodes",
    fix=(
        "Check the CNI agent pod on the node (kubectl -n kube-system logs); pods there get no "
        "network meanwhile."
    ),
)
def cni_healthy(ctx: ValidationContext, node: NodeContext) -> Outcome | None:
    """The CNI agent pods (Cilium, Calico, Flannel, ...) are ready; else the NetworkUnavailable condition."""
    pods = [p for p in ctx.pods_by_node.get(node.name, []) if is_cni_pod(p)]
    if pods:
        findings = [judge_pod(p, "cni") for p in pods]
        bad = [f for f in findings if f.status != Status.OK]
        if bad:
            return failed(f"CNI pod unhealthy ({_pod_names(pods)})", *bad[0].evidence)
        return passed("CNI agent pods ready", *findings[0].evidence)
    return _network_condition(node)


def _network_condition(node: NodeContext) -> Outcome:
    status = condition_status(node.node, "NetworkUnavailable") if node.node else None
    where = f"node/{node.name} status.conditions[NetworkUnavailable]"
    if status == "False":
        return passed("no CNI pod recognised; NetworkUnavailable=False", Evidence(where, "False"))
    if status == "True":
        return failed("NetworkUnavailable=True", Evidence(where, "True"))
    return unknown("no CNI pod recognised and no NetworkUnavailable condition")


def is_cni_pod(pod: Pod) -> bool:
    """A primary CNI agent (or Multus) pod, by owning DaemonSet or image."""
    if any(o.kind == "DaemonSet" and o.name in WANTED_OWNERS for o in pod.metadata.owner_references):
        return True
    return any(WANTED_IMAGES.search(c.image) for c in pod.spec.containers)
