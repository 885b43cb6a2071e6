"""The active checks' identities (registered with the passive ones, for docs and --category)."""

from __future__ import annotations

from gpunode.validate.registry import declare_active
from gpunode.validation import CATEGORY

GPU_SMOKE = declare_active(
    "gpu.workload-smoke",
    CATEGORY.GPU_HEALTH,
    "A pod requesting all of a node's GPUs sees them all",
    fix="Compare with gpu.allocatable and gpu.stack-diagnosis; the pod's events name what blocked it.",
    doc="Per GPU node, a pod requesting every GPU runs `nvidia-smi -L`; it must list that many GPUs.",
)
PVC_WRITE = declare_active(
    "storage.pvc-write",
    CATEGORY.STORAGE,
    "A PVC on the default StorageClass binds and takes writes from a GPU node",
    fix="kubectl describe pvc in the test namespace: provisioner events name the cause.",
    doc="A 1Gi claim without a class (so the default) and a pod on a GPU node that writes and reads it back.",
)
NCCL = declare_active(
    "network.nccl-allreduce",
    CATEGORY.NETWORK,
    "NCCL all-reduce between GPU nodes reaches the links' rated speed",
    fix="Check RDMA ports, GPUDirect RDMA (nvidia_peermem) and NCCL_DEBUG=INFO output of the test pods.",
    doc=("With --nccl: per pair of GPU nodes, nccl-tests' all_reduce_perf under mpirun (host network, "
         "all GPUs, RDMA devices, 64 MiB to 1 GiB); its peak bus bandwidth against the pair's rated "
         "link speed (RDMA ports, or NVLink within one NVLink domain): pass from 60 %, fail under 25 %."),
)
CLEANUP = declare_active(
    "infra.active-cleanup",
    CATEGORY.INFRASTRUCTURE,
    "Active test objects removed, including an interrupted run's leftovers",
    fix="kubectl delete ns -l app.kubernetes.io/managed-by=gpunode,app.kubernetes.io/component=validate",
    doc="Leftovers of earlier runs are found by label and removed first; this run's objects last.",
)
