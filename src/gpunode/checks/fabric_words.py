"""What a GPU job's NCCL says of the network fabric the node gave it, read with the rest of its log.

Readings that need more than one line, so the job-error table (``data/job_errors.toml``)
cannot make them alone:

* a net plugin that finds no provider is the job's failure only where NCCL does not go on
  over another network (checks.net_plugin, which checks.workload_logs reads);
* NCCL failing to import the topology or graph file the node's NCCL configuration injects
  (``NCCL_TOPO_FILE`` / ``NCCL_GRAPH_FILE``, set in the environment or in /etc/nccl.conf,
  which NCCL reports as "set by environment to <path>"): the file describes another machine
  than the one the job runs on (a graph naming a GPU the VM does not have: graph/search.cc's
  "XML Import Channel : dev N not found"), which is the node's NCCL setup, not the job. The
  files are the VM provider's to give and must match the VM's PCI layout (NVIDIA/nccl-tests#86;
  NVIDIA/nccl#977: errors from a host's topology file edited for a VM;
  https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-topo-file). NCCL's
  own limits in the same code ("too many XML nodes", aws/aws-ofi-nccl#1226, with or without a
  file) are not read so.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from gpunode.checks.base import any_logged_workload, check, reads
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import line_finding
from gpunode.decisive import MAX_LINE, Decisive
from gpunode.model import Evidence, Finding, Status
from gpunode.relazy import lazy_compile

#: NCCL reporting a topology or graph file it was given (its env notice, whatever set it).
_FILE_SET = lazy_compile(r"\bNCCL_(?:TOPO|GRAPH)_FILE set by environment to \S+")
#: A WARN of NCCL's topology/graph code ("graph/search.cc:703 NCCL WARN ...", "graph/xml.h").
_GRAPH_WARN = lazy_compile(r"\bgraph/\w+\.(?:cc|h):\d+ NCCL WARN (?P<message>.+)")
#: The import of the file failing on what it names or holds: a device the node lacks, a
#: file it cannot open, an attribute or node missing from it.
_IMPORT_FAILED = lazy_compile(r"\bXML Import\b|\bnot found\b|\bCould not open\b", re.I)
#: The class of a configuration the node does not fit (data/causes/classes.toml).
_CONFIG_INVALID = "error_config_invalid"


def injected_topology_refused(lines: Sequence[str]) -> tuple[int, int] | None:
    """(index of the file notice, index of the WARN) where NCCL's topology/graph code fails to
    import a file NCCL said it was given before, or None."""
    given = next((i for i, line in enumerate(lines) if _FILE_SET.search(line)), None)
    if given is None:
        return None
    for index in range(given + 1, len(lines)):
        m = _GRAPH_WARN.search(lines[index])
        if m is not None and _IMPORT_FAILED.search(m["message"]):
            return given, index
    return None


@check("gpudirect-rdma", may_find=any_logged_workload)
def nccl_injected_topology(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A GPU workload's NCCL cannot import the topology or graph file the node's NCCL
    configuration gave it: the file does not describe this node."""
    for pod, log in ctx.workload_logs():
        said = injected_topology_refused(log.lines)
        if said is None:
            continue
        given, index = said
        meta = pod.metadata
        notice = Evidence(f"{log.path}:{given + 1}", log.lines[given].strip())
        found = Decisive(index + 1, log.lines[index].strip()[:MAX_LINE], 2)
        yield line_finding(ctx.kb, component, Status.FAILED, found, f"{log.path}:{index + 1}",
                           verb=f"cannot use the NCCL topology it was given in GPU workload "
                                f"{meta.namespace}/{meta.name}",
                           evidence=(notice,), line_class=_CONFIG_INVALID, standalone="true",
                           namespace=meta.namespace, pod=meta.name, container=log.container)
        return


#: The node's InfiniBand tools finding no RDMA device registered under /sys/class/infiniband:
#: ibstatus' "Fatal error:  device '*': sys files not found (/sys/class/infiniband/*/ports)",
#: ibv_devinfo's "No IB devices found".
_NO_RDMA_DEVICE = lazy_compile(r"\bsys files not found \(/sys/class/infiniband/|^\s*No IB devices found\b",
                               re.M)
#: The collected outputs of those tools (docs/bundle-format.md).
_TOOL_FILES = ("ibstat.txt", "ibv_devinfo.txt")
#: The Mellanox NIC drivers' core (Ethernet and PCI) modules, and NFD's label for a Mellanox
#: PCI device (vendor 15b3): a ConnectX the node has, whatever its RDMA side does.
_MELLANOX_CORE = ("mlx5_core", "mlx4_core")
_MELLANOX_LABEL = "feature.node.kubernetes.io/pci-15b3.present"
_NOT_FOUND = "error_not_found"


def _mellanox_nic(ctx: NodeContext) -> Evidence | None:
    """What shows the node has a Mellanox NIC (its core module loaded, NFD's PCI label), or None."""
    modules = ctx.modules or {}
    loaded = next((name for name in _MELLANOX_CORE if name in modules), None)
    if loaded is not None:
        return Evidence(ctx.obs.path_of("cmd", "lsmod.txt"), f"{loaded} loaded")
    node = ctx.node
    labelled = node is not None and node.metadata.labels.get(_MELLANOX_LABEL) == "true"
    return Evidence(f"node/{ctx.name}", f"{_MELLANOX_LABEL}=true") if labelled else None


@check("ofed", may_find=reads(*(f"cmd/{name}" for name in _TOOL_FILES)))
def no_rdma_device_registered(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The node's InfiniBand tools find no device under /sys/class/infiniband while the node
    has a Mellanox NIC: the InfiniBand drivers create a device's directory there when they
    register it (the kernel's Documentation/infiniband/sysfs.txt), so the NIC's RDMA driver
    stack (MLNX_OFED/DOCA, or the inbox mlx4_ib/mlx5_ib) never registered it ("Seems like
    driver was not started": https://www.open-mpi.org/community/lists/users/2012/12/21011.php).
    A node with no Mellanox NIC has nothing to register, and says nothing."""
    for name in _TOOL_FILES:
        text = ctx.obs.cmd.get(name) or ""
        m = _NO_RDMA_DEVICE.search(text)
        nic = _mellanox_nic(ctx) if m is not None else None
        if m is None or nic is None:
            continue
        start, end = text.rfind("\n", 0, m.start()) + 1, text.find("\n", m.end())
        line = text[start:end if end >= 0 else len(text)].strip()
        where = ctx.obs.path_of("cmd", name)
        found = Decisive(text.count("\n", 0, start) + 1, line[:MAX_LINE], 2)
        yield line_finding(ctx.kb, component, Status.FAILED, found, f"{where}:{found.line_no}",
                           verb="finds no RDMA device for the node's Mellanox NIC",
                           evidence=(nic,), line_class=_NOT_FOUND)
        return


#: libibverbs finding no kernel verbs interface (/sys/class/infiniband_verbs/abi_version, which
#: the ib_uverbs module creates): older libibverbs' own "Fatal: couldn't read uverbs ABI
#: version", rdma-core's ENOSYS from ibv_get_device_list as ibv_devices and the verbs examples
#: report it (perror: "Failed to get IB devices list: Function not implemented").
_NO_VERBS_KERNEL = lazy_compile(
    r"\bcouldn't read uverbs ABI version\b|\bFailed to get IB devices list: Function not implemented\b", re.I)


def _no_verbs_kernel(lines: Sequence[str]) -> Decisive | None:
    """The first line of a job's log where libibverbs finds no kernel verbs interface, or None."""
    index = next((i for i, line in enumerate(lines) if _NO_VERBS_KERNEL.search(line)), None)
    return None if index is None else Decisive(index + 1, lines[index].strip()[:MAX_LINE], 2)


@check("ofed", may_find=any_logged_workload)
def job_found_no_verbs_kernel(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A GPU workload's libibverbs finds no kernel verbs interface while the node has a
    Mellanox NIC: libibverbs reads /sys/class/infiniband_verbs/abi_version, which the RDMA
    stack's ib_uverbs module creates (rdma-core libibverbs/init.c check_abi_version returns
    ENOSYS without it; "This usually happens when ib_uverbs module isn't loaded", the libibverbs
    messages of NVIDIA's RDMA Aware Networks Programming User Manual), and a container sees the
    host's sysfs: the node's RDMA driver stack did not load it. A node without such a NIC has no
    verbs interface to give, and the line says nothing there."""
    nic = _mellanox_nic(ctx)
    if nic is None:
        return
    for pod, log in ctx.workload_logs():
        found = _no_verbs_kernel(log.lines)
        if found is None:
            continue
        meta = pod.metadata
        verb = f"gives no kernel verbs interface to GPU workload {meta.namespace}/{meta.name}"
        yield line_finding(ctx.kb, component, Status.FAILED, found, f"{log.path}:{found.line_no}", verb=verb,
                           evidence=(nic,), line_class=_NOT_FOUND, standalone="true",
                           namespace=meta.namespace, pod=meta.name, container=log.container)
        return
