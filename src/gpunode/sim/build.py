"""Build the healthy World for a scenario: nodes, DaemonSets and their pods,
Deployments, static control-plane pods, validation pods, host facts and logs."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

import msgspec

from gpunode.sim import cluster_objects, host, ids, logs
from gpunode.sim.k8s import (
    Obj,
    daemonset_pod_tolerations,
    default_pod_tolerations,
    meta,
    owner_ref,
    tolerates,
)
from gpunode.sim.models import GPU_MODELS, IMAGES, OS_INFO, driver_image, k8s_image
from gpunode.sim.modes import apply_gpu_mode
from gpunode.sim.nodes import (
    CONTROL_PLANE_CAPACITY,
    control_plane_labels,
    gpu_capacity,
    gpu_node_labels,
    node_ip,
    node_object,
)
from gpunode.sim.operands import (
    GPU_NS,
    GPU_TOLERATION,
    NET_NS,
    CtrDef,
    DsDef,
    agent_defs,
    base_defs,
    dcgm_exporter_def,
    device_plugin_def,
    driver_def,
    gfd_def,
    mig_manager_def,
    mofed_def,
    nfd_worker_def,
    rdma_def,
    render_container,
    sriov_dp_def,
    template_spec,
    toolkit_def,
    validator_def,
)
from gpunode.sim.podstatus import Ctr, PodPlace, completed, running
from gpunode.sim.scenario import GpuNode, Scenario
from gpunode.sim.world import NodeState, Workload, World, make_gpus

COLLECTED_AT = ids.parse_time("2025-05-20T09:15:00Z")
INSTALLED_AT = ids.parse_time("2025-05-12T14:20:00Z")
CLUSTER_CREATED = ids.parse_time("2025-04-02T10:12:00Z")


def build_world(scenario: Scenario) -> World:
    """The healthy cluster the scenario describes (faults are applied later)."""
    scale = scenario.cluster.scale
    world = World(scenario, COLLECTED_AT, INSTALLED_AT, with_logs=scale is None or scale.logs)
    _add_nodes(world)
    for d in daemonset_defs(scenario, world):
        _add_daemonset(world, d)
    _add_static_pods(world)
    for deploy in deployment_defs(scenario):
        _add_deployment(world, deploy)
    _add_validation_pods(world)
    _add_workloads(world)
    world.resources = cluster_objects.build(world)
    return world


# -- nodes ---------------------------------------------------------------------


def _expanded_gpu_nodes(scenario: Scenario) -> list[GpuNode]:
    """The scenario's GPU nodes, plus generated look-alikes when `scale` asks for more."""
    listed = list(scenario.cluster.gpu_nodes)
    scale = scenario.cluster.scale
    if scale is None:
        return listed
    names = {n.name for n in listed}
    model = listed[0]
    i = 0
    while len(listed) < scale.gpu_node_count:
        i += 1
        name = f"{scale.node_prefix}{i:05d}"
        if name not in names:
            listed.append(msgspec.structs.replace(model, name=name))
    return listed


def _add_nodes(world: World) -> None:
    scenario = world.scenario
    cp = scenario.cluster.control_plane
    for i in range(cp.count):
        name = f"{cp.prefix}{i + 1:02d}"
        state = NodeState(name, {}, i, node_ip(i))
        created = CLUSTER_CREATED + timedelta(minutes=4 * i)
        state.obj = node_object(
            scenario,
            state,
            labels=control_plane_labels(scenario, name),
            created=created,
            heartbeat=world.ago(seconds=27),
            capacity=dict(CONTROL_PLANE_CAPACITY),
            kernel="5.15.0-131-generic",
            os_image="Ubuntu 22.04.5 LTS",
        )
        if cp.taint:
            state.obj["spec"]["taints"] = [
                {"effect": "NoSchedule", "key": "node-role.kubernetes.io/control-plane"}
            ]
        world.nodes[name] = state
    scale = scenario.cluster.scale
    for j, spec in enumerate(_expanded_gpu_nodes(scenario)):
        state = _gpu_node(world, spec, cp.count + j)
        state.data = scale is None or scale.node_data or j < len(scenario.cluster.gpu_nodes)
        world.nodes[spec.name] = state


def _gpu_node(world: World, spec: GpuNode, index: int) -> NodeState:
    """A healthy GPU worker with its GPUs and host facts."""
    scenario = world.scenario
    state = NodeState(spec.name, {}, index, node_ip(index), spec, GPU_MODELS[spec.gpu], OS_INFO[spec.os])
    state.gpus = make_gpus(spec.name, spec.gpus)
    state.host.host_driver = scenario.cluster.driver_mode == "host"
    state.host.mofed_loaded = spec.nics > 0 and scenario.has("network-operator")
    created = CLUSTER_CREATED + timedelta(hours=1, seconds=90 * (index % 40))
    labels = gpu_node_labels(scenario, state, world.later(minutes=7))
    if spec.nvlink_domain:
        _nvlink_domain(state, spec, labels)
    state.obj = node_object(
        scenario,
        state,
        labels=labels,
        created=created,
        heartbeat=world.ago(seconds=12),
        capacity=gpu_capacity(spec, scenario),
        kernel=spec.kernel,
        os_image=state.os.pretty if state.os else "",
    )
    apply_gpu_mode(state)
    state.host.validations = host.healthy_validations(state, scenario)
    return state


# -- DaemonSets ----------------------------------------------------------------


def daemonset_defs(scenario: Scenario, world: World) -> list[DsDef]:
    """Every DaemonSet the scenario's components create."""
    defs = base_defs(scenario)
    if scenario.has("nfd"):
        defs.append(nfd_worker_def())
    if scenario.has("gpu-operator"):
        defs += _gpu_operand_defs(scenario, world)
    if scenario.has("network-operator"):
        defs += _network_defs(world)
        if scenario.has("sriov-device-plugin"):
            defs.append(sriov_dp_def())
    defs += agent_defs(scenario)
    return defs


def _gpu_operand_defs(scenario: Scenario, world: World) -> list[DsDef]:
    defs: list[DsDef] = []
    if scenario.cluster.driver_mode == "operator":
        rdma = scenario.has("network-operator") and any(n.spec and n.spec.nics for n in world.gpu_nodes())
        os_tags = sorted({n.spec.os for n in world.gpu_nodes() if n.spec})
        defs.append(driver_def(scenario, os_tags[0], rdma))
    defs += [toolkit_def(scenario), device_plugin_def(scenario)]
    optional = (
        ("gfd", gfd_def),
        ("dcgm-exporter", dcgm_exporter_def),
        ("mig-manager", mig_manager_def),
        ("validator", validator_def),
    )
    defs += [make() for comp, make in optional if scenario.has(comp)]  # type: ignore[arg-type]
    return defs


def _network_defs(world: World) -> list[DsDef]:
    """One MOFED DaemonSet per (OS, kernel) among RDMA nodes, plus the RDMA plugin."""
    seen: dict[tuple[str, str], DsDef] = {}
    for n in world.gpu_nodes():
        if n.spec and n.spec.nics and n.os and (n.spec.os, n.spec.kernel) not in seen:
            seen[(n.spec.os, n.spec.kernel)] = mofed_def(
                n.spec.os, n.os.os_id, n.os.version_id, n.spec.kernel
            )
    return [*seen.values(), rdma_def()] if seen else []


_NFD = "feature.node.kubernetes.io/"


def redeploy_mofed(world: World) -> None:
    """Re-derive the MOFED DaemonSets from the nodes' NFD labels, as the Network Operator
    does: one per (OS ID, VERSION_ID, full kernel) among nodes with a Mellanox NIC, named
    and selected by those labels. Needed once something other than the scenario (a
    platform's OS image, a reported kernel) changed the labels; a DaemonSet set that
    still matches is left alone, so fault cascades on its pods survive."""
    wanted: dict[str, DsDef] = {}
    for n in world.gpu_nodes():
        d = _mofed_for_labels(n.labels)
        if d is not None:
            wanted.setdefault(d.name, d)
    current = {d.name: d for d in world.ds_defs.values() if d.key == "mofed"}
    if {k: d.node_selector for k, d in current.items()} == {k: d.node_selector for k, d in wanted.items()}:
        return
    for key in [k for k in world.ds_pods if k[0] == "mofed"]:
        world.remove_pod(world.ds_pods.pop(key))
    for d in current.values():
        world.daemonsets.pop(f"{d.namespace}/{d.name}", None)
        world.ds_defs.pop(f"{d.namespace}/{d.name}", None)
    for d in wanted.values():
        _add_daemonset(world, d)


def _mofed_for_labels(labels: dict[str, str]) -> DsDef | None:
    """The MOFED DaemonSet a node's NFD labels call for (None without a Mellanox NIC)."""
    os_id = labels.get(f"{_NFD}system-os_release.ID")
    version = labels.get(f"{_NFD}system-os_release.VERSION_ID")
    kernel = labels.get(f"{_NFD}kernel-version.full")
    if labels.get(f"{_NFD}pci-15b3.present") != "true" or not (os_id and version and kernel):
        return None
    return mofed_def(f"{os_id}{version}", os_id, version, kernel)


def eligible(d: DsDef, node: NodeState) -> bool:
    """Whether the DaemonSet controller wants a pod of `d` on `node`."""
    labels = node.labels
    if any(labels.get(k) != v for k, v in d.node_selector.items()):
        return False
    for taint in node.obj["spec"].get("taints", []):
        if taint["key"].startswith("node.kubernetes.io/") or taint["effect"] == "PreferNoSchedule":
            continue
        if not tolerates(list(d.tolerations), taint):
            return False
    return True


@dataclass
class _DsRuntime:
    """What every pod of one DaemonSet shares."""

    d: DsDef
    spec: Obj
    tolerations: list[Obj]
    labels: dict[str, str]
    owner: Obj
    created: datetime


def _add_daemonset(world: World, d: DsDef) -> None:
    created = world.later(seconds=d.start)
    revision = ids.pod_template_hash(f"{d.namespace}/{d.name}")
    world.daemonsets[f"{d.namespace}/{d.name}"] = daemonset_object(d, world.scenario.cluster.cdi, created)
    world.ds_defs[f"{d.namespace}/{d.name}"] = d
    spec = template_spec(d, world.scenario.cluster.cdi)
    shared = _DsRuntime(
        d,
        spec,
        daemonset_pod_tolerations(spec.get("tolerations", [])),
        d.labels | {"controller-revision-hash": revision, "pod-template-generation": "1"},
        owner_ref("DaemonSet", d.name, d.namespace),
        created,
    )
    for node in world.nodes.values():
        if eligible(d, node):
            _add_ds_pod(world, shared, node)


def daemonset_object(d: DsDef, cdi: bool, created: datetime) -> Obj:
    """The DaemonSet itself (status is filled at finalize)."""
    annotations = {"deprecated.daemonset.template.generation": "1"}
    if d.namespace == GPU_NS and d.owner is not None:
        annotations["nvidia.com/last-applied-hash"] = str(ids.number("hash:" + d.name, 4_000_000_000))
    strategy: Obj = (
        {"type": "OnDelete"}
        if d.on_delete
        else {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}, "type": "RollingUpdate"}
    )
    spec = {
        "revisionHistoryLimit": 10,
        "selector": {"matchLabels": d.selector},
        "template": {
            "metadata": {"creationTimestamp": None, "labels": d.labels},
            "spec": template_spec(d, cdi),
        },
        "updateStrategy": strategy,
    }
    md = meta(
        d.name,
        created,
        d.namespace,
        labels=d.ds_labels or d.labels,
        annotations=annotations,
        owner=d.owner,
        generation=1,
    )
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": md, "spec": spec, "status": {}}


def _add_ds_pod(world: World, shared: _DsRuntime, node: NodeState) -> None:
    d, spec = _for_node(shared, node, world.scenario.cluster.cdi)
    at = max(shared.created, node.joined + timedelta(seconds=20)) + ids.jitter(d.name + node.name, 40)
    name = f"{d.name}-{ids.suffix(d.name + '/' + node.name)}"
    spec["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node.name]}]}
                ]
            }
        }
    }
    spec["tolerations"] = shared.tolerations
    draft = PodDraft(name, d.namespace, shared.labels, shared.owner, spec, generate_name=f"{d.name}-")
    key = add_pod(world, node, draft, healthy_ctrs(d.init, d.containers, at), at, host_network=d.host_network)
    world.ds_pods[(d.key, node.name)] = key
    logs.write_healthy(world, d.key, node, key)


def _for_node(shared: _DsRuntime, node: NodeState, cdi: bool) -> tuple[DsDef, Obj]:
    """The operator picks the driver image per node OS; everything else is the template as is."""
    d = shared.d
    if d.key != "driver" or node.os is None:
        return d, dict(shared.spec)
    image = driver_image(node.os.driver_tag)
    if d.containers[0].image == image:
        return d, dict(shared.spec)
    d = replace(d, containers=tuple(replace(c, image=image) for c in d.containers))
    return d, template_spec(d, cdi)


def healthy_ctrs(init: tuple[CtrDef, ...], mains: tuple[CtrDef, ...], at: datetime) -> list[Ctr]:
    """Init containers completed one after another, then every main container running."""
    out: list[Ctr] = []
    t = at + timedelta(seconds=2)
    for c in init:
        took = timedelta(seconds=c.takes)
        out.append(Ctr(c.name, c.image, "completed", True, started_at=t, finished_at=t + took, init=True))
        t += took + timedelta(seconds=1)
    out += [Ctr(c.name, c.image, "running", True, started_at=t) for c in mains]
    return out


@dataclass(frozen=True)
class PodDraft:
    """Identity and spec of a pod about to be bound to a node."""

    name: str
    namespace: str
    labels: dict[str, str]
    owner: Obj | None
    spec: Obj
    annotations: dict[str, str] | None = None
    generate_name: str | None = None


def add_pod(
    world: World,
    node: NodeState,
    draft: PodDraft,
    ctrs: list[Ctr],
    at: datetime,
    *,
    host_network: bool = False,
    qos: str = "BestEffort",
) -> str:
    """Register a pod bound to `node`; its status is rendered at finalize."""
    key = f"{draft.namespace}/{draft.name}"
    md = meta(
        draft.name,
        at - timedelta(seconds=1),
        draft.namespace,
        labels=draft.labels,
        annotations=draft.annotations,
        owner=draft.owner,
        generate_name=draft.generate_name,
    )
    spec = draft.spec
    pod_spec = dict(spec)
    pod_spec["nodeName"] = node.name
    pod_spec.setdefault("enableServiceLinks", True)
    pod_spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    pod_spec.setdefault(
        "priority",
        2000001000
        if spec.get("priorityClassName") == "system-node-critical"
        else 2000000000
        if spec.get("priorityClassName")
        else 0,
    )
    world.pods[key] = {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": pod_spec, "status": {}}
    runtime = "cri-o" if world.scenario.cluster.runtime == "crio" else "containerd"
    ip = node.ip if host_network else _next_pod_ip(world, node)
    world.places[key] = PodPlace(node.name, node.ip, ip, at, qos, runtime)
    world.ctrs[key] = ctrs
    return key


def _next_pod_ip(world: World, node: NodeState) -> str:
    """Hand out pod IPs from the node's /24 in creation order."""
    count = world.ip_counters.get(node.name, 0)
    world.ip_counters[node.name] = count + 1
    base = node.obj["spec"]["podCIDR"].rsplit(".", 1)[0]
    return f"{base}.{(count + 10) % 254 + 1}"


# -- static and Deployment pods -------------------------------------------------


def _add_static_pods(world: World) -> None:
    """kube-apiserver, etcd, scheduler and controller-manager mirror pods on control planes."""
    version = world.scenario.cluster.kubernetes_version
    for node in world.nodes.values():
        if node.is_gpu:
            continue
        created = ids.parse_time(node.obj["metadata"]["creationTimestamp"])
        for comp in ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"):
            image = IMAGES["etcd"] if comp == "etcd" else k8s_image(comp, version)
            _add_static_pod(world, node, comp, image, created + timedelta(days=30))


def _add_static_pod(world: World, node: NodeState, comp: str, image: str, at: datetime) -> None:
    config_hash = ids.hex_id(f"static:{comp}:{node.name}", 32)
    annotations = {
        "kubernetes.io/config.hash": config_hash,
        "kubernetes.io/config.mirror": config_hash,
        "kubernetes.io/config.seen": ids.rfc3339(at).replace("Z", ".000000000Z"),
        "kubernetes.io/config.source": "file",
    }
    if comp == "kube-apiserver":
        annotations["kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint"] = f"{node.ip}:6443"
    owner = {
        "apiVersion": "v1",
        "controller": True,
        "kind": "Node",
        "name": node.name,
        "uid": node.obj["metadata"]["uid"],
    }
    ctr = CtrDef(comp, image, (comp if comp != "etcd" else "etcd",))
    spec = {
        "containers": [render_container(ctr)],
        "dnsPolicy": "ClusterFirst",
        "hostNetwork": True,
        "priorityClassName": "system-node-critical",
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
        "terminationGracePeriodSeconds": 30,
        "tolerations": [{"effect": "NoExecute", "operator": "Exists"}],
    }
    draft = PodDraft(
        f"{comp}-{node.name}",
        "kube-system",
        {"component": comp, "tier": "control-plane"},
        owner,
        spec,
        annotations,
    )
    add_pod(world, node, draft, [running(Ctr(comp, image), at)], at, host_network=True, qos="Burstable")


@dataclass(frozen=True)
class DeployDef:
    """A Deployment whose pods run on the control-plane nodes."""

    name: str
    namespace: str
    labels: dict[str, str]
    containers: tuple[CtrDef, ...]
    replicas: int = 1
    service_account: str = "default"
    start: int = 0
    component: str = ""


def deployment_defs(scenario: Scenario) -> list[DeployDef]:
    """Cluster-scoped controllers of the scenario."""
    out = [
        DeployDef(
            "coredns",
            "kube-system",
            {"k8s-app": "kube-dns"},
            (
                CtrDef(
                    "coredns",
                    IMAGES["coredns"],
                    (),
                    ("-conf", "/etc/coredns/Corefile"),
                    ports=(("dns", 53), ("dns-tcp", 53), ("metrics", 9153)),
                ),
            ),
            2,
            "coredns",
            -86400 * 48,
        )
    ]
    if scenario.has("gpu-operator"):
        out.append(
            DeployDef(
                "gpu-operator",
                GPU_NS,
                {"app": "gpu-operator", "app.kubernetes.io/component": "gpu-operator"},
                (
                    CtrDef(
                        "gpu-operator",
                        IMAGES["gpu-operator"],
                        ("gpu-operator",),
                        ("--leader-elect", "--zap-time-encoding=epoch", "--zap-log-level=info"),
                        (("WATCH_NAMESPACE", ""), ("OPERATOR_NAMESPACE", "field:metadata.namespace")),
                        ports=(("metrics", 8080),),
                    ),
                ),
                1,
                "gpu-operator",
                -120,
                "gpu-operator",
            )
        )
    if scenario.has("nfd"):
        out += _nfd_deployments()
    if scenario.has("network-operator"):
        out.append(
            DeployDef(
                "network-operator",
                NET_NS,
                {
                    "app.kubernetes.io/name": "network-operator",
                    "control-plane": "network-operator-controller",
                },
                (
                    CtrDef(
                        "network-operator",
                        IMAGES["network-operator"],
                        ("/manager",),
                        ("--leader-elect",),
                        (("POD_NAMESPACE", "field:metadata.namespace"),),
                    ),
                ),
                1,
                "network-operator",
                -1800,
                "network-operator",
            )
        )
    return out


def _nfd_deployments() -> list[DeployDef]:
    base = {"app.kubernetes.io/instance": "gpu-operator", "app.kubernetes.io/name": "node-feature-discovery"}
    master = CtrDef(
        "master",
        IMAGES["nfd"],
        ("nfd-master",),
        (
            "-crd-controller=true",
            "-feature-gates=NodeFeatureGroupAPI=false",
            "-metrics=8081",
            "-grpc-health=8082",
        ),
        (("NODE_NAME", "field:spec.nodeName"),),
        ports=(("metrics", 8081), ("health", 8082)),
    )
    gc = CtrDef(
        "gc",
        IMAGES["nfd"],
        ("nfd-gc",),
        ("-gc-interval=1h",),
        (("NODE_NAME", "field:spec.nodeName"),),
        ports=(("metrics", 8081),),
    )
    return [
        DeployDef(
            "gpu-operator-node-feature-discovery-master",
            GPU_NS,
            base | {"role": "master"},
            (master,),
            1,
            "gpu-operator-node-feature-discovery",
            -3600,
            "nfd",
        ),
        DeployDef(
            "gpu-operator-node-feature-discovery-gc",
            GPU_NS,
            base | {"role": "gc"},
            (gc,),
            1,
            "gpu-operator-node-feature-discovery-gc",
            -3600,
            "nfd",
        ),
    ]


def _add_deployment(world: World, d: DeployDef) -> None:
    created = world.later(seconds=d.start)
    template_hash = ids.pod_template_hash(f"{d.namespace}/{d.name}")
    world.deployments[f"{d.namespace}/{d.name}"] = deployment_object(d, created)
    rs = f"{d.name}-{template_hash}"
    owner = owner_ref("ReplicaSet", rs, d.namespace)
    cps = [n for n in world.nodes.values() if not n.is_gpu]
    spec = deployment_pod_spec(d)
    for r in range(d.replicas):
        node = cps[(ids.number(d.name, 7) + r) % len(cps)]
        at = created + timedelta(seconds=3 + r)
        name = f"{rs}-{ids.suffix(f'{rs}/{r}')}"
        labels = d.labels | {"pod-template-hash": template_hash}
        draft = PodDraft(name, d.namespace, labels, owner, spec, generate_name=f"{rs}-")
        key = add_pod(world, node, draft, healthy_ctrs((), d.containers, at), at, qos="Burstable")
        if d.component:
            world.ds_pods[(d.component, "")] = key
            logs.write_controller(world, d.component, key)


def deployment_pod_spec(d: DeployDef) -> Obj:
    """Pod spec of a control-plane-tolerating Deployment."""
    tolerations = [
        {"effect": "NoSchedule", "key": "node-role.kubernetes.io/control-plane", "operator": "Exists"},
        {"effect": "NoSchedule", "key": "node-role.kubernetes.io/master", "operator": "Exists"},
    ]
    spec: Obj = {"containers": [render_container(c) for c in d.containers], "dnsPolicy": "ClusterFirst"}
    if d.namespace == "kube-system":
        spec["priorityClassName"] = "system-cluster-critical"
    return spec | {
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccount": d.service_account,
        "serviceAccountName": d.service_account,
        "terminationGracePeriodSeconds": 30,
        "tolerations": default_pod_tolerations(tolerations),
    }


def deployment_object(d: DeployDef, created: datetime) -> Obj:
    """The Deployment (status filled at finalize)."""
    md = meta(
        d.name,
        created,
        d.namespace,
        labels=dict(d.labels),
        annotations={"deployment.kubernetes.io/revision": "1"},
        generation=1,
    )
    spec = {
        "progressDeadlineSeconds": 600,
        "replicas": d.replicas,
        "revisionHistoryLimit": 10,
        "selector": {"matchLabels": dict(d.labels)},
        "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}, "type": "RollingUpdate"},
        "template": {
            "metadata": {"creationTimestamp": None, "labels": dict(d.labels)},
            "spec": deployment_pod_spec(d),
        },
    }
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": md, "spec": spec, "status": {}}


# -- validation pods and workloads ---------------------------------------------


VECTOR_ADD_LOG = (
    "[Vector addition of 50000 elements]\nCopy input data from the host memory to the CUDA device\n"
    "CUDA kernel launch with 196 blocks of 256 threads\n"
    "Copy output data from the CUDA device to the host memory\nTest PASSED\nDone\n"
)


def _add_validation_pods(world: World) -> None:
    """The Succeeded `nvidia-cuda-validator-*` / `nvidia-device-plugin-validator-*` pods."""
    if not world.scenario.has("validator") or not world.scenario.has("gpu-operator"):
        return
    for node in world.gpu_nodes():
        if world.ds_pod_key("validator", node.name) is None:
            continue
        for kind, offset in (("cuda", 290), ("plugin", 330)):
            add_validation_pod(world, node, kind, world.later(seconds=offset) + ids.jitter(node.name, 40))


def add_validation_pod(
    world: World, node: NodeState, kind: str, at: datetime, fail: str | None = None
) -> str:
    """One run-once validation pod; `fail` = log of a failing vectorAdd."""
    app = "nvidia-cuda-validator" if kind == "cuda" else "nvidia-device-plugin-validator"
    init_name = f"{kind}-validation"
    image = IMAGES["validator"]
    init = CtrDef(init_name, image, ("sh", "-c"), ("vectorAdd",))
    echo = f"echo {'cuda' if kind == 'cuda' else 'device-plugin'} workload validation is successful"
    main = CtrDef(app, image, ("sh", "-c"), (echo,))
    spec = validation_pod_spec(world, init, main, kind)
    name = f"{app}-{ids.suffix(app + node.name + ids.rfc3339(at))}"
    # The validator copies its DaemonSet's own ownerReferences (the ClusterPolicy) onto
    # these pods and sets nodeName itself (cmd/nvidia-validator/main.go).
    owner = owner_ref("ClusterPolicy", "cluster-policy", None, api_version="nvidia.com/v1")
    ctrs = [
        completed(Ctr(init_name, image, init=True), at + timedelta(seconds=2), timedelta(seconds=4)),
        completed(Ctr(app, image), at + timedelta(seconds=7), timedelta(seconds=1)),
    ]
    key = add_pod(
        world, node, PodDraft(name, GPU_NS, {"app": app}, owner, spec, generate_name=f"{app}-"), ctrs, at
    )
    world.ds_pods[(f"{kind}-validator", node.name)] = key
    world.set_log(key, init_name, fail or VECTOR_ADD_LOG)
    if fail is None:
        world.set_log(key, app, echo.removeprefix("echo ") + "\n")
    return key


def validation_pod_spec(world: World, init: CtrDef, main: CtrDef, kind: str) -> Obj:
    """Spec of a validation pod (GPU request only for the plugin check)."""
    init_spec = render_container(init)
    if kind == "plugin":
        init_spec["resources"] = {"limits": {"nvidia.com/gpu": "1"}, "requests": {"nvidia.com/gpu": "1"}}
    spec: Obj = {
        "containers": [render_container(main)],
        "dnsPolicy": "ClusterFirst",
        "initContainers": [init_spec],
        "restartPolicy": "OnFailure",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccount": "nvidia-operator-validator",
        "serviceAccountName": "nvidia-operator-validator",
        "terminationGracePeriodSeconds": 30,
        "tolerations": default_pod_tolerations([GPU_TOLERATION]),
    }
    if world.scenario.cluster.cdi:
        spec["runtimeClassName"] = "nvidia"
    return spec


def _add_workloads(world: World) -> None:
    """Training pods; the scheduler in `finalize` binds them where GPUs are free."""
    count = world.scenario.cluster.workloads
    scale = world.scenario.cluster.scale
    if scale is not None:
        per_node = max(0, scale.pods_per_node - _system_pods_per_gpu_node(world))
        count = max(count, per_node * len(world.gpu_nodes()))
    rdma = world.scenario.has("network-operator")
    per_pod = 4 if scale is None else 1
    world.workloads = [Workload(f"llm-pretrain-{i}", per_pod, rdma) for i in range(count)]


def _system_pods_per_gpu_node(world: World) -> int:
    first = world.gpu_nodes()[0].name
    return sum(1 for p in world.places.values() if p.node == first)


def _nvlink_domain(state: NodeState, spec: GpuNode, labels: dict[str, str]) -> None:
    """GFD's clique label and the GPUs' fabric registration of an NVL system's tray."""
    if "nvidia.com/gpu.product" in labels:  # GFD labels the node
        labels["nvidia.com/gpu.clique"] = spec.nvlink_domain
    reported = spec.nvlink_domain if spec.gpu_nvlink_domain is None else spec.gpu_nvlink_domain
    cluster, _, clique = reported.rpartition(".")
    state.host.fabric_gpus = {g.bus_id: (cluster, clique, "Healthy") for g in state.gpus}
