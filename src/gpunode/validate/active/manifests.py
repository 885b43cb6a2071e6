"""The objects active checks create, as plain Kubernetes JSON (pure functions).

Everything is labelled ``app.kubernetes.io/managed-by=gpunode`` plus the run id,
so a later run finds leftovers by label; pods carry ``activeDeadlineSeconds``
and every object an ``expires-at`` annotation, so nothing runs on forever even
if gpunode itself is killed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from gpunode.relazy import lazy_compile

MANAGED_BY = "app.kubernetes.io/managed-by"
COMPONENT = "app.kubernetes.io/component"
RUN = "gpunode.io/validate-run"
CHECK = "gpunode.io/check"
NODE = "gpunode.io/node"
RANK = "gpunode.io/rank"
PAIR = "gpunode.io/pair"
EXPIRES = "gpunode.io/expires-at"
LEFTOVER_SELECTOR = {MANAGED_BY: "gpunode", COMPONENT: "validate"}
HOSTNAME_LABEL = "kubernetes.io/hostname"
GPU = "nvidia.com/gpu"
MOUNT = "/data"
_NOT_DNS = lazy_compile(r"[^a-z0-9-]+")

Json = dict[str, Any]

#: The port the worker's sshd listens on (host network): not 22, which the host's own sshd holds.
NCCL_SSH_PORT = 2222
SSH_MOUNT = "/etc/gpunode-ssh"
#: all_reduce_perf's sizes: from 64 MiB (past the latency-bound sizes) to 1 GiB, where the
#: bus bandwidth reaches its peak; 20 timed iterations after 5 warm-up ones, each size.
NCCL_TESTS_ARGS = "-b 64M -e 1G -f 2 -g 1 -w 5 -n 20"


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
class NcclSide:
    """One node of an all-reduce pair: the launcher (runs mpirun) or the worker (sshd)."""

    pair: int
    where: Placement
    gpus: int
    rdma: tuple[str, ...] = ()

    def limits(self) -> Json:
        return {GPU: str(self.gpus), **dict.fromkeys(self.rdma, "1")}


def nccl_pod_name(pair: int, role: str) -> str:
    return f"nccl-{pair}-{role}"


def ssh_secret(ids: RunIds, private_key: str, public_key: str) -> Json:
    """The run's one-off SSH key: mpirun on a launcher reaches the workers' sshd with it."""
    meta = {**_meta(ids, "gpunode-validate-nccl-ssh", "nccl"), "namespace": ids.namespace}
    data = {"id": private_key, "id.pub": public_key}
    return {"apiVersion": "v1", "kind": "Secret", "metadata": meta, "type": "Opaque", "stringData": data}


def nccl_worker_pod(ids: RunIds, side: NcclSide, image: str, secret: str) -> Json:
    """sshd on the node's host network (port 2222), admitting the run's key only, holding
    all GPUs and RDMA devices for the ranks mpirun starts through it."""
    script = (
        "mkdir -p /root/.ssh /run/sshd && chmod 700 /root/.ssh && "
        f"cp {SSH_MOUNT}/id.pub /root/.ssh/authorized_keys && chmod 600 /root/.ssh/authorized_keys && "
        "(ssh-keygen -A >/dev/null 2>&1 || true) && "
        f"exec /usr/sbin/sshd -D -e -p {NCCL_SSH_PORT} -o ListenAddress=$GPUNODE_HOST_IP "
        "-o PasswordAuthentication=no -o PermitRootLogin=prohibit-password"
    )
    return _nccl_pod(ids, side, image, secret, role="worker", script=script, env={})


def nccl_launcher_pod(ids: RunIds, side: NcclSide, image: str, secret: str, worker_ip: str) -> Json:
    """mpirun across this node and the worker's: one rank per GPU of each, nccl-tests'
    all_reduce_perf, its table printed here. The worker's sshd is waited for (60 s)."""
    ranks = 2 * side.gpus
    ssh = f"-p {NCCL_SSH_PORT} -i /tmp/gpunode-id -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null"
    script = (
        f"install -m 600 {SSH_MOUNT}/id /tmp/gpunode-id && "
        "B=$(command -v all_reduce_perf || echo /opt/nccl-tests/build/all_reduce_perf) && "
        f"for i in $(seq 30); do ssh {ssh} -o ConnectTimeout=2 $GPUNODE_WORKER true && break; sleep 2; done; "
        f"exec mpirun --allow-run-as-root --prefix $(dirname $(dirname $(command -v mpirun))) -np {ranks} "
        f"-H $GPUNODE_HOST_IP:{side.gpus},$GPUNODE_WORKER:{side.gpus} --bind-to none "
        f'-mca plm_rsh_args "{ssh}" -x NCCL_DEBUG -x PATH -x LD_LIBRARY_PATH $B {NCCL_TESTS_ARGS}'
    )
    return _nccl_pod(ids, side, image, secret, role="launcher", script=script,
                     env={"GPUNODE_WORKER": worker_ip})


def _nccl_pod(ids: RunIds, side: NcclSide, image: str, secret: str, *, role: str, script: str,
              env: dict[str, str]) -> Json:
    container = {
        "name": role,
        "image": image,
        "command": ["sh", "-c", script],
        "env": [
            {"name": "NCCL_DEBUG", "value": "WARN"},
            {"name": "GPUNODE_HOST_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}},
            *({"name": k, "value": v} for k, v in env.items()),
        ],
        "resources": {"limits": side.limits()},
        "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}},
        "volumeMounts": [{"name": "ssh", "mountPath": SSH_MOUNT, "readOnly": True},
                         {"name": "shm", "mountPath": "/dev/shm"}],
    }
    spec = {
        **side.where.spec(),
        "hostNetwork": True,
        "dnsPolicy": "ClusterFirstWithHostNet",
        "containers": [container],
        "volumes": [{"name": "ssh", "secret": {"secretName": secret, "defaultMode": 0o400}},
                    {"name": "shm", "emptyDir": {"medium": "Memory"}}],
    }
    labels = {**side.where.labels(), RANK: role, PAIR: str(side.pair)}
    return _pod(ids, nccl_pod_name(side.pair, role), "nccl", spec, labels)
