"""The objects active checks create, as plain Kubernetes JSON (pure functions).

Everything is labelled ``app.kubernetes.io/managed-by=gpunode`` plus the run id,
so a later run finds leftovers by label; pods carry ``activeDeadlineSeconds``
and every object an ``expires-at`` annotation, so nothing runs on forever even
if gpunode itself is killed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

MANAGED_BY = "app.kubernetes.io/managed-by"
COMPONENT = "app.kubernetes.io/component"
RUN = "gpunode.io/validate-run"
CHECK = "gpunode.io/check"
NODE = "gpunode.io/node"
RANK = "gpunode.io/rank"
EXPIRES = "gpunode.io/expires-at"
LEFTOVER_SELECTOR = {MANAGED_BY: "gpunode", COMPONENT: "validate"}
HOSTNAME_LABEL = "kubernetes.io/hostname"
GPU = "nvidia.com/gpu"
MOUNT = "/data"
NCCL_PORT = 29500
_NOT_DNS = re.compile(r"[^a-z0-9-]+")

Json = dict[str, Any]

# Runs in every rank (one process per GPU, launched by torchrun): all-reduce a
# large buffer, time it, and print the NCCL-tests style bus bandwidth in GB/s.
NCCL_SCRIPT = """\
import os, time, torch, torch.distributed as dist
dist.init_process_group("nccl")
rank, world = dist.get_rank(), dist.get_world_size()
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
size = int(os.environ.get("GPUNODE_NCCL_BYTES", str(1 << 30)))
buf = torch.ones(size // 4, dtype=torch.float32, device="cuda")
for _ in range(5):
    dist.all_reduce(buf)
torch.cuda.synchronize()
iters = int(os.environ.get("GPUNODE_NCCL_ITERS", "20"))
start = time.perf_counter()
for _ in range(iters):
    dist.all_reduce(buf)
torch.cuda.synchronize()
seconds = (time.perf_counter() - start) / iters
algbw = buf.numel() * 4 / seconds / 1e9
busbw = algbw * 2 * (world - 1) / world
if rank == 0:
    line = f"world={world} bytes={buf.numel() * 4} algbw_GBps={algbw:.1f} busbw_GBps={busbw:.1f}"
    print("gpunode-nccl " + line, flush=True)
dist.destroy_process_group()
"""


@dataclass(frozen=True)
class RunIds:
    """One active run: its id, namespace, and when its objects expire."""

    run: str
    deadline_s: int
    started: datetime

    @property
    def namespace(self) -> str:
        return f"gpunode-validate-{self.run}"

    @property
    def expires_at(self) -> str:
        return (self.started + timedelta(seconds=self.deadline_s)).strftime("%Y-%m-%dT%H:%M:%SZ")


def dns_name(*parts: str, limit: int = 63) -> str:
    """A DNS-1123 label from free text (node names may hold dots or capitals)."""
    text = _NOT_DNS.sub("-", "-".join(parts).lower()).strip("-")
    return text[:limit].rstrip("-")


def _meta(ids: RunIds, name: str, check: str, extra: dict[str, str] | None = None) -> Json:
    labels = {**LEFTOVER_SELECTOR, RUN: ids.run, CHECK: check, **(extra or {})}
    return {"name": name, "labels": labels, "annotations": {EXPIRES: ids.expires_at}}


def namespace(ids: RunIds) -> Json:
    meta = _meta(ids, ids.namespace, "namespace")
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}


def _pod(ids: RunIds, name: str, check: str, spec: Json, labels: dict[str, str] | None = None) -> Json:
    meta = {**_meta(ids, name, check, labels), "namespace": ids.namespace}
    base: Json = {
        "restartPolicy": "Never",
        "activeDeadlineSeconds": ids.deadline_s,
        "terminationGracePeriodSeconds": 5,
        "automountServiceAccountToken": False,
    }
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {**base, **spec}}


@dataclass(frozen=True)
class Placement:
    """Where a pod must run: the node's hostname label, its taints, the runtime class."""

    node: str
    hostname: str
    tolerations: tuple[Json, ...] = ()
    runtime_class: str | None = None

    def spec(self) -> Json:
        out: Json = {"nodeSelector": {HOSTNAME_LABEL: self.hostname}}
        if self.tolerations:
            out["tolerations"] = list(self.tolerations)
        if self.runtime_class:
            out["runtimeClassName"] = self.runtime_class
        return out

    def labels(self) -> dict[str, str]:
        return {NODE: self.node} if len(self.node) <= 63 else {}


def gpu_smoke_pod(ids: RunIds, where: Placement, gpus: int, image: str) -> Json:
    """A pod asking for all of the node's GPUs that lists them with ``nvidia-smi -L``."""
    container = {
        "name": "nvidia-smi",
        "image": image,
        "command": ["nvidia-smi", "-L"],
        "resources": {"limits": {GPU: str(gpus)}},
    }
    spec = {**where.spec(), "containers": [container]}
    return _pod(ids, dns_name("gpu-smoke", where.node, limit=253), "gpu-smoke", spec, where.labels())


def pvc(ids: RunIds, size: str) -> Json:
    """A claim on the default StorageClass (no storageClassName on purpose)."""
    meta = {**_meta(ids, "gpunode-validate-pvc", "pvc-write"), "namespace": ids.namespace}
    spec = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec}


def pvc_writer_pod(ids: RunIds, where: Placement, image: str, claim: str) -> Json:
    """A pod on a GPU node that writes a token to the claim and reads it back."""
    script = f'echo "$GPUNODE_TOKEN" > {MOUNT}/gpunode-probe && sync && cat {MOUNT}/gpunode-probe'
    container = {
        "name": "writer",
        "image": image,
        "command": ["sh", "-c", script],
        "env": [{"name": "GPUNODE_TOKEN", "value": token(ids)}],
        "volumeMounts": [{"name": "data", "mountPath": MOUNT}],
    }
    spec = {
        **where.spec(),
        "containers": [container],
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}],
    }
    spec.pop("runtimeClassName", None)
    return _pod(ids, "pvc-writer", "pvc-write", spec, where.labels())


def token(ids: RunIds) -> str:
    return f"gpunode-validate-{ids.run}-ok"


@dataclass(frozen=True)
class NcclRank:
    """One side of the two-node all-reduce."""

    rank: int
    where: Placement
    gpus: int
    master_addr: str
    rdma: tuple[str, ...] = ()


def nccl_pod(ids: RunIds, side: NcclRank, image: str) -> Json:
    """torchrun on host networking (NCCL finds the RDMA NICs), all GPUs plus RDMA devices.

    Rank 0 (empty ``master_addr``) rendezvouses at its own host IP, from the downward API.
    """
    limits = {GPU: str(side.gpus), **dict.fromkeys(side.rdma, "1")}
    master = side.master_addr or "$GPUNODE_HOST_IP"
    launch = (
        'printf "%s" "$GPUNODE_SCRIPT" > /tmp/gpunode_allreduce.py && exec torchrun --nnodes=2 '
        f"--node-rank={side.rank} --nproc-per-node={side.gpus} --master-addr={master} "
        f"--master-port={NCCL_PORT} /tmp/gpunode_allreduce.py"
    )
    container = {
        "name": "allreduce",
        "image": image,
        "command": ["sh", "-c", launch],
        "env": [
            {"name": "GPUNODE_SCRIPT", "value": NCCL_SCRIPT},
            {"name": "NCCL_DEBUG", "value": "WARN"},
            {"name": "GPUNODE_HOST_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}},
        ],
        "resources": {"limits": limits},
        "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}},
    }
    spec = {
        **side.where.spec(),
        "hostNetwork": True,
        "dnsPolicy": "ClusterFirstWithHostNet",
        "containers": [container],
    }
    labels = {**side.where.labels(), RANK: str(side.rank)}
    return _pod(ids, f"nccl-rank{side.rank}", "nccl", spec, labels)
