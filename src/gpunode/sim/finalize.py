"""Derive what the real controllers would after faults: scheduling of workloads, DaemonSet
pods on nodes that no longer match, pod status, DaemonSet and Deployment status."""

from __future__ import annotations

import functools
from dataclasses import replace
from datetime import datetime, timedelta

from gpunode.sim import ids
from gpunode.sim.build import PodDraft, add_pod, eligible
from gpunode.sim.k8s import Obj, condition, default_pod_tolerations, event, meta
from gpunode.sim.metrics import GpuUse
from gpunode.sim.models import IMAGES
from gpunode.sim.nodes import GPU_RESOURCE, RDMA_RESOURCE
from gpunode.sim.operands import CtrDef, render_container
from gpunode.sim.podstatus import Ctr, pod_status
from gpunode.sim.world import NodeState, Workload, World

ML_NS = "ml"


def finalize(world: World) -> None:
    """Bring derived state in line with the (possibly faulted) world."""
    _prune_daemonset_pods(world)
    _schedule_workloads(world)
    _render_pod_status(world)
    _daemonset_status(world)
    _deployment_status(world)


# -- DaemonSet pods ------------------------------------------------------------


def _prune_daemonset_pods(world: World) -> None:
    """Remove pods of DaemonSets whose node selector / tolerations no longer match."""
    for key in list(world.pods):
        ds = _owner_daemonset(world.pods[key])
        d = world.ds_defs.get(f"{key.split('/')[0]}/{ds}") if ds else None
        if d is not None and not eligible(d, world.node(world.places[key].node)):
            world.remove_pod(key)


def _owner_daemonset(pod: Obj) -> str | None:
    for ref in pod["metadata"].get("ownerReferences", []):
        if ref["kind"] == "DaemonSet" and pod["metadata"].get("generateName", "").startswith(ref["name"]):
            return str(ref["name"])
    return None


# -- workloads -----------------------------------------------------------------


def free_gpus(node: NodeState) -> list[int]:
    """Indices of GPUs the device plugin advertises as healthy."""
    alloc = int(node.obj["status"]["allocatable"].get(GPU_RESOURCE, "0"))
    healthy = [g.index for g in node.gpus if not g.lost and not g.dbe_volatile]
    return healthy[:alloc]


def _schedulable(node: NodeState) -> bool:
    taints = node.obj["spec"].get("taints", [])
    return node.ready and not any(t["effect"] in ("NoSchedule", "NoExecute") for t in taints)


def _schedule_workloads(world: World) -> None:
    """First-fit, round-robin placement of training pods onto free GPUs."""
    nodes = [n for n in world.gpu_nodes() if _schedulable(n)]
    free = {n.name: free_gpus(n) for n in nodes}
    rdma_ok = {
        n.name: RDMA_RESOURCE in n.obj["status"]["allocatable"]
        and n.obj["status"]["allocatable"][RDMA_RESOURCE] != "0"
        for n in nodes
    }
    world.gpu_use = {n.name: [GpuUse() for _ in n.gpus] for n in world.gpu_nodes()}
    cursor = 0
    for i, w in enumerate(world.workloads):
        placed = None
        for step in range(len(nodes)):
            node = nodes[(cursor + step) % len(nodes)]
            if len(free[node.name]) >= w.gpus and (rdma_ok[node.name] or not w.rdma):
                placed = node
                cursor = (cursor + step + 1) % len(nodes)
                break
        if placed is None:
            _pending_workload(world, w, i)
            continue
        take, free[placed.name] = free[placed.name][: w.gpus], free[placed.name][w.gpus :]
        if placed.name in world.nccl_socket_nodes:  # the first pod there lost its RDMA request
            world.nccl_socket_nodes.discard(placed.name)
            _running_workload(world, replace(w, rdma=False, nccl_info=True), i, placed, take)
        else:
            _running_workload(world, w, i, placed, take)


@functools.cache
def _workload_spec(gpus: int, rdma: bool, nccl_info: bool = False) -> Obj:
    """Pod spec of a training pod (shared by all pods of the same shape)."""
    limits = {"cpu": "48", "memory": "512Gi", GPU_RESOURCE: str(gpus)}
    if rdma:
        limits[RDMA_RESOURCE] = "1"
    ctr = render_container(
        CtrDef(
            "trainer",
            IMAGES["trainer"],
            ("torchrun",),
            (
                "--nnodes=3",
                "--nproc-per-node=4",
                "/workspace/train.py",
                "--config=/workspace/configs/llama-8b.yaml",
            ),
            (("NCCL_IB_HCA", "mlx5"), ("NCCL_DEBUG", "INFO" if nccl_info else "WARN")),
        )
    )
    ctr["resources"] = {"limits": limits, "requests": dict(limits)}
    return {
        "containers": [ctr],
        "dnsPolicy": "ClusterFirst",
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccount": "default",
        "serviceAccountName": "default",
        "subdomain": "llm-pretrain",
        "terminationGracePeriodSeconds": 30,
        "tolerations": default_pod_tolerations([]),
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": 0,
    }


def _workload_meta(world: World, w: Workload, index: int) -> Obj:
    labels = {
        "app": "llm-pretrain",
        "apps.kubernetes.io/pod-index": str(index),
        "controller-revision-hash": "llm-pretrain-" + ids.pod_template_hash("ml/llm-pretrain"),
        "statefulset.kubernetes.io/pod-name": w.name,
    }
    owner = {
        "apiVersion": "apps/v1",
        "blockOwnerDeletion": True,
        "controller": True,
        "kind": "StatefulSet",
        "name": "llm-pretrain",
        "uid": ids.uid("ml/llm-pretrain"),
    }
    return meta(
        w.name, world.ago(days=2, hours=3), ML_NS, labels=labels, owner=owner, generate_name="llm-pretrain-"
    )


def _running_workload(world: World, w: Workload, index: int, node: NodeState, gpus: list[int]) -> None:
    """Bind a training pod to `node` and record which GPUs it holds."""
    at = world.ago(days=2, hours=3) + timedelta(seconds=index % 60)
    md = _workload_meta(world, w, index)
    draft = PodDraft(
        w.name,
        ML_NS,
        md["labels"],
        md["ownerReferences"][0],
        _workload_spec(w.gpus, w.rdma, w.nccl_info) | {"hostname": w.name},
        generate_name="llm-pretrain-",
    )
    trainer = Ctr("trainer", IMAGES["trainer"], started_at=at + timedelta(seconds=41))
    key = add_pod(world, node, draft, [trainer], at, qos="Guaranteed")
    if w.nccl_info:
        world.set_log(key, "trainer", nccl_init_log(world, w, key, at + timedelta(seconds=41)))
    uses = world.gpu_use[node.name]
    for g in gpus:
        uses[g] = GpuUse(ML_NS, w.name, "trainer")


def _pending_workload(world: World, w: Workload, index: int) -> None:
    """An unschedulable pod with the scheduler's explanation."""
    message = _unschedulable_message(world, w)
    md = _workload_meta(world, w, index)
    created = ids.parse_time(md["creationTimestamp"])
    status = {
        "conditions": [condition("PodScheduled", "False", created, "Unschedulable", message)],
        "phase": "Pending",
        "qosClass": "Guaranteed",
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": md,
        "spec": _workload_spec(w.gpus, w.rdma) | {"hostname": w.name},
        "status": status,
    }
    world.pods[f"{ML_NS}/{w.name}"] = pod
    world.add_event(
        event(
            "Pod",
            pod,
            "FailedScheduling",
            message,
            first=world.ago(minutes=48),
            last=world.ago(minutes=1),
            component="default-scheduler",
        )
    )


def _unschedulable_message(world: World, w: Workload) -> str:
    """`0/5 nodes are available: ...` as kube-scheduler words it."""
    reasons: dict[str, int] = {}
    for node in world.nodes.values():
        reasons[_reject_reason(node, w)] = reasons.get(_reject_reason(node, w), 0) + 1
    total = len(world.nodes)
    parts = ", ".join(f"{count} {reason}" for reason, count in sorted(reasons.items()))
    return (
        f"0/{total} nodes are available: {parts}. preemption: 0/{total} nodes are available: "
        f"{total} Preemption is not helpful for scheduling."
    )


def _reject_reason(node: NodeState, w: Workload) -> str:
    for taint in node.obj["spec"].get("taints", []):
        if taint["effect"] in ("NoSchedule", "NoExecute"):
            value = taint.get("value", "")
            return f"node(s) had untolerated taint {{{taint['key']}: {value}}}"
    alloc = node.obj["status"]["allocatable"]
    if int(alloc.get(GPU_RESOURCE, "0")) < w.gpus:
        return f"Insufficient {GPU_RESOURCE}"
    if w.rdma and alloc.get(RDMA_RESOURCE, "0") == "0":
        return f"Insufficient {RDMA_RESOURCE}"
    return f"Insufficient {GPU_RESOURCE}"


# -- status ----------------------------------------------------------------------


def _render_pod_status(world: World) -> None:
    for key, ctrs in world.ctrs.items():
        pod = world.pods[key]
        place = world.places[key]
        pod["status"] = pod_status(pod, place, ctrs, node_ready=_reporting(world.node(place.node)))


def _reporting(node: NodeState) -> bool:
    """False when the node lifecycle controller has marked the node's pods not ready."""
    return (
        not any(t["key"] == "node.kubernetes.io/unreachable" for t in node.obj["spec"].get("taints", []))
        and node.ready
    )


def is_ready(pod: Obj) -> bool:
    """The pod's Ready condition is True."""
    return any(c["type"] == "Ready" and c["status"] == "True" for c in pod["status"].get("conditions", []))


def _daemonset_status(world: World) -> None:
    """desired/current/ready/available/unavailable exactly as the DS controller counts them."""
    by_ds: dict[str, list[Obj]] = {k: [] for k in world.daemonsets}
    for pod in world.pods.values():
        owner = _owner_daemonset(pod)
        if owner is not None:
            by_ds.setdefault(f"{pod['metadata']['namespace']}/{owner}", []).append(pod)
    for key, ds in world.daemonsets.items():
        d = world.ds_defs[key]
        desired = sum(1 for n in world.nodes.values() if eligible(d, n))
        pods = by_ds.get(key, [])
        ready = sum(1 for p in pods if is_ready(p))
        status: Obj = {
            "currentNumberScheduled": len(pods),
            "desiredNumberScheduled": desired,
            "numberMisscheduled": 0,
            "numberReady": ready,
            "observedGeneration": 1,
        }
        if ready:
            status["numberAvailable"] = ready
        if desired - ready > 0:
            status["numberUnavailable"] = desired - ready
        if pods:
            status["updatedNumberScheduled"] = len(pods)
        ds["status"] = status


def _deployment_status(world: World) -> None:
    """Count each Deployment's pods through their ReplicaSet owner."""
    by_rs: dict[tuple[str, str], list[Obj]] = {}
    for p in world.pods.values():
        for ref in p["metadata"].get("ownerReferences", []):
            if ref["kind"] == "ReplicaSet":
                by_rs.setdefault((p["metadata"]["namespace"], ref["name"]), []).append(p)
    for key, dep in world.deployments.items():
        ns, name = key.split("/")
        pods = by_rs.get((ns, f"{name}-{ids.pod_template_hash(key)}"), [])
        dep["status"] = deployment_status(world, dep, len(pods), sum(1 for p in pods if is_ready(p)))


def deployment_status(world: World, dep: Obj, replicas: int, ready: int) -> Obj:
    """Deployment status with Available/Progressing conditions."""
    name = dep["metadata"]["name"]
    created = dep["metadata"]["creationTimestamp"]
    rs = f"{name}-{ids.pod_template_hash(dep['metadata']['namespace'] + '/' + name)}"
    ok = ready >= dep["spec"]["replicas"]
    when = created if ok else ids.rfc3339(world.ago(minutes=38))
    available = {
        "lastTransitionTime": when,
        "lastUpdateTime": when,
        "message": "Deployment has minimum availability."
        if ok
        else "Deployment does not have minimum availability.",
        "reason": "MinimumReplicasAvailable" if ok else "MinimumReplicasUnavailable",
        "status": "True" if ok else "False",
        "type": "Available",
    }
    progressing = {
        "lastTransitionTime": created,
        "lastUpdateTime": created,
        "message": f'ReplicaSet "{rs}" has successfully progressed.',
        "reason": "NewReplicaSetAvailable",
        "status": "True",
        "type": "Progressing",
    }
    out: Obj = {
        "conditions": [available, progressing],
        "observedGeneration": 1,
        "replicas": replicas,
        "updatedReplicas": replicas,
    }
    if ready:
        out |= {"availableReplicas": ready, "readyReplicas": ready}
    if replicas - ready > 0:
        out["unavailableReplicas"] = replicas - ready
    return out


def nccl_init_log(world: World, w: Workload, key: str, started: datetime) -> str:
    """What torchrun's ranks print at start with NCCL_DEBUG=INFO in a pod without an RDMA
    device: NCCL's IB transport finds none and it uses sockets on the pod's interface (the
    lines as NCCL prints them, tests/fixtures/real/broken/interconnect/
    nccl-226-net-ib-no-device-socket.txt)."""
    ip = world.places[key].pod_ip
    pid = 100 + ids.number(w.name, 400)
    lines = [
        f"[{started:%Y-%m-%d %H:%M:%S},{ids.number(w.name, 999):03d}] torch.distributed.run: "
        f"[INFO] Starting elastic_operator with launch configs: nnodes 3, nproc_per_node {w.gpus}",
    ]
    for rank in range(w.gpus):
        head = f"{w.name}:{pid + rank}:{pid + rank} [{rank}] NCCL INFO"
        lines += [
            f"{head} Bootstrap : Using eth0:{ip}<0>",
            f"{head} NET/Plugin : No plugin found (libnccl-net.so), using internal implementation",
            f"{head} NET/IB : No device found.",
            f"{head} NET/Socket : Using [0]eth0:{ip}<0>",
            f"{head} Using network Socket",
        ]
        if rank == 0:
            lines.insert(1, "NCCL version 2.25.1+cuda12.8")
    return "\n".join(lines) + "\n"
