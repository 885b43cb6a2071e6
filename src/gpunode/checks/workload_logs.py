"""GPU workloads' own logs as evidence of the node's stack.

A GPU job that runs on the node says what the stack under it gave it: CUDA and NVML
errors ("Failed to initialize NVML: Unknown Error" once a container lost its devices),
and NCCL's choice of transport ("NET/IB : No device found" then "NET/Socket : Using"
where the node has InfiniBand/RoCE ports, so collectives crawl over TCP). These lines
are in the workload's container log (``logs/<ns>/<pod>/<container>.log``, which the
collector keeps for failing GPU workloads and a hand-made bundle may hold for any). The
pod may be Running: a container that lost its devices keeps running, and NCCL's
fallback fails nothing. So the logs are read whatever the pod's state, and:

* the decisive line of a workload's log (gpunode.decisive, general rules) that names a
  stack component (the catalog's ``named_by``) is a finding against that component,
  like the words of a workload the kubelet could not start (checks.decisive);
* NCCL's IB transport finding no device on a node whose RDMA ports or resources show
  is ``nccl_socket_fallback`` of ``gpudirect-rdma`` (degraded). On a node without
  RDMA, sockets are NCCL's only transport and nothing is wrong.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpunode.bundle.kube import Pod
from gpunode.checks.base import check, problem
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import OWN_FACTS_ONLY, as_catalogued, line_finding
from gpunode.decisive import decisive_line
from gpunode.facts import LogFile
from gpunode.model import Evidence, Finding, Status

#: NCCL's IB/RoCE transport found no usable device (NCCL_DEBUG=INFO or WARN prints it).
NCCL_NO_IB = re.compile(r"\bNET/IB : No device found")
#: NCCL's IB transport in use: the fallback line above was not the last word.
NCCL_USING_IB = re.compile(r"\bNET/IB : Using \[\d")
#: Node labels NFD sets for NVIDIA (Mellanox) networking and RDMA.
_RDMA_LABELS = ("feature.node.kubernetes.io/pci-15b3.present", "feature.node.kubernetes.io/rdma.capable",
                "feature.node.kubernetes.io/rdma.available")
#: The collected RDMA port files (docs/bundle-format.md): non-empty where an HCA is.
_PORT_FILES = ("sysfs-infiniband.txt", "ibstat.txt", "ibv_devinfo.txt")
#: Extended resources of RDMA devices (the RDMA shared device plugin's rdma/*, SR-IOV VFs).
_RDMA_RESOURCE = re.compile(
    r"^rdma/|^nvidia\.com/(?:rdma|sriov|hca)|^mellanox\.com/|^openshift\.io/\w*(?:rdma|mlx)")


def _workload_logs(ctx: NodeContext) -> Iterator[tuple[Pod, LogFile]]:
    for pod in ctx.facts.logged_workloads_by_node.get(ctx.name, ()):
        for log in ctx.logs_of(pod):
            yield pod, log


def workload_log_findings(ctx: NodeContext) -> Iterator[Finding]:
    """Findings against the stack component a GPU workload's own last error names, one per
    workload (its current log first, then the previous run's)."""
    catalog = ctx.facts.catalog
    done: set[tuple[str, str]] = set()
    for pod, log in sorted(_workload_logs(ctx), key=lambda item: item[1].previous):
        meta = pod.metadata
        key = (meta.namespace, meta.name)
        if key in done:
            continue
        found = decisive_line(log.lines, ctx.kb.class_of)
        target = catalog.named_in(found.line) if found is not None else None
        if found is None or target is None or target in OWN_FACTS_ONLY:
            continue
        done.add(key)
        verb = f"fails in GPU workload {meta.namespace}/{meta.name}"
        yield as_catalogued(ctx.kb, line_finding(
            ctx.kb, target, Status.FAILED, found, f"{log.path}:{found.line_no}", verb=verb,
            standalone="true", namespace=meta.namespace, pod=meta.name, container=log.container))


def _has_rdma(ctx: NodeContext) -> bool:
    """Whether the node shows RDMA ports: collected port files with content, NFD's RDMA
    or Mellanox labels, RDMA resources, or a MOFED or RDMA device plugin pod on it."""
    if any((ctx.obs.cmd.get(name) or "").strip() for name in _PORT_FILES):
        return True
    node = ctx.node
    if node is not None:
        if any(node.metadata.labels.get(label) == "true" for label in _RDMA_LABELS):
            return True
        capacity = node.status.capacity
        if any(_RDMA_RESOURCE.search(key) and value not in ("0", "") for key, value in capacity.items()):
            return True
    return bool(ctx.stack_pods("ofed") or ctx.stack_pods("rdma-device-plugin"))


@check("gpudirect-rdma")
def nccl_transport(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """NCCL fell back to sockets in a GPU workload on a node that has RDMA ports."""
    for pod, log in _workload_logs(ctx):
        lines = log.lines
        last = next((i for i in range(len(lines) - 1, -1, -1) if NCCL_NO_IB.search(lines[i])), None)
        if last is None or any(NCCL_USING_IB.search(line) for line in lines[last:]):
            continue
        if not _has_rdma(ctx):
            return  # sockets are the only transport of a node without RDMA
        meta = pod.metadata
        ev = Evidence(f"{log.path}:{last + 1}", lines[last].strip())
        yield problem(component, "nccl_socket_fallback", ev, status=Status.DEGRADED, specificity=50,
                      namespace=meta.namespace, pod=meta.name, container=log.container)
        return
