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
  RDMA, sockets are NCCL's only transport and nothing is wrong;
* NCCL names the layer under the job in its own words: a WARN line is its error level
  whatever words follow, a message that runs over several lines names its layer in any of
  them (the NVLS hint names Fabric Manager two lines after the CUDA error), and its
  transports are the links (``NET/IB`` port events and failed completions: the RDMA
  links; ``transport/nvls.cc``: the NVSwitch fabric Fabric Manager configures). The named
  component's catalogued cause whose pasted-text signature the line matches is the cause;
* NCCL disabling GPUDirect RDMA for a GPU whose NIC is too far on the PCIe tree is
  ``nic_gpu_affinity_missing`` (degraded), NCCL's own reading of the topology;
* ``ibdev2netdev`` run inside the job (its own RDMA devices and the interfaces they back,
  ``mlx5_3 port 1 ==> net1 (Down)``) showing every port it lists Down is
  ``rdma_port_down``: the job has no RDMA link up. A list where some port is Up is a host
  view with spare ports down, and says nothing. ``ibv_devinfo`` and ``ibstat`` run inside
  the job are read the same way: no port ACTIVE is ``rdma_port_down`` where one is DOWN,
  ``ib_port_no_subnet_manager`` where all wait in INIT or ARMED.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator, Sequence

import msgspec

from gpunode.bundle.kube import Container, Pod
from gpunode.checks.base import MESSAGE, any_logged_workload, check, problem
from gpunode.checks.bus_error import nccl_bus_error
from gpunode.checks.busy_gpus import (
    all_exclusive,
    busy_owner,
    context_refused_index,
    pod_gpus,
    several_gpus,
    thread_bound_index,
    thread_exclusive,
)
from gpunode.checks.cli_step import cli_named_step
from gpunode.checks.collective_stall import stalled_index
from gpunode.checks.context import NodeContext
from gpunode.checks.cuda_floor import on_major_first_branch, runs_no_current_cuda
from gpunode.checks.cuda_pair_words import driver_older_than_compiler, driver_serves_runtime
from gpunode.checks.decisive import OWN_FACTS_ONLY, as_catalogued, line_finding
from gpunode.checks.devices_lost import FRAMEWORK_NO_DEVICE, LOST, lost_device_line
from gpunode.checks.foreign_memory import foreign_memory_index
from gpunode.checks.iommu_domain import protection_under_translation
from gpunode.checks.job_words import SMI_NO_NVML, job_cause, job_names
from gpunode.checks.nccl_system_error import bare_system_error, shares_gpus_in_container
from gpunode.checks.net_plugin import plugin_fell_back
from gpunode.checks.no_cgroups import REFUSED as NO_CGROUPS_REFUSED
from gpunode.checks.no_cgroups import nvml_refused, skips_device_cgroup
from gpunode.checks.nvml_query import unless_query_refused
from gpunode.checks.runtime_class import NOT_DEFAULT_RUNTIME
from gpunode.checks.tegra_mounts import mounts_cuda, says_mounted_library_missing
from gpunode.checks.unsettled_words import device_refused, unsettled_index
from gpunode.checks.unversioned_library import own_unversioned_load
from gpunode.checks.uvm_words import (
    UVM_MISSING,
    init_unknown_index,
    says_init_unknown,
    uvm_load_failed_index,
    uvm_not_loaded,
)
from gpunode.checks.versions import HOST_VERSIONS
from gpunode.checks.vgpu_words import fractional_instance, is_vgpu, unavailable_index
from gpunode.checks.wsl_kernel import too_old_for_gpu
from gpunode.decisive import MAX_LINE, Decisive, decisive_line, message_of, reports_xid, severity
from gpunode.facts import LogFile
from gpunode.gpus import INSTANCE_TYPE_LABELS
from gpunode.job_errors import job_error
from gpunode.kb import KnowledgeBase
from gpunode.model import Evidence, Finding, Status
from gpunode.parse.image_cuda import image_cuda, stated_cuda
from gpunode.parse.infiniband import parse_ibstat, parse_ibv_devinfo
from gpunode.podenv import nvidia_env
from gpunode.relazy import lazy_compile
from gpunode.runtimes import is_nvidia_runtime

#: NCCL's IB/RoCE transport found no usable device (NCCL_DEBUG=INFO or WARN prints it).
NCCL_NO_IB = lazy_compile(r"\bNET/IB : No device found")
#: NCCL's IB transport in use: the fallback line above was not the last word.
NCCL_USING_IB = lazy_compile(r"\bNET/IB : Using \[\d")
#: NCCL turned GPUDirect RDMA off for a GPU because its NIC is too far on the PCIe tree
#: (transport/net.cc: "GPU Direct RDMA Disabled for GPU <dev> / HCA <n> (distance <d> > <level>)",
#: ``>=`` in older releases); the same words without a distance are a NIC without peer memory.
NCCL_GDR_FAR = lazy_compile(r"GPU Direct RDMA Disabled for GPU \w+ / HCA \d+ \(distance \d+ >=? \d+\)")
#: NCCL's IB transport reporting, per HCA, whether GPUDirect RDMA can be used through it
#: (net_ib.cc: "NET/IB : GPU Direct RDMA Disabled for HCA %d '%s'", "(no module)" or "(no
#: peermem)" after it in some releases; "... Enabled for HCA ..." or "(DMABUF) enabled"
#: otherwise). The socket transport's own "NET/Socket : GPU Direct RDMA Disabled" is by design.
NCCL_GDR_HCA = lazy_compile(
    r"\bNET/IB : GPU Direct RDMA (?:\(\w+\) )?(?P<state>Disabled|[Ee]nabled) for HCA \d+\b")
#: GPUs that do not do GPUDirect RDMA at all (GeForce and workstation boards, GB10's unified
#: memory): NCCL disabling it there says nothing about the stack.
_NO_GDR_GPU = lazy_compile(r"(?i:\bGeForce\b|\bRTX\b|\bQuadro\b|\bTITAN\b|\bGB10\b)")
#: Node labels NFD sets for NVIDIA (Mellanox) networking and RDMA.
_RDMA_LABELS = ("feature.node.kubernetes.io/pci-15b3.present", "feature.node.kubernetes.io/rdma.capable",
                "feature.node.kubernetes.io/rdma.available")
#: The collected RDMA port files (docs/bundle-format.md): non-empty where an HCA is.
_PORT_FILES = ("sysfs-infiniband.txt", "ibstat.txt", "ibv_devinfo.txt")
#: Extended resources of RDMA devices (the RDMA shared device plugin's rdma/*, SR-IOV VFs).
_RDMA_RESOURCE = lazy_compile(
    r"^rdma/|^nvidia\.com/(?:rdma|sriov|hca)|^mellanox\.com/|^openshift\.io/\w*(?:rdma|mlx)")


#: The layers a pod that asks for RDMA devices and no GPU (``ClusterFacts.fabric_pods``) can
#: speak for: the verbs path from its HCA to the peer. What it says of a GPU, CUDA or the NVIDIA
#: runtime is no evidence, since none was given to it.
_FABRIC_LAYERS = frozenset({"ofed", "rdma-links", "rdma-device-plugin", "sriov-device-plugin",
                            "gpudirect-rdma"})


def workload_log_findings(ctx: NodeContext) -> Iterator[Finding]:
    """Findings against the stack component a GPU workload's own last error names, one per
    workload (its current log first, then the previous run's). A pod that asks only for RDMA
    devices (an ib_write_bw test between two pods) names only the RDMA layers."""
    catalog = ctx.facts.catalog
    fabric = ctx.facts.fabric_keys

    def named_in(line: str) -> str | None:
        return catalog.named_in(line) or job_names(line) or interposer_owner(ctx, line)

    done: set[tuple[str, str]] = set()
    for pod, log in sorted(ctx.workload_logs(), key=lambda item: item[1].previous):
        meta = pod.metadata
        key = (meta.namespace, meta.name)
        if key in done:
            continue
        gpu_mr = (_gpu_memory_refused(ctx.kb, pod, log) or _nvshmem_registration_refused(ctx, pod, log)
                  or _host_memory_refused(ctx.kb, pod, log) or _nccl_shm_bus_error(ctx.kb, pod, log))
        if gpu_mr is not None:
            done.add(key)
            yield gpu_mr
            continue
        found = _named_line(ctx.kb, log.lines, named_in)
        target = named_in(found.line) if found is not None else None
        if key in fabric:
            said = _fabric_finding(ctx.kb, pod, log, found, target)
            done.update([key] if said else [])
            yield from said
            continue
        if target is None and found is not None:  # NVIDIA's hook failed, its own words not here
            hooked = found if _nvidia_hook(found.line) else _naming_neighbour(log.lines, found, _nvidia_hook)
            found, target = (hooked, "container-toolkit") if hooked is not None else (found, None)
        if found is None or target is None or (target in OWN_FACTS_ONLY
                                               and not _hardware_says(ctx.kb, target, found.line)):
            runtime_less = (_below_required_driver(ctx, pod, log)
                            or _no_cuda_on_old_driver(ctx, pod, log)
                            or _not_supported_on_first_branch(ctx, pod, log)
                            or _uvm_missing(ctx, pod, log)
                            or _vgpu_refused(ctx, pod, log)
                            or _busy_refused(ctx, pod, log)
                            or _thread_exclusive_refused(ctx, pod, log)
                            or _exclusive_context_refused(ctx, pod, log)
                            or _no_gpu_without_runtime(ctx, pod, log)
                            or _devices_lost(ctx, pod, log)
                            or _not_injected(ctx, pod, log)
                            or _nvml_refused_under_cdi(ctx, pod, log)
                            or _nccl_system_error(ctx.kb, pod, log)
                            or _collective_stalled(ctx, pod, log)
                            or _memory_held_elsewhere(ctx, pod, log)
                            or _driver_older_than_compiler(ctx, pod, log)
                            or _unsettled(ctx, pod, log))
            if runtime_less is not None:
                done.add(key)
                yield _on_old_wsl_kernel(ctx, runtime_less)
            continue
        done.add(key)
        if (_own_nccl_setting(found.line, log.lines) or _shm_after_cuda(found, log.lines)
                or (target == "container-toolkit" and _nested_cli_refusal(ctx, pod, log, found.line))
                or own_stub_library(found.line)
                or plugin_fell_back(found.line, found.line_no, log.lines)
                or own_unversioned_load(found.line, found.line_no, log.lines)):
            continue
        verb = f"fails in GPU workload {meta.namespace}/{meta.name}"
        finding = _as_text_catalogued(ctx.kb, as_catalogued(ctx.kb, line_finding(
            ctx.kb, target, Status.FAILED, found, f"{log.path}:{found.line_no}", verb=verb,
            standalone="true", namespace=meta.namespace, pod=meta.name, container=log.container)))
        finding = _without_nvidia_runtime(ctx, pod, _table_cause(ctx.kb, finding, found.line), log.lines)
        finding = _no_cgroups_recast(ctx, _init_on_old_driver(ctx, _uvm_recast(ctx, finding)))
        finding = _iommu_translated(ctx, finding, found.line)
        # NVML answered: one query's privilege
        yield from (_on_old_wsl_kernel(ctx, _confined(ctx, _image_libcuda(
                        ctx, _image_nvml(ctx, kept, log.lines), log.lines)))
                    for kept in unless_query_refused(finding, log.lines)
                    if not cli_named_step(ctx, kept)  # the CLI's own log says why the library is missing
                    and not _served_by_driver(kept, log.lines))


#: The job-error table's entry for CUDA's stub-library error (cudaErrorStubLibrary,
#: CUDA_ERROR_STUB_LIBRARY, 34).
_STUB_LIBRARY = "cuda-stub-library"


def own_stub_library(line: str) -> bool:
    """CUDA's stub-library error (34) in a GPU job's own log: the process loaded the CUDA
    Toolkit's link-time placeholder libcuda.so (``lib64/stubs``), which "has no actual
    implementations" (the driver API's CUresult docs: "the CUDA driver that the application has
    loaded is a stub library"). The stub comes with a CUDA Toolkit in the job's image or
    environment, never with the driver or the NVIDIA runtime's injection; it is loaded where the
    job's own library search path (LD_LIBRARY_PATH, the image's ld configuration) puts the stubs
    ahead of the driver's library, and every public report of it was fixed there: the Warp
    maintainers' answer in NVIDIA/warp#219 (the stubs directory searched before the user-mode
    driver), fboulnois/stable-diffusion-docker#22 (fixed by removing the stubs from the image,
    PR #23), numba/numba#8985 and NVIDIA/FasterTransformer#275 (LD_LIBRARY_PATH reset). So a
    job's 34 is no evidence against the stack; the operator's own validator, whose image puts
    no stubs on its path, still reads it as the injection's (data/job_errors.toml)."""
    found = job_error(line)
    return found is not None and found.id == _STUB_LIBRARY


#: NCCL's bootstrap finding no interface to listen on (bootstrap.cc, bootstrapNetInit).
_NCCL_NO_BOOTSTRAP_IF = lazy_compile(r"\bBootstrap\s?:\s?no socket interface found\b")
#: The job's own part in it: NCCL's result for it, ncclInvalidUsage ("invalid usage", its
#: class for a caller's wrong setting, in recent releases), or NCCL's notice that the
#: job's environment chose the interfaces ("NCCL_SOCKET_IFNAME set by environment to eth0").
_NCCL_USAGE = lazy_compile(r"\binvalid usage\b|\bncclInvalidUsage\b|"
                           r"\bNCCL_SOCKET_(?:IFNAME|FAMILY) set by environment\b")


def _own_nccl_setting(line: str, lines: Sequence[str]) -> bool:
    """NCCL's bootstrap finding no interface where NCCL says the job's setting chose none.
    Unset, NCCL_SOCKET_IFNAME lets NCCL fall back to any interface, loopback last
    (ncclFindInterfaces), so none found under the job's filter, with NCCL calling it invalid
    usage or naming the variable, is the job's NCCL_SOCKET_IFNAME matching no interface of
    the pod (marin-community/marin#6940, #7018): the job's configuration, not the stack.
    The bootstrap line with neither, and the socket layer's EAFNOSUPPORT (a container given
    no IP interface, NVIDIA/nccl-tests#14), stay the container's network."""
    return bool(_NCCL_NO_BOOTSTRAP_IF.search(line)) and any(_NCCL_USAGE.search(text) for text in lines)


#: NCCL's line for a shared-memory segment it could not create (misc/shmutils.cc).
_NCCL_SHM_CREATE = lazy_compile(r"\bError while creating shared memory segment /dev/shm/")
#: A CUDA error as NCCL and the CUDA runtime print it ("NCCL WARN Cuda failure 'invalid
#: argument'", "CUDA error: ...", an error enumerator such as cudaErrorInvalidValue).
_CUDA_ERROR = lazy_compile(r"\bCuda failure\b|\bCUDA error\b|\bcudaError[A-Z]\w+|\bCUDA_ERROR_[A-Z_]+")


def _shm_after_cuda(found: Decisive, lines: Sequence[str]) -> bool:
    """NCCL's segment-creation line after a CUDA error in the same log: NCCL registers the
    segment with CUDA (cudaHostRegister) and prints the same line when that fails, with room
    left in /dev/shm (NVIDIA/nccl#1518), so the line then says nothing of the pod's /dev/shm."""
    return bool(_NCCL_SHM_CREATE.search(found.line)) and any(
        _CUDA_ERROR.search(line) for line in lines[:max(found.line_no - 1, 0)])


#: A job's words for a memory region the NIC would not register (perftest's "Couldn't
#: allocate MR" and "Failed to create MR", a verbs program's "ibv_reg_mr failed").
_MR_REFUSED = lazy_compile(
    r"\b(?:[Cc]ould(?:n.t| not)|[Ff]ailed to|[Uu]nable to) (?:allocate|register|create) "
    r"(?:the |an? )?MR\b|\bibv_reg_mr\b.{0,40}\bfail")
#: The job's own report that the buffer it hands the NIC is GPU memory: perftest's --use_cuda
#: ("cuMemAlloc() of a 262144 bytes GPU buffer", "allocated GPU buffer address at ...").
_GPU_BUFFER = lazy_compile(r"\ballocated GPU buffer\b|\bcuMemAlloc\(\) of a \d+ bytes GPU buffer\b")
#: EFAULT: the kernel could not pin the pages behind the address (ib_umem_get), which for GPU
#: memory means no peer-memory client claimed them; ENOMEM (memlock) and the rest are not it.
_EFAULT = lazy_compile(r"\bBad address\b|\bEFAULT\b")
_PEERMEM = "peermem_not_loaded"


def _gpu_memory_refused(kb: KnowledgeBase, pod: Pod, log: LogFile) -> Finding | None:
    """The NIC refusing to register GPU memory, settled by the job's own facts: a GPU buffer
    allocated, then a memory region that could not be registered, with EFAULT after it. Only
    the GPU driver's peer-memory client (nvidia-peermem) lets the HCA pin GPU pages, so that is
    the fault (linux-rdma/perftest#126: ib_write_bw --use_cuda, "Couldn't allocate MR", "Bad
    address"; the fix was modprobe nvidia-peermem). Host memory refused, or GPU memory refused
    for another reason (ENOMEM under memlock), stays with the line's own layer and class."""
    lines = log.lines
    start = next((i for i, line in enumerate(lines) if _GPU_BUFFER.search(line)), None)
    if start is None:
        return None
    refused = next((i for i in range(start + 1, len(lines)) if _MR_REFUSED.search(lines[i])), None)
    if refused is None or not any(_EFAULT.search(line) for line in lines[refused:]):
        return None
    meta = pod.metadata
    found = Decisive(refused + 1, lines[refused].strip()[:MAX_LINE], 1)
    known = kb.get(_PEERMEM)
    verb = f"cannot register GPU memory for RDMA in workload {meta.namespace}/{meta.name}"
    finding = line_finding(kb, known.component, Status.FAILED, found, f"{log.path}:{refused + 1}", verb=verb,
                           standalone="true", namespace=meta.namespace, pod=meta.name,
                           container=log.container)
    return msgspec.structs.replace(finding, cause=known.code, status=known.severity,
                                   specificity=max(known.specificity, finding.specificity))


#: An RDMA test's own words for a memory region it could not register (perftest's
#: "Couldn't allocate MR" / "failed to create mr" / "Failed to create MR", rdma-core's verbs
#: examples' "Couldn't allocate MR"), not a library's wrapper naming its own path (NCCL's
#: "Call to ibv_reg_mr ... failed", the GPUDirect RDMA path's).
_OWN_MR_REFUSED = lazy_compile(
    r"^\s*(?:[Cc]ould(?:n.t| not)|[Ff]ailed to|[Uu]nable to) (?:allocate|register|create) "
    r"(?:the |an? )?MRs?\b")
#: The errno perftest prints after it ("Couldn't allocate MR with error=12"), or its text.
_MR_ERRNO = lazy_compile(r"\berror=(?P<errno>\d+)|(?P<text>Cannot allocate memory|Bad address|"
                         r"Operation not (?:supported|permitted)|Invalid argument|Permission denied)")
#: A job that hands the NIC GPU memory (perftest's --use_cuda, DMA-BUF), which RLIMIT_MEMLOCK
#: does not govern.
_GPU_MEMORY_WORDS = lazy_compile(r"(?i:\bCUDA\b|--use_cuda|\bdma-?buf\b|\bGPU buffer\b|\bNCCL\b)")
_ENOMEM, _ENOMEM_TEXT = "12", "Cannot allocate memory"


def _host_memory_refused(kb: KnowledgeBase, pod: Pod, log: LogFile) -> Finding | None:
    """An RDMA test unable to register host memory with the HCA, with no errno or ENOMEM: the
    kernel pins the pages (ib_umem_get) and charges them to the process's RLIMIT_MEMLOCK,
    which a container inherits from the runtime that started it ("low lockable memory causes
    failures when creating CQ, QP, SRQ or MR", the libibverbs messages of NVIDIA's RDMA Aware
    Networks Programming User Manual; perftest's perftest_resources.c prints "Couldn't allocate
    MR" where ibv_reg_mr returns none). raids-lab/crater's RDMA admin docs ("Lifting the Memory
    Lock Limit", #339): ib_read_bw between pods under containerd's default 64 KiB limit,
    fixed in the runtime's base spec. A job that names GPU memory (--use_cuda, DMA-BUF, a CUDA
    line, NCCL) or an errno other than ENOMEM is not read so (peer memory, a bad address)."""
    lines = log.lines
    index = next((i for i, line in enumerate(lines) if _OWN_MR_REFUSED.search(line)), None)
    if index is None or any(_GPU_MEMORY_WORDS.search(line) for line in lines):
        return None
    for line in lines[index:index + 4]:
        for m in _MR_ERRNO.finditer(line):
            if m["errno"] not in (None, _ENOMEM) or m["text"] not in (None, _ENOMEM_TEXT):
                return None
    meta = pod.metadata
    found = Decisive(index + 1, lines[index].strip()[:MAX_LINE], 1)
    verb = f"cannot lock memory for RDMA in workload {meta.namespace}/{meta.name}"
    return line_finding(kb, "container-runtime", Status.FAILED, found, f"{log.path}:{index + 1}", verb=verb,
                        line_class="error_resource_exhausted", standalone="true", namespace=meta.namespace,
                        pod=meta.name, container=log.container)


#: NVSHMEM's IB transports (ibrc, ibdevx, ibgda, their shared ib_common) failing to register a
#: buffer of its symmetric heap with the HCA: "Unable to register memory handle." after
#: nvshmemt_ib_common_reg_mem_handle failed, and that function's own "mem registration failed"
#: where ibv_reg_mr returned no region (src/modules/transport/ibrc/ibrc.cpp,
#: common/transport_ib_common.cpp; the heap is GPU memory). Releases before the shared
#: ib_common file print it from the transport's own file, and their FAQ quotes it with no line
#: number ("src/comm/transports/ibrc/ibrc.cpp:: NULL value mem registration failed.", NVSHMEM
#: 2.2.1 Troubleshooting and FAQs: GPUDirect RDMA is off, usually no nv_peer_mem loaded).
_NVSHMEM_MR_REFUSED = lazy_compile(
    r"\bUnable to register memory handle\b"
    r"|\b(?:transport_ib_common|ibrc|ibdevx|ibgda)\.\w+:\d*: NULL value mem registration failed\b")
#: The GPU's peer-memory client by either name (nv_peer_mem before R470, nvidia_peermem since).
_PEER_MODULES = ("nvidia_peermem", "nv_peer_mem")


def _nvshmem_registration_refused(ctx: NodeContext, pod: Pod, log: LogFile) -> Finding | None:
    """NVSHMEM's IB transport unable to register its GPU heap with the HCA on a node whose
    module list shows the GPU driver and no peer-memory client: without nvidia-peermem the
    HCA cannot pin GPU pages, so every registration of GPU memory fails (Azure/azhpc-images#316:
    the AlmaLinux HPC image loaded nvidia and gdrdrv but no peer-memory module; its maintainers
    added nvidia-peermem to the image). Where the module list
    was not collected, shows no nvidia module, or shows a peer-memory client, the line keeps
    its own reading."""
    modules = ctx.modules
    if not modules or "nvidia" not in modules or any(name in modules for name in _PEER_MODULES):
        return None
    index = next((i for i, line in enumerate(log.lines) if "regist" in line
                  and _NVSHMEM_MR_REFUSED.search(line)), None)
    if index is None:
        return None
    meta = pod.metadata
    found = Decisive(index + 1, log.lines[index].strip()[:MAX_LINE], 1)
    verb = f"cannot register GPU memory for RDMA in workload {meta.namespace}/{meta.name}"
    finding = line_finding(ctx.kb, "driver", Status.FAILED, found, f"{log.path}:{index + 1}", verb=verb,
                           evidence=(Evidence(ctx.obs.path_of("cmd", "lsmod.txt"),
                                              "nvidia loaded; no nvidia_peermem or nv_peer_mem"),),
                           standalone="true", namespace=meta.namespace, pod=meta.name,
                           container=log.container)
    return _recast(ctx, finding, _PEERMEM)


def _nccl_shm_bus_error(kb: KnowledgeBase, pod: Pod, log: LogFile) -> Finding | None:
    """A GPU job killed by a bus error in NCCL's code (checks.bus_error): the container
    runtime's /dev/shm, exhausted, with the signal line quoted and the NCCL frame after it."""
    found = nccl_bus_error(log.lines)
    if found is None:
        return None
    signal, frame = found
    meta = pod.metadata
    return line_finding(kb, "container-runtime", Status.FAILED, signal, f"{log.path}:{signal.line_no}",
                        verb=f"fails in GPU workload {meta.namespace}/{meta.name}",
                        line_class="error_resource_exhausted",
                        evidence=(Evidence(f"{log.path}:{frame.line_no}", frame.line),),
                        standalone="true", namespace=meta.namespace, pod=meta.name, container=log.container)


def _nccl_system_error(kb: KnowledgeBase, pod: Pod, log: LogFile) -> Finding | None:
    """NCCL's bare system error in a container that holds several GPUs
    (checks.nccl_system_error): the container's IPC resources, the runtime's, unclassified."""
    found = bare_system_error(log.lines)
    if found is None or not shares_gpus_in_container(pod):
        return None
    meta = pod.metadata
    return line_finding(kb, "container-runtime", Status.FAILED, found, f"{log.path}:{found.line_no}",
                        verb=f"fails in GPU workload {meta.namespace}/{meta.name}",
                        line_class="error_unclassified", standalone="true", namespace=meta.namespace,
                        pod=meta.name, container=log.container)


def _named_line(kb: KnowledgeBase, lines: Sequence[str],
                named_in: Callable[[str], str | None]) -> Decisive | None:
    """The job's decisive line, or the line near it or among its NCCL warnings and catalogued
    lines that names a layer where the decisive one names none."""
    found = decisive_line(lines, kb.class_of)
    if found is not None and named_in(found.line) is None:
        found = _with_reason(kb, _naming_neighbour(lines, found, named_in), found) or found
    if found is None or named_in(found.line) is None:
        found = (_nccl_warning(lines, named_in) or _catalogued_line(kb, lines, named_in)
                 or _crash_site(lines, named_in) or found)
    return found


#: One frame of a native backtrace a crash handler prints into the process's own log, with the
#: library it lies in: breakpad's ("001: libvgpu.so!cuMemGetInfo_v2+0xd2", Omniverse Kit's
#: carb.crashreporter), glibc's backtrace_symbols ("/usr/local/vgpu/libvgpu.so(cuMemGetInfo_v2
#: +0x4f2) [0x7f..]") and gdb's ("#1  0x00007f.. in cuMemGetInfo_v2 () from /usr/local/vgpu/
#: libvgpu.so").
_FRAME_LIB = lazy_compile(
    r"(?:^|[\s\]])\d{1,3}:\s+(?P<breakpad>[\w.+-]+\.so[\w.]*)!"
    r"|^\s*(?:#\s*\d{1,3}\s+)?(?P<glibc>/?[\w./+-]*\.so[\w.]*)\([^)]*\)\s*\[0x[0-9a-f]+\]"
    r"|^\s*#\d{1,3}\s+0x[0-9a-f]+\s+in\s+\S+\s*\([^)]*\)\s+from\s+(?P<gdb>\S+\.so[\w.]*)")
#: Frames below the crash site, not where it is: the C library, the threads library and the
#: loader, where a crash handler's signal trampoline (__sigaction, funlockfile) stands first.
_HANDLER_LIB = lazy_compile(r"(?:^|/)(?:libc|libpthread|ld-linux[\w-]*|libgcc_s|linux-vdso)\.so")


def _frame_library(line: str) -> str | None:
    """The library a backtrace frame line lies in, or None where the line is no frame."""
    found = _FRAME_LIB.search(line)
    return None if found is None else next(g for g in found.groups() if g)


def _crash_site(lines: Sequence[str], named_in: Callable[[str], str | None]) -> Decisive | None:
    """The first frame of a native backtrace in the job's own log, above the C library's signal
    trampoline, where it lies in a stack component's library injected into the container: a
    crash inside HAMi-core's libvgpu.so (breakpad's "001: libvgpu.so!cuMemGetInfo_v2+0xd2",
    Project-HAMi/HAMi-core#234) is the plugin's code failing, as the kernel's segfault line
    for it is (checks.kernel). A crash site in libcuda, libtorch or the job's own code names
    no layer: the job's, whatever frames lie below it. Only the first frame of each backtrace
    counts, so a stack library deeper in the chain (the caller's) is never read as the site."""
    at_site = True
    for index, raw in enumerate(lines):
        library = _frame_library(raw)
        if library is None:
            at_site = True  # a line between frames: the next frame starts a new backtrace
            continue
        if not at_site or _HANDLER_LIB.search(library):
            continue
        at_site = False
        line = raw.strip()
        if named_in(line) is not None:
            return Decisive(index + 1, line[:MAX_LINE], 2)
    return None


def _fabric_finding(kb: KnowledgeBase, pod: Pod, log: LogFile, found: Decisive | None,
                    target: str | None) -> list[Finding]:
    """What a pod that asks only for RDMA devices says of the layer its line names, where that
    is an RDMA layer (``_FABRIC_LAYERS``): one finding or none."""
    if found is None or target not in _FABRIC_LAYERS:
        return []
    meta = pod.metadata
    return [_as_text_catalogued(kb, as_catalogued(kb, line_finding(
        kb, target, Status.FAILED, found, f"{log.path}:{found.line_no}",
        verb=f"fails in RDMA workload {meta.namespace}/{meta.name}", standalone="true",
        namespace=meta.namespace, pod=meta.name, container=log.container)))]


#: HAMi-core, the vGPU interposer that HAMi's device plugin and Volcano's vGPU device plugin
#: both mount into the containers they serve and preload there (/usr/local/vgpu/libvgpu.so,
#: through the container's /etc/ld.so.preload): a job's error that names the library (the
#: loader's 'symbol lookup error: /usr/local/vgpu/libvgpu.so: undefined symbol: ...') names
#: the plugin that put it there, not the job; so does a line about its shared region, the
#: accounting file ("shrreg") the plugin mounts for it ('Fail to open shrreg
#: /tmp/cudevshr.cache: errno=21'). Its other lines (a refused allocation over the
#: container's share) are the library at work, not a failure of the plugin. The library
#: also speaks in its own name, and its error level names it as a loader line does:
#: "[HAMI-core ERROR (pid:362 thread=... context.c:114)]: cuCtxSetCurrent failed res=4"
#: (Project-HAMi/HAMi-core#63); its Msg, Warn, Info and Debug lines are its work, not a fault,
#: except one that refuses a limit the plugin handed it: the per-device limits are the env
#: CUDA_DEVICE_MEMORY_LIMIT(_<i>) and CUDA_DEVICE_SM_LIMIT the plugin sets for each container
#: (HAMi-core's README), and "[HAMI-core Warn]: invalid device memory limit
#: CUDA_DEVICE_MEMORY_LIMIT_0=0m" (Project-HAMi/HAMi-core#190: a plugin's 0m for "no limit",
#: after which the driver API saw 0 MiB) is the plugin's value refused, at whatever level.
_INTERPOSER = lazy_compile(r"/usr/local/vgpu/|\blibvgpu\.so\b|\bshrreg\b|\[HAMi-core ERROR\b"
                           r"|\[(?:HAMi-core|4pdvGPU) [^\]\n]{0,80}\]: invalid\b[^\n]{0,60}?"
                           r"\bCUDA_DEVICE_(?:MEMORY|SM)_LIMIT\w*=", re.I)
_INTERPOSER_PLUGINS = ("hami-device-plugin", "volcano-device-plugin")
#: The library relaying CUDA_ERROR_OUT_OF_MEMORY (2) for an allocation over the container's
#: memory share ("[HAMI-core ERROR (pid:7 ... allocator.c:115)]: cuMemoryAllocate failed res=2",
#: Project-HAMi/HAMi#585): the share enforced, as configured, at error level or not.
_SHARE_ENFORCED = lazy_compile(r"\bres=2\b|\bout of memory\b|\bOOM\b", re.I)
#: A byte count no device holds: 2**63 or more is an unsigned count that went below zero and
#: wrapped ("Device 0 OOM 18446744073707737660 / 24146608128", Project-HAMi/HAMi#1181; "Device 0
#: OOM 18446744073604695040 / 5368709120", Project-HAMi/HAMi-core#100; the usage underflow of
#: Project-HAMi/HAMi-core#200): the library's accounting refusing what would fit, not a share
#: enforced, while a real refusal counts bytes a device has ("OOM 3171158016 / 3145728000").
_COUNT = lazy_compile(r"\b\d{19,20}\b")
_WRAPPED_FROM = 2**63
#: A call interrupted by a signal the process got (errno 4, EINTR), as when a job's own
#: supervisor kills its workers: "[4pdvGPU ERROR (... multiprocess_memory_limit.c:455)]: Failed
#: to lock shrreg: 4" (Project-HAMi/HAMi#26, read as EINTR there). The library was stopped by
#: the job's signal, not broken; other errnos of the same lock stay its fault ("Fail to lock
#: shrreg /tmp/cudevshr.cache: errno=9" after the open failed, Project-HAMi/HAMi#1090).
_INTERRUPTED = lazy_compile(r"\bEINTR\b|(?i:\binterrupted system call\b)"
                            r"|(?:\berrno\s*[=:]\s*|(?i:\bfail\w*\b)[^:]{0,80}:\s*)4\s*$")


def _wrapped_count(line: str) -> bool:
    """Whether ``line`` counts bytes no device has: an unsigned count that wrapped below zero."""
    return any(int(m.group(0)) >= _WRAPPED_FROM for m in _COUNT.finditer(line))


def interposer_owner(ctx: NodeContext, line: str) -> str | None:
    """The vGPU plugin whose interposer ``line`` names (``_INTERPOSER``): the one of the two
    that ship it with pods on this node; None where neither or both run here, since the
    words alone do not say which."""
    if _INTERPOSER.search(line) is None or _INTERRUPTED.search(line) is not None:
        return None
    if _SHARE_ENFORCED.search(line) is not None and not _wrapped_count(line):
        return None
    here = [component for component in _INTERPOSER_PLUGINS if ctx.stack_pods(component)]
    return here[0] if len(here) == 1 else None


def _hardware_says(kb: KnowledgeBase, target: str, line: str) -> bool:
    """Whether a job's line is the GPU's own report of a catalogued hardware fault, relayed
    by CUDA (its error for a double-bit ECC error, vllm-project/vllm#5222): the GPUs are
    judged by their own facts only, and this is one, unlike a program's guess that a GPU is
    lost. Only a catalogued signature for pasted text counts, never the line's class."""
    said = message_of(line)
    if any(cause.is_problem and m.regex.search(said) for cause, m in kb.matchers(target, "text")):
        return True
    # the driver's return code for the GPU (NVML_ERROR_GPU_IS_LOST, CUDA's uncorrectable ECC):
    # the GPU's own state as the driver reports it, with the catalogued cause it names; a GPU
    # memory tester's count of errors (data/job_errors/gpu_memory_tests.toml) with its class
    cause = kb.by_code.get(job_cause(line, target) or "")
    return cause is not None and cause.component in (target, "*") and cause.is_problem


#: A launcher's report that NVIDIA's hook failed, with the hook's own words elsewhere or not at
#: all: enroot's "[ERROR] /etc/enroot/hooks.d/98-nvidia.sh exited with return code 1" (its hook
#: that runs nvidia-container-cli; pyxis relays enroot's log). The hook's own line names its
#: layer where it is in the log (the driver for "nvml error: driver not loaded"), read first;
#: without it, the hook is the toolkit's.
_NVIDIA_HOOK_EXIT = lazy_compile(r"\[ERROR\] \S*/hooks\.d/[\w.-]*nvidia[\w.-]* exited with return code \d+")


#: nvidia-container-cli failing on one GPU's entry under /proc/driver/nvidia/gpus while it
#: prepared a container ("nvidia-container-cli: mount error: stat failed:
#: /proc/driver/nvidia/gpus/0000:03:00.0: no such file or directory").
_CLI_GPU_ENTRY = lazy_compile(r"\bnvidia-container-cli: [\w ]{1,40} error: [^\n]{0,80}?"
                              r"/proc/driver/nvidia/gpus/[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]"
                              r"[^\n]{0,40}\bno such file or directory\b")


def _nested_cli_refusal(ctx: NodeContext, pod: Pod, log: LogFile, line: str) -> bool:
    """Whether ``line`` is a nested container runtime asking for a GPU its pod was not given.
    libnvidia-container mounts a fresh /proc/driver/nvidia into every GPU container and binds
    into it only the gpus/<bus id> entries of the GPUs it hands that container (its
    nvc_driver_mount's mount_procfs and nvc_device_mount's mount_procfs_gpu). A runtime inside
    the pod (Docker-in-Docker, a CI runner's daemon) that asks for the host's other GPUs fails
    on their missing entries (NVIDIA/nvidia-container-runtime#92: an inner --gpus=all in a
    container given one of the host's two GPUs). So the line in the current log of a container
    that runs, of a pod given fewer GPUs than the node has, is the pod's own request past its
    share, not the node's toolkit. A previous log, a container that is not running, a pod whose
    count or the node's is not read, or a pod holding every GPU, is still read."""
    if log.previous or "/proc/driver/nvidia/gpus/" not in line or _CLI_GPU_ENTRY.search(line) is None:
        return False
    if not any(status.name == log.container and status.state.running is not None
               for status in pod.status.container_statuses):
        return False
    given = pod_gpus(c.resources.limits for c in pod.spec.containers)
    node = len(ctx.smi_gpus)
    return given is not None and node > 0 and given < node


def _nvidia_hook(line: str) -> str | None:
    """The toolkit, where ``line`` is a launcher's report that NVIDIA's hook failed."""
    return "container-toolkit" if "hooks.d/" in line and _NVIDIA_HOOK_EXIT.search(line) else None


def _table_cause(kb: KnowledgeBase, finding: Finding, line: str) -> Finding:
    """The cause the job-error table gives the line (``data/job_errors.toml``) where it names
    the finding's component: an error code is the library's own verdict, more precise than
    the class of the line's words or a phrase a signature met (CUDA's stub library and the
    loader not finding libcuda are the same container without the driver's libraries, which
    the NVIDIA runtime's hook injects: NebiusAI/soperator#2468). A class from the table
    replaces only a class; ``_without_nvidia_runtime`` settles a pod the runtime never touched."""
    code = job_cause(line, finding.component)
    if code is None or code == finding.cause:
        return finding
    known = kb.get(code)
    classes = {cls.code for cls, _ in kb.classes}
    if code in classes and finding.cause not in classes:
        return finding  # a catalogued signature is more than a class
    rank = max(known.specificity, finding.specificity) if code not in classes else finding.specificity
    return msgspec.structs.replace(finding, cause=known.code, status=known.severity, specificity=rank)


def _catalogued_line(kb: KnowledgeBase, lines: Sequence[str],
                     named_in: Callable[[str], str | None]) -> Decisive | None:
    """The last line that names a stack component and is one of that component's catalogued
    failures in pasted text, whatever level the job gave it: Triton logs CUDA's
    cudaErrorInsufficientDriver at warning level and runs on without pinned memory or a GPU
    (bottlerocket-os/bottlerocket-kernel-kit#254); the job's level judges the job, not the
    layer under it. A job library's own words for a failing layer (``job_names``) count the
    same way: PyTorch warns "CUDA initialization: Unexpected error from cudaGetDeviceCount()
    ... Error 804: ..." and runs on without a GPU."""
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index].strip()
        target = named_in(line) if line else None
        if target is None or reports_xid(line):
            continue
        said = message_of(line)
        if job_names(line) is not None or any(cause.is_problem and m.regex.search(said)
                                              for cause, m in kb.matchers(target, "text")):
            return Decisive(index + 1, line[:MAX_LINE], 1)
    return None


def _without_nvidia_runtime(ctx: NodeContext, pod: Pod, finding: Finding,
                            lines: Sequence[str] = ()) -> Finding:
    """A driver too old for the job's CUDA, settled by the node's facts: CUDA reports the same
    insufficient driver when the container got no driver library at all, which is what a pod
    that names no RuntimeClass gets where the runtime's default is not NVIDIA's (plain runc,
    no CDI injection; NVIDIA/gpu-operator#1017). Then the runtime's default is the fault. A
    missing driver library on a Docker node whose daemon.json was not collected is read as
    ``_no_gpu_without_runtime`` reads it (``_docker_default_unread``); CUDA's insufficient
    driver there stays the driver's, as the words alone do not say no library was loaded."""
    if finding.cause not in (_TOO_OLD, _NO_LIBS):
        return finding
    settled = _image_cuda_settles(ctx, pod, finding, lines) if finding.cause == _TOO_OLD else None
    if settled is not None:
        return settled
    if finding.cause == _TOO_OLD and _runs_no_current_cuda(ctx):
        return finding  # no current CUDA runs on the node's driver: too old under any runtime
    docker_unread = finding.cause == _NO_LIBS and _docker_default_unread(ctx, pod)
    if not docker_unread and not _runs_without_nvidia_runtime(ctx, pod):
        return finding
    # Where CDI may inject without the default runtime (the ClusterPolicy's cdi.default, else
    # the runtime's own switch) the container may have the driver's libraries: CUDA's words
    # alone then do not tell a driver too old from none injected. The operator's cdi.enabled
    # alone only adds the nvidia-cdi RuntimeClass, as for a container without libraries.
    if (not docker_unread and _cdi_by_default(ctx)) or _driver_files_shown(finding, lines):
        return finding
    known = ctx.kb.get(NOT_DEFAULT_RUNTIME)
    return msgspec.structs.replace(finding, component="container-toolkit", cause=known.code,
                                   status=known.severity, specificity=max(known.specificity,
                                                                          finding.specificity))


def _image_cuda_settles(ctx: NodeContext, pod: Pod, finding: Finding,
                        lines: Sequence[str]) -> Finding | None:
    """CUDA's insufficient driver settled by the node's driver against the CUDA version the
    job's image names in its tag, else the job's own lines (a framework wheel's +cuXYZ, the
    runtime version it printed: gpunode.parse.image_cuda), where nvidia-smi answers on the
    node with no mismatch of its own. Drivers are backward compatible with every older CUDA
    (https://docs.nvidia.com/deploy/cuda-compatibility/frequently-asked-questions.html;
    the CUDA images need only a driver at their toolkit's version or newer, mounted from the
    host: https://nvidia.github.io/container-wiki/toolkit/container-images.html): a node whose
    driver's CUDA version is at or above the image's is not too old for it, and the runtime
    still reports error 35 where the container reached no driver library at all (PyTorch's
    CUDAFunctions.cpp reads error 35 with driver version 0 as no driver; NVIDIA/gpu-operator#1017,
    a pod under plain runc on a current driver). So for a pod that names no RuntimeClass,
    where neither the platform's plugin nor CDI by default put the driver in and the job's
    words do not show a driver library loaded, the runtime's default is the fault. A node
    driver older than the image's CUDA by a major release (or by any release before CUDA 11,
    which has no minor-version compatibility: docs.nvidia.com/deploy/cuda-compatibility/
    minor-version-compatibility.html) is too old whatever the runtime, and stays the driver's.
    None where the image names no CUDA, the node's CUDA is not read, or neither holds."""
    container = finding.context.get("container", "")
    image = next((c.image for c in pod.spec.containers if c.name == container), "")
    wanted = (image_cuda(image) if image else None) or stated_cuda(lines)
    smi = ctx.nvidia_smi
    node = _cuda_pair(smi.cuda_version or "") if wanted and smi is not None and _host_release(ctx) else None
    if wanted is None or node is None:
        return None
    if node < wanted and (node[0] < wanted[0] or wanted[0] < 11):
        return finding  # the driver is older than the image's CUDA: too old under any runtime
    if node < wanted or pod.spec.runtime_class_name or _platform_plugin_mounts_driver(ctx):
        return None
    if _cdi_by_default(ctx) or _driver_files_shown(finding, lines):
        return None
    known = ctx.kb.get(NOT_DEFAULT_RUNTIME)
    return msgspec.structs.replace(finding, component="container-toolkit", cause=known.code,
                                   status=known.severity, specificity=max(known.specificity,
                                                                          finding.specificity))


#: A CUDA version as nvidia-smi prints it ("12.8").
_CUDA_PAIR = lazy_compile(r"^(?P<major>\d{1,2})\.(?P<minor>\d{1,2})\b")


def _served_by_driver(finding: Finding, lines: Sequence[str]) -> bool:
    """A too-old verdict in a log whose own runtime/driver version pair shows the driver at or
    above the job's CUDA (checks.cuda_pair_words): the job library's own, not the driver's."""
    return finding.cause == _TOO_OLD and driver_serves_runtime(lines)


def _driver_older_than_compiler(ctx: NodeContext, pod: Pod, log: LogFile) -> Finding | None:
    """XLA's word that the driver's CUDA version is older than its PTX compiler's
    (checks.cuda_pair_words), where the node's own driver answers nvidia-smi with that CUDA
    version: the node's driver is older than the CUDA the job was built with. The job runs on,
    with parallel compilation off, so the driver's ``cuda_driver_too_old`` is ``degraded``
    (google-deepmind/alphafold3#272: the maintainers' fix is a host driver of the image's CUDA,
    or CUDA's forward-compatibility packages). Where the node's CUDA version is not read, or is
    another than the line's (a driver the job did not run on), nothing is said."""
    smi = ctx.nvidia_smi
    node = _cuda_pair(smi.cuda_version or "") if smi is not None and _host_release(ctx) else None
    if node is None:
        return None
    for index in range(len(log.lines) - 1, -1, -1):
        said = driver_older_than_compiler(log.lines[index])
        if said is not None and said[0] == node:
            meta = pod.metadata
            verb = f"is older than the CUDA of GPU workload {meta.namespace}/{meta.name}"
            finding = _recast(ctx, _job_line(ctx, "driver", pod, log, index, verb=verb), _TOO_OLD)
            return msgspec.structs.replace(finding, status=Status.DEGRADED)
    return None


def _runs_no_current_cuda(ctx: NodeContext) -> bool:
    """The node's own driver (its release read, no mismatch) is below the minimum of every
    CUDA major still built against (checks.cuda_floor)."""
    host = _host_release(ctx)
    return host is not None and runs_no_current_cuda(host)


def _cuda_pair(version: str) -> tuple[int, int] | None:
    """nvidia-smi's CUDA version as (major, minor); None where it printed none."""
    said = _CUDA_PAIR.match(version.strip())
    return None if said is None else (int(said["major"]), int(said["minor"]))


def _driver_files_shown(finding: Finding, lines: Sequence[str]) -> bool:
    """The job's words show that its container got some of the driver's files after all."""
    said = finding.context.get(MESSAGE, "")
    if finding.cause == _NO_LIBS:
        return SMI_NO_NVML.search(said) is not None  # nvidia-smi there was injected
    # the job loaded a driver library and read its version, in this line or earlier in its log
    return _driver_reached(said) or any(_DRIVER_VERSION_READ.search(line) for line in lines)


def _uvm_missing(ctx: NodeContext, pod: Pod, log: LogFile) -> Finding | None:
    """CUDA's unknown error at initialisation in a GPU job, or the module loader failing on the
    unified-memory module, on a node whose lsmod lists nvidia and not nvidia_uvm: the driver's
    ``nvidia_uvm_missing`` (checks.uvm_words says why)."""
    if not uvm_not_loaded(ctx.modules):
        return None
    index = init_unknown_index(log.lines)
    index = uvm_load_failed_index(log.lines) if index is None else index
    if index is None:
        return None
    meta = pod.metadata
    verb = f"fails in GPU workload {meta.namespace}/{meta.name}"
    return _recast(ctx, _job_line(ctx, "driver", pod, log, index, verb=verb), UVM_MISSING)


def _uvm_recast(ctx: NodeContext, finding: Finding) -> Finding:
    """A finding on a job's CUDA unknown error at initialisation (PyTorch's words the job-error
    table gives the driver, cuInit's CUDA_ERROR_UNKNOWN it gives the toolkit) as
    ``nvidia_uvm_missing`` where the node's lsmod lacks nvidia_uvm beside nvidia."""
    if finding.cause == UVM_MISSING or not says_init_unknown(finding.context.get(MESSAGE, "")):
        return finding
    return _recast(ctx, finding, UVM_MISSING) if uvm_not_loaded(ctx.modules) else finding


#: The job-error table's entries for CUDA's initialization error from the call that initialises
#: it (cudaErrorInitializationError, 3; cuInit's CUDA_ERROR_NOT_INITIALIZED).
_INIT_ERRORS = frozenset({"framework-cuda-init-initialization-error", "ollama-cuinit-not-initialized",
                          "cuinit-not-initialized"})


def _init_on_old_driver(ctx: NodeContext, finding: Finding) -> Finding:
    """The driver's failure on a job's CUDA initialization error as ``cuda_driver_too_old``
    where the node's own driver is below the minimum of every CUDA major still built against
    (checks.cuda_floor): no current CUDA runtime initialises there, whatever the job's build
    (a torch 1.8.1+cu111 environment on driver 440.82 printed PyTorch's "CUDA driver
    initialization failed, you might not have a CUDA gpu" until a CUDA 10.2 build was
    installed: blog.csdn.net/weixin_40264313/article/details/137650716; the compatibility
    guide's minimum drivers: docs.nvidia.com/deploy/cuda-compatibility/). On a node whose
    driver runs current CUDA, or whose release is not read, the finding stays as it is."""
    if finding.component != "driver" or finding.cause == _TOO_OLD:
        return finding
    said = job_error(finding.context.get(MESSAGE, ""))
    if said is None or said.id not in _INIT_ERRORS or not _runs_no_current_cuda(ctx):
        return finding
    return _recast(ctx, finding, _TOO_OLD)


def _no_cgroups_recast(ctx: NodeContext, finding: Finding) -> Finding:
    """A job's NVML refused its GPU on a node whose toolkit config skips the device cgroup
    (checks.no_cgroups says why): the toolkit's refusal, not the driver's."""
    if not nvml_refused(finding.context.get(MESSAGE, "")) or not skips_device_cgroup(ctx.obs.files):
        return finding
    known = ctx.kb.get(NO_CGROUPS_REFUSED)
    return msgspec.structs.replace(finding, component="container-toolkit", cause=known.code,
                                   status=Status.FAILED, specificity=max(known.specificity,
                                                                         finding.specificity))


def _on_vgpu(ctx: NodeContext) -> bool:
    """Whether the node's GPUs are vGPUs, by nvidia-smi, else GFD's product label."""
    gpus = ctx.smi_gpus
    return is_vgpu([g.product_name for g in gpus], [g.virtualization_mode for g in gpus],
                   ctx.gpu_product_label)


def _on_vgpu_slice(ctx: NodeContext) -> bool:
    """Whether the node's GPUs are vGPUs (``_on_vgpu``) or its cloud instance type holds a
    slice of one GPU (checks.vgpu_words.fractional_instance)."""
    if _on_vgpu(ctx):
        return True
    labels = ctx.node.metadata.labels if ctx.node is not None else {}
    return any(fractional_instance(labels.get(key, "")) for key in INSTANCE_TYPE_LABELS)


def _vgpu_refused(ctx: NodeContext, pod: Pod, log: LogFile) -> Finding | None:
    """CUDA's busy-or-unavailable error in a GPU job on a node whose GPUs are vGPUs: the guest
    driver refusing CUDA (an unlicensed vGPU), the driver's ``error_device``
    (checks.vgpu_words says why). On a GPU that is no vGPU nothing is said here."""
    index = unavailable_index(log.lines)
    if index is None or not _on_vgpu(ctx):
        return None
    meta = pod.metadata
    verb = f"refuses CUDA on the vGPU of GPU workload {meta.namespace}/{meta.name}"
    return _job_line(ctx, "driver", pod, log, index, verb=verb, line_class="error_device")


def _busy_refused(ctx: NodeContext, pod: Pod, log: LogFile) -> Finding | None:
    """CUDA's busy-or-unavailable error in a GPU job settled by the node's compute mode
    (checks.busy_gpus says why): the runtime's leftover process on exclusive GPUs held where
    the node hands out whole GPUs, the driver's refusal in Default mode."""
    index = unavailable_index(log.lines)
    if index is None:
        return None
    meta = pod.metadata
    owner = busy_owner(ctx.obs.cmd.get("nvidia-smi.txt", ""), ctx.obs.cmd.get("nvidia-smi-q.xml", ""),
                       _gpus_shared(ctx), several_gpus(c.resources.limits for c in pod.spec.containers))
    if owner is None:
        return None
    verb = (f"keeps the exclusive GPUs of GPU workload {meta.namespace}/{meta.name} held"
            if owner == "container-runtime" else f"refuses CUDA to GPU workload {meta.namespace}/{meta.name}")
    return _job_line(ctx, owner, pod, log, index, verb=verb, line_class="error_device")


def _collective_stalled(ctx: NodeContext, pod: Pod, log: LogFile) -> Finding | None:
    """PyTorch's NCCL watchdog timeout among the GPUs of one pod, read against the host's PCIe
    peer-to-peer path where nothing points elsewhere (checks.collective_stall says why)."""
    gpus = sum(int(value) for c in pod.spec.containers for key, value in c.resources.limits.items()
               if key == "nvidia.com/gpu" and value.isdigit())
    index = stalled_index(log.lines, gpus, ctx.obs.cmd.get("nvidia-smi-topo-m.txt", ""))
    if index is None:
        return None
    meta = pod.metadata
    verb = f"stalls the collectives among the GPUs of workload {meta.namespace}/{meta.name}"
    # the likeliest layer, not a settled one: a rank of the job that hung stops its peers alike
    return _job_line(ctx, "kernel", pod, log, index, verb=verb, status=Status.DEGRADED)


def _memory_held_elsewhere(ctx: NodeContext, pod: Pod, log: LogFile) -> Finding | None:
    """PyTorch's out of memory on a whole GPU most of whose memory another process holds: one
    left behind on the node (checks.foreign_memory says why). Silent where GPUs are shared."""
    index = foreign_memory_index(log.lines)
    if index is None or _gpus_shared(ctx):
        return None
    meta = pod.metadata
    verb = f"leaves the GPU memory of workload {meta.namespace}/{meta.name} held by another process"
    return _job_line(ctx, "container-runtime", pod, log, index, verb=verb,
                     line_class="error_resource_exhausted")


def _thread_exclusive_refused(ctx: NodeContext, pod: Pod, log: LogFile) -> Finding | None:
    """CUDA's 216 (a context or device already in use by another thread) in a GPU job on a
    node whose GPUs are all in Exclusive_Thread mode: the driver's setting refuses the job's
    threads (checks.busy_gpus says why). In any other mode nothing is said here."""
    index = thread_bound_index(log.lines)
    if index is None or not thread_exclusive(ctx.obs.cmd.get("nvidia-smi.txt", ""),
                                             ctx.obs.cmd.get("nvidia-smi-q.xml", "")):
        return None
    meta = pod.metadata
    verb = f"binds the exclusive-thread GPUs of GPU workload {meta.namespace}/{meta.name}"
    return _job_line(ctx, "driver", pod, log, index, verb=verb, line_class="error_device")


def _exclusive_context_refused(ctx: NodeContext, pod: Pod, log: LogFile) -> Finding | None:
    """A GPU job's word that no context could be made on its GPU (OpenMM's "No compatible CUDA
    device is available", LAMMPS's "Accelerator sharing is not currently supported") on a node
    whose GPUs are all in an exclusive compute mode: the mode, set through the driver
    (nvidia-smi -c), admits one context per GPU and refuses the job's next one, the driver's
    ``error_device`` (checks.busy_gpus says why). A job given several GPUs, whose ranks may all
    have opened the first one, and a node in any other mode, say nothing here."""
    index = context_refused_index(log.lines)
    if index is None or several_gpus(c.resources.limits for c in pod.spec.containers):
        return None
    if not all_exclusive(ctx.obs.cmd.get("nvidia-smi.txt", ""), ctx.obs.cmd.get("nvidia-smi-q.xml", "")):
        return None
    meta = pod.metadata
    verb = f"admits one context per exclusive GPU to GPU workload {meta.namespace}/{meta.name}"
    return _job_line(ctx, "driver", pod, log, index, verb=verb, line_class="error_device")


def _gpus_shared(ctx: NodeContext) -> bool:
    """Whether another pod may hold the same GPU: the device plugin shares GPUs here
    (time-slicing, MPS) or a running pod asks for a sharing scheduler's GPU slice. With
    whole GPUs, the device plugin gives each GPU to one pod only."""
    resources = ctx.gpu_resources
    if resources is not None and resources.sharing != "none":
        return True
    return any(not key.startswith("nvidia.com/") and ("gpu" in key or "vcuda" in key)
               for p in ctx.facts.workloads_by_node.get(ctx.name, []) if p.status.phase == "Running"
               for c in p.spec.containers for key in c.resources.limits)


#: NVML's own words, after its "Driver/library version mismatch", for the library the process
#: loaded (nvidia-smi since the 5xx releases: "NVML library version: 565.57").
_NVML_LIBRARY = lazy_compile(r"\bNVML library version: (?P<version>\d+(?:\.\d+)+)")
#: The driver's cause for a kernel module and user-space libraries at two releases.
_LIBRARY_MISMATCH = "driver_library_mismatch"
#: The toolkit's cause for an image that carries its own copies of the driver's files.
_IMAGE_SHIPS = "container_image_ships_driver_files"


def _release(version: str) -> tuple[int, ...]:
    """A driver version's numbers (565.57 -> (565, 57)), compared release by release."""
    return tuple(int(part) for part in version.split("."))


def _image_nvml(ctx: NodeContext, finding: Finding, lines: Sequence[str]) -> Finding:
    """A job's NVML mismatch settled by the node's facts: where the host's own nvidia-smi
    answers (its module and libraries agree) and the library the job loaded is a newer
    release than that driver, the library cannot be the host's that the NVIDIA runtime
    mounts: the image ships its own (k4yt3x/video2x#1226: 565.57 in the image on a 535
    host; NVIDIA/libnvidia-container#266: the image's 525.105.17 on a 470 host). An older
    library may be the host's from before a driver upgrade in a container started then
    (NVIDIA/nvidia-docker#737), and a host that fails the same way is the driver's own
    mismatch: both stay the driver's."""
    if finding.component != "driver" or finding.cause != _LIBRARY_MISMATCH:
        return finding
    host = _host_release(ctx)
    if host is None:
        return finding  # no host driver read, or the host's own mismatch
    said = next((m["version"] for line in lines if (m := _NVML_LIBRARY.search(line))), None)
    if said is None or _release(said) <= host[:len(_release(said))]:
        return finding
    return _recast(ctx, finding, _IMAGE_SHIPS)


def _host_release(ctx: NodeContext) -> tuple[int, ...] | None:
    """The release of the node's own driver (checks.versions' reader) where the node's
    nvidia-smi reports no mismatch of its own, so its libraries agree with its module; None
    where no driver version is read or the host itself is mismatched."""
    if "version mismatch" in ctx.obs.cmd.get("nvidia-smi.txt", ""):
        return None
    head = _RELEASE_HEAD.match(HOST_VERSIONS["driver"](ctx) or "")
    return None if head is None else _release(head.group())


def _recast(ctx: NodeContext, finding: Finding, code: str) -> Finding:
    """``finding`` as the catalogued cause ``code`` the node's facts settled it to."""
    known = ctx.kb.get(code)
    return msgspec.structs.replace(finding, component=known.component, cause=known.code,
                                   status=known.severity,
                                   specificity=max(known.specificity, finding.specificity))


#: CUDA's own diagnostics (TensorFlow's and XLA's cuda_diagnostics.cc) comparing the loaded
#: kernel module's release with the libcuda ("DSO") the process loaded.
_KERNEL_DSO = lazy_compile(r"\bkernel version (?P<kernel>\d+(?:\.\d+)+) does not match DSO version "
                           r"(?P<dso>\d+(?:\.\d+)+)")
#: The leading release numbers of a driver version as its readers give it ("535.183.06",
#: the driver container's tag "570.133.20-ubuntu22.04").
_RELEASE_HEAD = lazy_compile(r"^\d+(?:\.\d+)+")
#: CUDA's driver entry point whose failure the diagnostics explain.
_CUINIT = lazy_compile(r"\bcuInit\b")


def _image_libcuda(ctx: NodeContext, finding: Finding, lines: Sequence[str]) -> Finding:
    """A job's kernel/DSO mismatch settled by the node's facts: where the node's own driver
    answers at the kernel module's release (checks.versions' reader: nvidia-smi, the probe's
    NVML, GFD's label, the driver container's tag) and nvidia-smi reports no mismatch there,
    the node's libraries agree with its module, so a newer libcuda in the job is not the
    node's: it is the image's CUDA forward-compatibility library (cuda-compat), loaded because
    the node's driver is older than the image's CUDA, on a GPU or branch where forward
    compatibility does not run (NVIDIA/nvidia-docker#1704: nvidia/cuda:11.7.1 on a 470 K80
    host, kernel 470 vs DSO 515; NVIDIA-NeMo/labs-molt#44: the compat libcuda for hosts below
    the image's CUDA; https://docs.nvidia.com/deploy/cuda-compatibility/). A host whose own
    nvidia-smi says "Driver/library version mismatch" (tensorflow/tensorflow#4349), an older
    DSO, or no driver version read stay the driver's library mismatch. The diagnostics run
    because cuInit failed and say why: a job's failed cuInit line (whose CUDA error, unknown or
    no device, several layers share) is read by the verdict they print after it."""
    message = finding.context.get(MESSAGE, "")
    explained = _CUINIT.search(message) is not None
    if not explained and (finding.component != "driver" or finding.cause != _LIBRARY_MISMATCH):
        return finding
    said = _KERNEL_DSO.search(message) or next(
        (m for line in (lines if explained else ()) if (m := _KERNEL_DSO.search(line))), None)
    if said is None:
        return _no_kernel_module(ctx, finding, lines) if explained else finding
    host = _host_release(ctx)
    kernel, dso = _release(said["kernel"]), _release(said["dso"])
    newer_in_job = host is not None and host[:len(kernel)] == kernel and dso > kernel
    return _recast(ctx, finding, _TOO_OLD if newer_in_job else _LIBRARY_MISMATCH)


#: The diagnostics' verdict where no NVIDIA kernel module answers: the module's procfs file,
#: which every container on a host with the module loaded sees (the host's /proc/driver, or the
#: NVIDIA runtime's bind mount of it), is absent.
_NO_KERNEL_MODULE = lazy_compile(r"\bkernel driver does not appear to be running on this host\b")
#: CUDA's stub library answering cuInit (CUDA_ERROR_STUB_LIBRARY, 34): the container got no
#: driver library at all, which is the injection's, not the module's.
_STUB = lazy_compile(r"\bCUDA_ERROR_STUB_LIBRARY\b|\bUNKNOWN ERROR \(34\)|\bcudaErrorStubLibrary\b"
                     # or the loader finding no libcuda at all
                     r"|\blibcuda\.so(?:\.1)?: cannot open shared object file|unable to find libcuda\.so")
#: The driver's cause for a node where no NVIDIA kernel module is loaded.
_NOT_LOADED = "driver_not_loaded"


def _no_kernel_module(ctx: NodeContext, finding: Finding, lines: Sequence[str]) -> Finding:
    """A job's failed cuInit that the CUDA diagnostics explain with no kernel module running
    (TensorFlow's "kernel driver does not appear to be running on this host: /proc/driver/
    nvidia/version does not exist"): the NVIDIA module was not loaded where the job ran (the
    diagnostics print it where that file cannot be read: openxla/xla
    xla/stream_executor/cuda/cuda_diagnostics.cc; tensorflow/tensorflow#1158: the same
    diagnostics read the module's version from that file). Where the container also lacks the
    driver's library (the loader's "cannot open shared object file", CUDA's stub library:
    tensorflow/tensorflow#57764, a pod on error 34) the injection is in question first, and
    nothing is said here."""
    if not any(_NO_KERNEL_MODULE.search(line) for line in lines):
        return finding
    if any(_STUB.search(line) for line in lines):
        return finding
    return _recast(ctx, finding, _NOT_LOADED)


#: A program's own statement of the oldest driver release it runs on: FFmpeg's NVENC encoders
#: ("The minimum required Nvidia driver for nvenc is 418.30 or newer", libavcodec/nvenc.c, with
#: "(unknown)" where its headers name none; livepeer/go-livepeer#1106, AlphaAtlas/
#: VapourSynthColab#4) and the applications that relay it in their words ("Minimum required
#: Nvidia driver is 570.0 or newer").
_MIN_DRIVER = lazy_compile(r"(?i:\bminimum required nvidia driver (?:for [\w-]+ )?is )"
                           r"(?P<version>\d+(?:\.\d+)*) or newer\b")


def _below_required_driver(ctx: NodeContext, pod: Pod, log: LogFile) -> Finding | None:
    """A GPU job that names the oldest driver release it needs, on a node whose own driver
    (checks.versions' reader, its nvidia-smi reporting no mismatch) is older: the driver too
    old for the job's image, settled by the node's facts. FFmpeg prints the requirement also
    where libnvidia-encode did not load at all, so the words alone are not read; a node whose
    driver meets the requirement is not blamed, and one whose release is not read says nothing."""
    lines = log.lines
    for index in range(len(lines) - 1, -1, -1):
        said = _MIN_DRIVER.search(lines[index]) if "minimum required" in lines[index].lower() else None
        if said is None:
            continue
        host = _host_release(ctx)  # read only for a job that states a requirement
        needed = _release(said["version"])
        if host is None or host[:len(needed)] >= needed:
            return None
        return _too_old_for(ctx, pod, log, index)
    return None


def _unsettled(ctx: NodeContext, pod: Pod, log: LogFile) -> Finding | None:
    """A shared error in a GPU job that no fact of the node settled (every reading before this
    one in ``workload_log_findings`` passed), as its most likely layer's, ``degraded``, naming
    the fact that would settle it (checks.unsettled_words says which errors and why). An
    invalid kernel image on a node whose driver serves the CUDA the job's image or lines name
    is the program's own binary, and says nothing."""
    said = unsettled_index(log.lines)
    if said is None:
        return None
    index, reading = said
    if (reading.needs_newer_cuda and _serves_job_cuda(ctx, pod, log)) or (
            reading.whole_gpus_only and _gpus_shared(ctx)) or (
            reading.device_access_settles and device_refused(log.lines)):
        return None
    container = next((c for c in pod.spec.containers if c.name == log.container), None)
    if reading.capability and container is not None and nvidia_env(container).lacks(reading.capability):
        return None  # the pod's own request left those files out
    if reading.needs_resource and not _holds(container, reading.needs_resource):
        return None  # the job was given no such device: its library is not the one at fault
    meta = pod.metadata
    verb = f"fails in GPU workload {meta.namespace}/{meta.name}"
    found = Decisive(index + 1, log.lines[index].strip()[:MAX_LINE], 1)
    known = ctx.kb.get(reading.cause)
    return line_finding(ctx.kb, reading.component, Status.DEGRADED, found, f"{log.path}:{index + 1}",
                        verb=verb, line_class=known.code, standalone="true",
                        specificity=known.specificity, namespace=meta.namespace, pod=meta.name,
                        container=log.container, settled_by=reading.settled_by)


def _holds(container: Container | None, prefix: str) -> bool:
    """Whether the container asks for some of a device resource whose name starts with
    ``prefix`` (its limits, else its requests)."""
    if container is None:
        return False
    asked = {**container.resources.requests, **container.resources.limits}
    return any(name.startswith(prefix) and value.strip() not in ("", "0") for name, value in asked.items())


def _serves_job_cuda(ctx: NodeContext, pod: Pod, log: LogFile) -> bool:
    """The node's driver (nvidia-smi's CUDA version, its release read with no mismatch) is at
    or above the CUDA version the job's image names in its tag, else its own lines."""
    image = next((c.image for c in pod.spec.containers if c.name == log.container), "")
    wanted = (image_cuda(image) if image else None) or stated_cuda(log.lines)
    smi = ctx.nvidia_smi
    node = _cuda_pair(smi.cuda_version or "") if wanted and smi is not None and _host_release(ctx) else None
    return wanted is not None and node is not None and node >= wanted


def _job_line(ctx: NodeContext, component: str, pod: Pod, log: LogFile, index: int, *,
              verb: str, line_class: str | None = None, status: Status = Status.FAILED) -> Finding:
    """A failure of ``component`` quoting a GPU job's line at ``index`` (0-based) as its
    decisive line: the caller's own test of the node's facts decided it (``degraded`` where it
    names the likeliest layer only)."""
    meta = pod.metadata
    found = Decisive(index + 1, log.lines[index].strip()[:MAX_LINE], 1)
    return line_finding(ctx.kb, component, status, found, f"{log.path}:{index + 1}",
                        verb=verb, line_class=line_class, standalone="true",
                        namespace=meta.namespace, pod=meta.name, container=log.container)


def _too_old_for(ctx: NodeContext, pod: Pod, log: LogFile, index: int) -> Finding:
    """The driver too old for a GPU job, decided by the job's line at ``index`` (0-based) and
    the node's release by the caller's own test."""
    meta = pod.metadata
    verb = f"is too old for GPU workload {meta.namespace}/{meta.name}"
    return _recast(ctx, _job_line(ctx, "driver", pod, log, index, verb=verb), _TOO_OLD)


#: A GPU job's own words that CUDA is not usable to it, naming no layer: PyTorch refusing to
#: load a CUDA tensor ("Attempting to deserialize object on a CUDA device but
#: torch.cuda.is_available() is False", torch/serialization.py validate_cuda_device) and
#: Folding@home's client disabling its GPU slot ("No CUDA or OpenCL 1.2+ support detected for GPU
#: slot 01", linuxserver/docker-foldingathome#7), and cuBLAS's handle failing to initialise
#: (CUBLAS_STATUS_NOT_INITIALIZED, 1: "an error in the CUDA Runtime API called by the cuBLAS
#: routine", the cuBLAS docs' cublasStatus_t), by name or as a program prints its number ("CuBLAS
#: error at <file>:<line>: 1", nanoporetech/pyguppyclient#6: Guppy 4.4 on a CUDA 10.2 driver). A
#: CPU-only build or a container without the driver's library says the same, so the words alone
#: are never read.
_CUDA_UNUSABLE = lazy_compile(r"\btorch\.cuda\.is_available\(\) is False\b"
                              r"|\bNo CUDA or OpenCL [\d.]+\+? support detected\b"
                              r"|\bCUBLAS_STATUS_NOT_INITIALIZED\b"
                              r"|(?i:\bcublas error\b)[^\n]{0,200}?:\s*1\s*$")
_CUDA_UNUSABLE_LITERALS = ("is_available() is false", "no cuda or opencl", "cublas")


def _no_cuda_on_old_driver(ctx: NodeContext, pod: Pod, log: LogFile) -> Finding | None:
    """A GPU job that finds CUDA unusable (``_CUDA_UNUSABLE``) on a node whose own driver is
    below the minimum of every CUDA major still built against (checks.cuda_floor): no current
    CUDA runtime runs there under any runtime, so the driver is too old for the job's image
    (linuxserver/docker-foldingathome#7: an image update on driver 455; RVC-Boss/GPT-SoVITS#1809:
    a CUDA 11.8 image on driver 470, fixed by a driver update). A node whose driver runs current
    CUDA, or whose release is not read (a Jetson's L4T release is none), says nothing here."""
    lines = log.lines
    for index in range(len(lines) - 1, -1, -1):
        lower = lines[index].lower()
        if not any(lit in lower for lit in _CUDA_UNUSABLE_LITERALS):
            continue
        if _CUDA_UNUSABLE.search(lines[index]) is None:
            continue
        if not _runs_no_current_cuda(ctx):
            return None
        return _too_old_for(ctx, pod, log, index)
    return None


#: CUDA's not-supported error as jobs print it: cudaGetErrorString's "operation not supported"
#: after CUDA's own error word (PyTorch's "CUDA error: ...", Transformer Engine's "CUDA Error:
#: ..."), and the enumerators (cudaErrorNotSupported, CUDA_ERROR_NOT_SUPPORTED: 801).
_CUDA_NOT_SUPPORTED = lazy_compile(
    r"\bCUDA (?:[Ee]rror|ERROR|failure)\b[^\n]{0,120}?\boperation not supported\b"
    r"|\bcudaErrorNotSupported\b|\bCUDA_ERROR_NOT_SUPPORTED\b")


def _not_supported_on_first_branch(ctx: NodeContext, pod: Pod, log: LogFile) -> Finding | None:
    """CUDA's not-supported error in a GPU job on a node whose own driver is of the first
    branch of its CUDA major (checks.cuda_floor.on_major_first_branch): the job's runtime, of a
    later minor release, runs there with the limited feature set of minor-version compatibility
    and the feature it asked for needs a newer driver (pytorch/pytorch#135126: a CUDA 12.4
    build's large kernel parameters on driver 525; NVIDIA/TransformerEngine#991: comm+GEMM
    overlap's CUDA multicast on 525, which its maintainers say needs 535). The same error on a
    later branch is the GPU's, the platform's or the job's, and is not read here; so is a node
    whose release is not read, and a vGPU guest (nvidia-smi's or GFD's vGPU profile, or a cloud
    size that holds a slice of one GPU): a vGPU profile offers fewer CUDA features than the
    board whatever the release, the guest's answer by design (AcademySoftwareFoundation/
    openvdb#2255: cudaMallocAsync's 801 on an EC2 g6f slice of an L4 on driver 580, the first
    branch of CUDA 13, whose device attribute reports no memory pools; AWS answered that
    fractional time-sliced slices expose none, and the application allocates synchronously)."""
    lines = log.lines
    for index in range(len(lines) - 1, -1, -1):
        if "upported" not in lines[index] or _CUDA_NOT_SUPPORTED.search(lines[index]) is None:
            continue
        host = _host_release(ctx)
        if host is None or not on_major_first_branch(host) or _on_vgpu_slice(ctx):
            return None
        return _too_old_for(ctx, pod, log, index)
    return None


#: The driver's cause CUDA's insufficient-driver error names (checks.workload_logs settles it).
_TOO_OLD = "cuda_driver_too_old"
#: The toolkit's cause for a container it started without the driver's libraries.
_NO_LIBS = "container_cli_no_driver_libs"
#: A too-old message that quotes the version of the driver it loaded (PyTorch's "The NVIDIA
#: driver on your system is too old (found version 12040)"): only a container that got the
#: driver's library can read its version, so the runtime did serve it (defilantech/LLMKube#1424).
#: CUDA's 804 (cudaErrorCompatNotSupportedOnDevice) is read by ``_driver_reached``.
_DRIVER_VERSION_FOUND = lazy_compile(
    r"\bfound version \d+"
    # MATLAB's verdict after it loaded the driver's library and read its CUDA version
    r"|\bCUDA driver was found, but it is too old\b|\bCUDA driver on your system supports CUDA version\b"
    # Julia's GPU stack after cuDriverGetVersion (CUDAnative's "your driver (which supports up
    # to 9.0)", CUDA.jl's "CUDA driver 8.0.0 is not compatible with any supported CUDA toolkit")
    r"|\byour driver \(which supports up to \d|\bCUDA driver \d+(?:\.\d+)* is not compatible with any\b"
    # the NGC entrypoint's banner, printed after it read the driver's version in the container
    r"|\bThis container was built for NVIDIA Driver Release\b"
    # the driver's JIT refusing PTX from a newer compiler: only a loaded libcuda compiles PTX.
    # Its enumerators as jobs print them, whole ("Error loading CUDA module:
    # CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222)", quantaosun/Dock-MD-FEP#2; "code=222(
    # cudaErrorUnsupportedPtxVersion )", Jittor/jittor#194): no word boundary inside them
    r"|\bPTX was compiled with an unsupported toolchain\b"
    r"|\b(?:CUDA_ERROR_)?UNSUPPORTED_PTX_VERSION\b|\b(?:cudaError)?UnsupportedPtxVersion\b"
    # dlsym finding no NVML or CUDA driver API function in the driver's loaded library
    # (data/job_errors/driver_libraries.toml driver-library-lacks-entry-point): it was loaded
    r"|\blib(?:cuda|nvidia-ml)\.so(?:\.\d+)*:\s*undefined symbol:\s*(?:cu|nvml)[A-Z]"
    # FFmpeg's NVENC encoder, after libnvidia-encode told it the newest API the driver offers
    r"|\bDriver does not support the required nvenc API version\b"
    # the Video Codec SDK's NvEncoder (VPF, OBS) after the same query to libnvidia-encode
    r"|\bDriver Version does not support this NvEncodeAPI version\b"
    # CUDA's error 36 (cudaErrorCallRequiresNewerDriver): the runtime found a driver library
    # whose version passed its own minimum but lacks the call. Without any libcuda the runtime
    # stops earlier, at error 35, which is where PyTorch reads "Found no NVIDIA driver" (its
    # c10/cuda/CUDAFunctions.cpp: cudaErrorInsufficientDriver with cudaDriverGetVersion at 0,
    # "If no driver is installed, then 0 is returned", the runtime API's version management)
    r"|\bAPI call is not supported in the installed CUDA driver\b|\bAPI call requires a newer CUDA driver\b"
    r"|\bcudaErrorCallRequiresNewerDriver\b|\bCUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER\b")


#: CUDA's enumerator for forward compatibility refused on the board (804).
_COMPAT_REFUSED = "cudaErrorCompatNotSupportedOnDevice"


def _driver_reached(message: str) -> bool:
    """A too-old message said only by a container that got the driver's library. CUDA's 804
    (cudaErrorCompatNotSupportedOnDevice), in any form the job-error table reads (its name, its
    text, "Error 804", LAMMPS' "Cuda driver error 804 in call"), is said once the image's
    forward-compatibility libcuda reached the kernel driver and found it older than the job's
    CUDA on a board that cannot bridge it (the runtime API's cudaError_t; the CUDA
    Compatibility guide: forward compatibility on data-centre GPUs only), so the runtime did
    serve the GPU and its device nodes."""
    if _DRIVER_VERSION_FOUND.search(message):
        return True
    entry = job_error(message)
    return entry is not None and _COMPAT_REFUSED in entry.names


#: A job's own line quoting the CUDA version it read from the driver's library (NCCL's "NCCL INFO
#: cudaDriverVersion 11000", from cuDriverGetVersion, NVIDIA/nccl#955): only a container that got
#: libcuda prints it, so a too-old error later in the same log is the driver's, not a runtime
#: that left the library out.
_DRIVER_VERSION_READ = lazy_compile(
    r"\bcudaDriverVersion \d{4,5}\b"
    # TensorFlow listing the GPUs it enumerated through the driver API (gpu_device.cc: "Found
    # device 0 with properties", "Adding visible gpu devices: 0"): cuInit and cuDeviceGet ran in
    # libcuda, so the container has the driver's library and its too-old error is the driver's
    r"|\bFound device \d+ with properties\b|\bAdding visible gpu devices: \d"
    # the driver's CUDA version a job printed beside its runtime's (checks.cuda_pair_words):
    # PaddlePaddle's "Driver API Version: 10.1", deviceQuery's "CUDA Driver Version / Runtime
    # Version 10.1 / 10.2"; a driver that answered 0 is none
    r"|\bDriver API Version: [1-9]|\bCUDA Driver Version / Runtime Version\s+[1-9]")

#: A GPU job's own words for a container that got neither the driver's user space nor the GPU
#: devices, as the libraries and frameworks print them whatever the job is: the loader not
#: finding libcuda/libnvidia-ml (TensorFlow's "Could not load dynamic library 'libcuda.so.1';
#: dlerror: libcuda.so.1: cannot open shared object file"), PyTorch's "Found no NVIDIA driver
#: on your system", CUDA's cudaErrorNoDevice / CUDA_ERROR_NO_DEVICE ("no CUDA-capable device
#: is detected"), NVML's library not found, a shell without nvidia-smi. The NVIDIA runtime (or
#: CDI) is what puts these into a container, so in a pod that asked for GPUs they say the
#: container started without it.
_NO_GPU_IN_CONTAINER = lazy_compile(
    # (the unversioned libnvidia-ml.so is no name a runtime delivers: checks.unversioned_library)
    r"\b(?:libcuda\.so(?:\.1)?|libnvidia-ml\.so\.1): cannot open shared object file"
    r"|Found no NVIDIA driver on your system"
    r"|\bCUDA_ERROR_NO_DEVICE\b|\bcudaErrorNoDevice\b|no CUDA-capable device is detected"
    r"|Failed to initialize NVML: (?:could not load NVML library|ERROR_LIBRARY_NOT_FOUND)"
    r"|\bnvidia-smi: (?:command )?not found"
    # the CUDA images' entrypoint banner (entrypoint.d/50-gpu-driver-check.sh), printed where
    # neither the ld cache nor LD_LIBRARY_PATH holds libcuda.so.1 or no /dev/nvidiactl exists
    # (NVIDIA/free-threaded-python docker/entrypoint.d/50-gpu-driver-check.sh; Triton's own
    # check, asus-ocis-asus/cvat_triton_server check_env.sh)
    r"|\bThe NVIDIA Driver was not detected\b"
    # nvidia-smi's whole answer when it sees no GPU
    r"|(?:^|\s)No devices were found\s*$"
    # a framework's own "found no GPU" in its words: "No CUDA GPUs are available" (PyTorch),
    # "No platform detected" (vLLM's platform probe); a bare "device" only where CUDA or NVIDIA
    # says whose, since other libraries find no device of their own kind (NCCL's "NET/IB : No
    # device found." is about RDMA NICs, and an INFO line); not a warning's "or no GPUs will be
    # available" (Apptainer's --nvccli with --contain and no NVIDIA_VISIBLE_DEVICES)
    r"|(?i:\bno (?:(?:CUDA |NVIDIA )?(?:GPUs?|platform|accelerators?)|(?:CUDA|NVIDIA) devices?)\b"
    r"(?! will\b)(?: \w+){0,2}? (?:detected|found|available)\b)"
    # the frameworks' numbers for CUDA's no-device answer (``FRAMEWORK_NO_DEVICE``). Not vLLM's
    # "Failed to infer device type", raised also where the image's pynvml package is wrong
    # (ai-dynamo/dynamo#391: fixed by the container's Python packages)
    r"|" + FRAMEWORK_NO_DEVICE)
#: Lowercase literals one of which every line ``_NO_GPU_IN_CONTAINER`` matches holds: a GPU
#: job's log is read line by line, and nearly none of its lines says any of this.
_NO_GPU_LITERALS = ("shared object", "no nvidia", "no cuda", "no_device", "nodevice", "initialize nvml",
                    "nvidia-smi:", "no devices", "no gpu", "no platform", "no accelerator",
                    "driver was not detected", "failure with error",
                    "init failure: 100")


def says_no_gpu(line: str) -> bool:
    """A GPU job's words for a container with no driver library or GPU (``_NO_GPU_IN_CONTAINER``),
    behind a literal test so the regex runs only on the rare line that may hold them."""
    lower = line.lower()
    return any(lit in lower for lit in _NO_GPU_LITERALS) and _NO_GPU_IN_CONTAINER.search(line) is not None


#: A GPU job's words for a driver that answered and counted no device it may use: PyTorch's "No
#: CUDA GPUs are available" (c10/cuda/CUDAFunctions.cpp raises it where cudaGetDeviceCount gave 0
#: or cudaErrorNoDevice; without a driver library it raises "Found no NVIDIA driver" instead),
#: CUDA's cudaErrorNoDevice ("no CUDA-capable devices were detected by the installed CUDA
#: driver"), nvidia-smi's "No devices were found" (NVML initialised). A process whose own
#: CUDA_VISIBLE_DEVICES is empty gets the same answer (a Ray task or actor that asked for no GPU,
#: ray-project/ray#51154). A container started under plain runc has no driver library to answer,
#: so these say nothing of the runtime's default.
_DRIVER_ANSWERED = lazy_compile(
    r"\bNo CUDA GPUs are available\b|(?:^|\s)No devices were found\s*$"
    r"|\bCUDA_ERROR_NO_DEVICE\b|\bcudaErrorNoDevice\b|no CUDA-capable device is detected|"
    + FRAMEWORK_NO_DEVICE)


def _on_old_wsl_kernel(ctx: NodeContext, finding: Finding) -> Finding:
    """``finding`` moved to the kernel, with its line's class, where its words say the job
    found no driver and the node runs a WSL2 kernel too old to serve CUDA (checks.wsl_kernel):
    the Windows host's driver never reached the VM."""
    node = ctx.node
    line = finding.context.get(MESSAGE, "")
    kernel = node.status.node_info.kernel_version if node is not None else ""
    if not _says_no_driver(line) or not too_old_for_gpu(kernel or ""):
        return finding
    known = ctx.kb.get(ctx.kb.class_of(line) or _NOT_FOUND)
    return msgspec.structs.replace(finding, component="kernel", cause=known.code, status=Status.FAILED,
                                   specificity=max(known.specificity, finding.specificity))


#: The class of a line that says something asked for is not there.
_NOT_FOUND = "error_not_found"


def _says_no_driver(line: str) -> bool:
    """``says_no_gpu`` where the words do not say that a driver answered (``_DRIVER_ANSWERED``),
    or PyTorch's own word that CUDA is not available to it (``_TORCH_NO_CUDA``)."""
    return (says_no_gpu(line) and _DRIVER_ANSWERED.search(line) is None) or (
        "no cuda runtime" in line.lower() and _TORCH_NO_CUDA.search(line) is not None)


#: PyTorch's cpp_extension where torch.cuda.is_available() is false with a CUDA toolkit in the
#: image ("No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'", torch/utils/
#: cpp_extension.py _find_cuda_home): the process reached no usable GPU, for want of the
#: driver's library or of a device, or with a driver too old. Printed also where no GPU was
#: meant (an image build, a CPU job), and under NVIDIA's runtime it does not say which of
#: these, so it is read only for a GPU pod started under plain runc, where no driver library
#: reached the container (``_no_gpu_without_runtime``), never as an injection left out.
_TORCH_NO_CUDA = lazy_compile(r"\bNo CUDA runtime is found\b")


def _runs_without_nvidia_runtime(ctx: NodeContext, pod: Pod) -> bool:
    """The pod names no RuntimeClass and the node's runtime has NVIDIA's configured but not
    as its default: the pod's containers start under plain runc. Where the platform's own
    device plugin serves the node's GPUs (``_platform_plugin_mounts_driver``) plain runc gets
    the driver all the same, so there a job's words about the driver are the driver's."""
    if pod.spec.runtime_class_name or _platform_plugin_mounts_driver(ctx):
        return False
    setup = ctx.runtime_setup
    return setup is not None and bool(setup.nvidia) and not setup.default_is_nvidia


def _docker_default_unread(ctx: NodeContext, pod: Pod) -> bool:
    """A Docker node whose daemon.json was not collected, a pod that names no RuntimeClass,
    and the node's own driver answering (its release read, no mismatch). The kubelet's Docker
    shim runs every pod under the daemon's default runtime and refuses any other handler
    (dockershim's RunPodSandbox: "RuntimeHandler %q not supported"; cri-dockerd kept it), and
    passes no CDI devices, so NVIDIA's runtime reaches a pod's container only as Docker's
    default (the device plugin's prerequisite, "default-runtime": "nvidia" in daemon.json).
    Had it run, its hook would have put the driver's libraries in or failed the start; a
    running GPU container without them was started by another default."""
    if ctx.runtime_kind != "docker" or pod.spec.runtime_class_name or _platform_plugin_mounts_driver(ctx):
        return False
    return ctx.runtime_setup is None and ctx.runtime_setup_error is None and _host_release(ctx) is not None


def _devices_lost(ctx: NodeContext, pod: Pod, log: LogFile) -> Finding | None:
    """A running GPU container under NVIDIA's runtime whose CUDA finds no device: its GPUs were
    taken away after the start (checks.devices_lost), the toolkit's ``nvml_device_access_lost``."""
    found = lost_device_line(pod, log, gets_runtime=_gets_nvidia_runtime(ctx, pod))
    if found is None:
        return None
    known = ctx.kb.get(LOST)
    meta = pod.metadata
    finding = line_finding(ctx.kb, known.component, known.severity, found, f"{log.path}:{found.line_no}",
                           verb=f"lost its GPUs in running GPU workload {meta.namespace}/{meta.name}",
                           standalone="true", namespace=meta.namespace, pod=meta.name,
                           container=log.container)
    return msgspec.structs.replace(finding, cause=known.code, specificity=known.specificity)


def _gets_nvidia_runtime(ctx: NodeContext, pod: Pod) -> bool:
    """The pod's containers start under NVIDIA's runtime as far as the node's facts tell: it
    names a RuntimeClass, NVIDIA's runtime is the default, or the runtime's setup was not
    collected (a GPU pod that runs is then read as the usual case, served by it). A setup
    that shows NVIDIA's runtime absent or not the default, with no RuntimeClass, is plain runc."""
    setup = ctx.runtime_setup
    if setup is None or pod.spec.runtime_class_name:
        return True
    return bool(setup.nvidia) and setup.default_is_nvidia


def _platform_plugin_mounts_driver(ctx: NodeContext) -> bool:
    """Whether the platform's own device plugin serves this node's GPUs and mounts the driver's
    files into each container it gives one, whatever the runtime (GKE's managed plugin: the
    driver's libraries and binaries under /usr/local/nvidia). The platform names the node label
    that turns its plugin off for another (``Platform.own_plugin_off_label``, set where the GPU
    Operator's plugin is the advertiser); a node without it set has the platform's plugin."""
    off = ctx.platform.own_plugin_off_label
    if not off or "device-plugin" not in ctx.platform.provides:
        return False
    node = ctx.node
    return node is not None and node.metadata.labels.get(off) != "true"


def _cdi_by_default(ctx: NodeContext) -> bool:
    """Whether CDI may hand GPUs to a pod that names no RuntimeClass: the ClusterPolicy's
    ``cdi.default`` where the operator runs (``cdi.enabled`` alone only adds the nvidia-cdi
    RuntimeClass and leaves the default runtime alone), else the runtime's own CDI switch. On a
    platform that installs the NVIDIA runtime itself (Bottlerocket, EKS's and AKS's GPU images)
    the operator's toolkit is not the one that set the runtime up, so its policy says nothing
    about it and only the runtime's own switch counts."""
    cdi = ctx.cluster_policy_spec.get("cdi")
    if isinstance(cdi, dict) and "container-toolkit" not in ctx.platform.provides:
        return bool(cdi.get("default"))
    setup = ctx.runtime_setup
    return bool(setup is not None and setup.cdi_enabled)


cdi_by_default = _cdi_by_default  # (read by checks.pod_env through diagnose)


def _no_gpu_without_runtime(ctx: NodeContext, pod: Pod, log: LogFile) -> Finding | None:
    """A GPU job whose log says its container has no driver library or GPU, in a pod that
    starts under plain runc (no RuntimeClass, NVIDIA's runtime not the default, no CDI by
    default; on Docker, a daemon.json not collected: ``_docker_default_unread``): the
    runtime's configuration is why (NVIDIA/gpu-operator#1017). On a Tegra node of JetPack 4
    the runtime also mounts CUDA, cuDNN and TensorRT, so their libraries missing say the same
    (checks.tegra_mounts). Where the pod
    does get NVIDIA's runtime the same words are below it, and nothing is said here; nor
    where the words say a driver answered with no device (``_DRIVER_ANSWERED``)."""
    docker_unread = _docker_default_unread(ctx, pod)
    if not docker_unread and (not _runs_without_nvidia_runtime(ctx, pod) or _cdi_by_default(ctx)):
        return None
    lines = log.lines
    mounted = mounts_cuda(ctx)
    index = next((i for i in range(len(lines) - 1, -1, -1) if _says_no_driver(lines[i])
                  or (mounted and says_mounted_library_missing(lines[i]))), None)
    if index is None:
        return None
    known = ctx.kb.get(NOT_DEFAULT_RUNTIME)
    meta = pod.metadata
    found = Decisive(index + 1, lines[index].strip()[:MAX_LINE], 1)
    finding = line_finding(ctx.kb, "container-toolkit", known.severity, found, f"{log.path}:{index + 1}",
                           verb=f"fails in GPU workload {meta.namespace}/{meta.name}", standalone="true",
                           namespace=meta.namespace, pod=meta.name, container=log.container)
    return msgspec.structs.replace(finding, cause=known.code, specificity=known.specificity)


#: NVML's NVML_ERROR_NO_PERMISSION: opening the driver's device nodes was refused with EACCES.
_NVML_NO_PERMISSION = lazy_compile(
    r"\bNVML\b.{0,80}\bInsufficient Permissions\b|\bNVML_ERROR_NO_PERMISSION\b")
#: Node OS images that run SELinux enforcing by default: the RHEL family and Fedora (RHCOS on
#: OpenShift included), and Bottlerocket.
_SELINUX_OS = lazy_compile(r"(?i:\bRed Hat\b|\bRHEL\b|\bCentOS\b|\bRocky\b|\bAlma\s?Linux\b|\bOracle Linux\b"
                           r"|\bFedora\b|\bBottlerocket\b)")


def _iommu_translated(ctx: NodeContext, finding: Finding, line: str) -> Finding:
    """``finding`` moved to the kernel, with its class, where its line is the verbs local
    protection error the table puts on gpudirect-rdma and the node's kernel log says the IOMMU
    translates DMA (checks.iommu_domain): the host's boot parameters refuse the NIC's access."""
    if finding.component != "gpudirect-rdma" or not protection_under_translation(
            line, ctx.obs.cmd.get("dmesg.txt")):
        return finding
    return msgspec.structs.replace(finding, component="kernel")


def _confined(ctx: NodeContext, finding: Finding) -> Finding:
    """NVML's "Insufficient Permissions" in a container on a node whose OS confines containers
    with SELinux by default is that confinement, the runtime's labelling of the driver's files
    and device nodes (NVIDIA/nvidia-docker#676, the toolkit guide's "NVML Insufficient
    Permissions and SELinux": it works with --privileged), not the driver. Elsewhere the same
    words are the driver's device-file mode (NVIDIA/nvidia-container-toolkit#210: Gentoo's
    modprobe setting a mode that a rootless container's user cannot open) and stay the driver's."""
    if finding.component != "driver" or not _NVML_NO_PERMISSION.search(finding.context.get(MESSAGE, "")):
        return finding
    node = ctx.node
    if node is None or not _SELINUX_OS.search(node.status.node_info.os_image):
        return finding
    return msgspec.structs.replace(finding, component="container-runtime")


def _under_nvidia_runtime(ctx: NodeContext, pod: Pod) -> bool:
    """Whether the pod's containers start under NVIDIA's runtime: its RuntimeClass's handler
    is an NVIDIA runtime (by the node's runtime config, else by the handler's name), or it
    names no RuntimeClass and NVIDIA's runtime is the default. Unknown (no config, no class)
    is False: the words then say nothing about which layer left the GPU out."""
    setup = ctx.runtime_setup
    wanted = pod.spec.runtime_class_name
    if not wanted:
        return setup is not None and setup.default_is_nvidia
    handler = next((rc.handler for rc in ctx.facts.runtime_classes if rc.metadata.name == wanted), None)
    if not handler:
        return False
    configured = setup.runtimes.get(handler) if setup is not None else None
    return is_nvidia_runtime(configured) if configured is not None else "nvidia" in handler.lower()


def _not_injected(ctx: NodeContext, pod: Pod, log: LogFile) -> Finding | None:
    """A GPU job whose log says its container has no driver library, no nvidia-smi or no GPU
    (``says_no_gpu``) in a pod that did start under NVIDIA's runtime: the runtime's hook (or
    the CDI spec the toolkit wrote) is what injects them, so the toolkit left them out, by
    its own settings (NVIDIA_VISIBLE_DEVICES refused from unprivileged containers,
    NVIDIA/aicr#1354) or its library lookup. The cause is the line's class; the words alone
    do not say which setting. Where the platform's own plugin mounts the driver (GKE's
    managed plugin, where no NVIDIA device plugin pod runs beside it) the injection is the
    plugin's, and nothing is said here."""
    if not _under_nvidia_runtime(ctx, pod):
        return None
    if _platform_plugin_mounts_driver(ctx) and not ctx.stack_pods("device-plugin"):
        return None
    return _last_line_on_toolkit(ctx, pod, log, says_no_gpu)


#: NVML's initialisation failing, in the words nvidia-smi and NVML's other callers print with
#: NVML's own reason (nvmlErrorString) after the colon.
_NVML_INIT_FAILED = lazy_compile(r"\bFailed to initialize NVML: \S")


def _nvml_refused_under_cdi(ctx: NodeContext, pod: Pod, log: LogFile) -> Finding | None:
    """A GPU job whose NVML loaded but could not initialise, in a pod that does not start
    under NVIDIA's runtime, on a node whose runtime resolves CDI devices and whose own
    nvidia-smi answers at its driver's release (no mismatch of its own). The pod's driver
    library and device nodes are then the ones the CDI spec names, and the host's NVML works
    with the driver as it is now: the spec no longer matches the driver (generated before a
    driver upgrade or a MIG change; NVIDIA/nvidia-container-toolkit#856, the toolkit's CDI
    support page, whose nvidia-cdi-refresh regenerates it on driver events; podman-desktop.io
    docs/podman/gpu "Version mismatch": nvidia-smi in the container prints this until the
    spec is regenerated). A reason another reading owns (the library not found: nothing was
    injected; a reason that names a layer) was settled before this one; the cause is the
    line's class. Without the runtime's config, or with CDI off, nothing is said."""
    setup = ctx.runtime_setup
    if setup is None or not setup.cdi_enabled or _under_nvidia_runtime(ctx, pod):
        return None
    if _host_release(ctx) is None:
        return None
    return _last_line_on_toolkit(ctx, pod, log, _nvml_init_refused)


def _nvml_init_refused(line: str) -> bool:
    """NVML's initialisation failing for a reason other than the library not being there."""
    return "initialize NVML" in line and bool(_NVML_INIT_FAILED.search(line)) and not says_no_gpu(line)


def _last_line_on_toolkit(ctx: NodeContext, pod: Pod, log: LogFile,
                          says: Callable[[str], bool]) -> Finding | None:
    """The toolkit's finding on the last line of the job's log that ``says`` holds for, quoted
    as the job's failure with its class as the cause; None where no line does."""
    lines = log.lines
    index = next((i for i in range(len(lines) - 1, -1, -1) if says(lines[i])), None)
    if index is None:
        return None
    meta = pod.metadata
    found = Decisive(index + 1, lines[index].strip()[:MAX_LINE], 1)
    return line_finding(ctx.kb, "container-toolkit", Status.FAILED, found, f"{log.path}:{index + 1}",
                        verb=f"fails in GPU workload {meta.namespace}/{meta.name}", standalone="true",
                        namespace=meta.namespace, pod=meta.name, container=log.container)


def _as_text_catalogued(kb: KnowledgeBase, finding: Finding) -> Finding:
    """A class finding as the named component's catalogued cause whose signature for pasted
    text matches the workload's line: a host component (the links, Fabric Manager, IMEX) has
    no pod whose log signatures could know it, and what a job prints about it ("NET/IB : Got
    async event : port error") is the text ``explain`` reads too."""
    if finding.cause not in {cls.code for cls, _ in kb.classes}:
        return finding  # catalogued already
    line = finding.context.get(MESSAGE, "")
    found = [c for c, m in kb.matchers(finding.component, "text") if m.regex.search(line)]
    cause = max(found, key=lambda c: c.specificity, default=None)
    if cause is None:
        return finding
    rank = max(cause.specificity, finding.specificity)
    return msgspec.structs.replace(finding, cause=cause.code, status=cause.severity, specificity=rank)


#: NCCL's error level: it logs at VERSION, WARN, INFO and TRACE, and every failure it
#: reports is a WARN line ("<host>:<pid>:<tid> [<dev>] <file>:<line> NCCL WARN <message>"),
#: whatever words the message uses ("... with status=12 ... vendor err 129").
_NCCL_WARN = lazy_compile(r"\bNCCL WARN\b")


def _nccl_warning(lines: Sequence[str], named_in: Callable[[str], str | None]) -> Decisive | None:
    """The last NCCL WARN line that names a stack component: NCCL's own verdict on the
    layer under the job, though its words hold no error word the general rules know."""
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index].strip()
        if _NCCL_WARN.search(line) and named_in(line) is not None:
            return Decisive(index + 1, line[:MAX_LINE], 2)
    return None


#: How far around the decisive line one message may run on (NCCL's WARN texts span up to
#: three lines: what failed, the CUDA error, and a hint that names the layer).
_MESSAGE_SPAN = 3


#: A program's own summary of the step that failed, as it starts ("failed to apply mount from
#: ...", "Error: unable to ...", "invalid hook in ...").
_STEP_FAILED = lazy_compile(
    r"(?i:^(?:(?:error|fatal)\s*:\s*)?(?:failed|unable|cannot|could not|couldn.t|invalid)\b)")


def _with_reason(kb: KnowledgeBase, naming: Decisive | None, found: Decisive) -> Decisive | None:
    """The line of a multi-line error that names its layer, read with the decisive line beside
    it (``found``) where its own words fall in no class and ``found``'s do: a program that runs
    another logs the other's error, then its own summary of the step that failed (Toolbx's
    "failed to apply mount from Container Device Interface for NVIDIA" after mount(8)'s "mount
    point does not exist", containers/toolbox src/cmd/initContainer.go). The summary names the
    layer, the line it summarises says why. Only a summary that comes after the line and states
    a step failed (``_STEP_FAILED``): a message that opens with the step and goes on with the
    error and a hint (NCCL's "Failed to bind NVLink SHARP (NVLS) Multicast memory ...", the
    CUDA error, "This is usually caused by ... the Fabric Manager") is read as it is."""
    if (naming is None or naming.context or naming.line_no <= found.line_no
            or kb.class_of(naming.message) is not None
            or not _STEP_FAILED.search(message_of(naming.line)) or kb.class_of(found.message) is None):
        return naming
    return dataclasses.replace(naming, context=found.line, context_no=found.line_no)


def _naming_neighbour(lines: Sequence[str], found: Decisive,
                      named_in: Callable[[str], str | None]) -> Decisive | None:
    """An error line of the same message as ``found`` (the unbroken run of lines around
    it) that names a stack component, where ``found`` names none: a multi-line error names
    its layer in any of its lines ("Failed to bind NVLink SHARP (NVLS) Multicast memory",
    then the CUDA error, then "... in the Fabric Manager or NVSwitches")."""
    index = found.line_no - 1
    first, last = index, index
    while first > 0 and index - first < _MESSAGE_SPAN and lines[first - 1].strip():
        first -= 1
    while last + 1 < len(lines) and last - index < _MESSAGE_SPAN and lines[last + 1].strip():
        last += 1
    for number in sorted(range(first, last + 1), key=lambda n: abs(n - index)):
        line = lines[number].strip()
        if number != index and severity(line) and named_in(line) is not None:
            return Decisive(number + 1, line[:MAX_LINE], severity(line))
    return None


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


@check("gpudirect-rdma", may_find=any_logged_workload)
def nccl_transport(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """NCCL fell back to sockets in a GPU workload on a node that has RDMA ports."""
    for pod, log in ctx.workload_logs():
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


#: ibdev2netdev's line (MLNX_OFED's script: ``<ibdev> port <n> ==> <netdev> (<Up|Down>)``).
_IBDEV2NETDEV = lazy_compile(r"^\s*\S+ port \d+ ==> \S+ \((?P<state>Up|Down)\)\s*$")


#: The heads of ibv_devinfo's (``hca_id:``) and ibstat's (``CA 'mlx5_0'``) listings.
_PORT_LISTING = lazy_compile(r"^\s*hca_id:\s*\S|^(?:CA|Switch|Router):? '[^']+'")
#: A port's logical state in those listings (``state: PORT_DOWN (1)``, ``State: Down``).
_LISTED_STATE = lazy_compile(r"^\s*(?:state|State):\s*(?:PORT_)?(?P<state>[A-Za-z_]+)")


def _listed_ports_idle(lines: Sequence[str]) -> tuple[int, str] | None:
    """Where a job's own ibv_devinfo or ibstat listing shows no port ACTIVE: the line of the
    first port's state and the cause, ``rdma_port_down`` where a port is DOWN, else
    ``ib_port_no_subnet_manager`` (every port INIT or ARMED: the link is up, no subnet
    manager configured it). None where the log lists no port, or one is ACTIVE (a host
    view with spare ports down says nothing of the job's; a port physically Disabled was
    switched off on purpose and is left out)."""
    start = next((i for i, line in enumerate(lines) if _PORT_LISTING.match(line)), None)
    if start is None:
        return None
    text = "\n".join(lines[start:])
    # a port switched off on purpose (physical state Disabled) is no link that failed to come up
    ports = [port for port in parse_ibv_devinfo(text) or parse_ibstat(text) if port.phys_state != "Disabled"]
    if not ports or any(port.state_id in (4, 5) for port in ports):
        return None
    index = next((i for i in range(start, len(lines)) if _LISTED_STATE.match(lines[i])), None)
    if index is None:
        return None
    down = any(port.state_id in (0, 1) for port in ports)
    return index, "rdma_port_down" if down else "ib_port_no_subnet_manager"


def _job_ports_down(lines: Sequence[str]) -> tuple[int, str] | None:
    """The line and cause of a job's own port listing with no port carrying traffic:
    ibdev2netdev's every port Down, else ibv_devinfo's or ibstat's no port ACTIVE."""
    ports = [(i, m) for i, line in enumerate(lines) if (m := _IBDEV2NETDEV.match(line))]
    if ports and not any(m["state"] == "Up" for _, m in ports):
        return ports[-1][0], "rdma_port_down"
    return None if ports else _listed_ports_idle(lines)


@check("rdma-links", may_find=any_logged_workload)
def workload_ports_down(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """Every RDMA port a GPU workload's own ibdev2netdev lists is Down, or no port its
    ibv_devinfo or ibstat lists is ACTIVE: the devices the job was given (an SR-IOV VF in
    its pod) carry no traffic."""
    for pod, log in ctx.workload_logs():
        said = _job_ports_down(log.lines)
        if said is None:
            continue
        index, code = said
        meta = pod.metadata
        ev = Evidence(f"{log.path}:{index + 1}", log.lines[index].strip())
        known = ctx.kb.get(code)
        yield problem(component, known.code, ev, status=known.severity, specificity=known.specificity,
                      namespace=meta.namespace, pod=meta.name, container=log.container)
        return


@check("gpudirect-rdma", may_find=any_logged_workload)
def nccl_gdr_distance(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """NCCL disabled GPUDirect RDMA in a GPU workload because the GPU's NIC is too far on
    the PCIe tree: its own reading of the topology, the node's GPU-NIC placement (NCCL
    prints it at INFO level and carries on through host memory, so nothing fails)."""
    for pod, log in ctx.workload_logs():
        hit = next(((i, line) for i, line in enumerate(log.lines) if NCCL_GDR_FAR.search(line)), None)
        if hit is None:
            continue
        meta = pod.metadata
        ev = Evidence(f"{log.path}:{hit[0] + 1}", hit[1].strip())
        known = ctx.kb.get("nic_gpu_affinity_missing")
        yield problem(component, known.code, ev, status=known.severity, specificity=known.specificity,
                      namespace=meta.namespace, pod=meta.name, container=log.container)
        return


def gdr_capable(ctx: NodeContext) -> bool:
    """Whether the node's GPUs can do GPUDirect RDMA, as far as their model says (the GPU
    product label GFD sets, else nvidia-smi's product names): not the boards without it."""
    label = ctx.gpu_product_label
    products = [label] if label else [g.product_name for g in ctx.smi_gpus]
    return not any(_NO_GDR_GPU.search(p) for p in products)


@check("gpudirect-rdma", may_find=any_logged_workload)
def nccl_gdr_off(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """NCCL's IB transport could use GPUDirect RDMA through none of the HCAs it lists: every
    HCA line says Disabled (no peer-memory module it accepts, or none loaded), so a GPU
    workload's traffic to the NIC goes through host memory (NVIDIA/nccl#1676: DGX OS 25.01
    replaced nv_peer_mem with nvidia-peermem, which NCCL 2.22 did not look for). One HCA
    enabled means GPUDirect works and the others are ports it does not use; GPUs that do not
    do GPUDirect RDMA say nothing."""
    for pod, log in ctx.workload_logs():
        hcas = [(i, m) for i, line in enumerate(log.lines) if "GPU Direct RDMA" in line
                and (m := NCCL_GDR_HCA.search(line))]
        if not hcas or any(m["state"] != "Disabled" for _, m in hcas):
            continue
        if not gdr_capable(ctx):
            return
        index = hcas[0][0]
        meta = pod.metadata
        found = Decisive(index + 1, log.lines[index].strip()[:MAX_LINE], 1)
        verb = f"runs without GPUDirect RDMA in GPU workload {meta.namespace}/{meta.name}"
        where = f"{log.path}:{index + 1}"
        missed = _peermem_missed(ctx, log.lines)
        yield line_finding(ctx.kb, component, Status.DEGRADED, found, where, verb=verb, standalone="true",
                           line_class="error_version_mismatch" if missed is not None else None,
                           evidence=(missed,) if missed is not None else (),
                           namespace=meta.namespace, pod=meta.name, container=log.container)
        return


#: NCCL's banner with its release ("NCCL version 2.19.3+cuda12.3").
_NCCL_RELEASE = lazy_compile(r"\bNCCL version (\d+)\.(\d+)\.(\d+)")
#: The first NCCL release that also takes the in-driver module's own sysfs entry
#: (/sys/module/nvidia_peermem/version) as GPUDirect support (NVIDIA/nccl#1676).
_PEERMEM_AWARE = (2, 23, 4)


def _peermem_missed(ctx: NodeContext, lines: Sequence[str]) -> Evidence | None:
    """Where NCCL turned GPUDirect RDMA off on every HCA while the node's module list shows
    nvidia-peermem loaded: the job's NCCL did not recognise the loaded module. NCCL before
    2.23.4 looks only for the peer-memory client's /sys/kernel/mm/memory_peers/nv_mem*
    entries, which nvidia-peermem (the module the driver ships since 470, replacing
    nv_peer_mem) and kernels since 5.6 no longer create (NVIDIA/nccl#1676 after DGX OS 25.01
    swapped the modules; NVIDIA/nccl#1537 with nvidia_peermem in lsmod on kernel 6.6, cured by
    NCCL 2.23.4; openucx/ucx#10123 on the same sysfs change): the job's NCCL against the
    host's module, a version mismatch. None where the module list was not collected, shows
    no nvidia_peermem, or NCCL names a release that knows the module."""
    modules = ctx.modules
    if not modules or "nvidia_peermem" not in modules:
        return None
    release = next((m for line in lines if (m := _NCCL_RELEASE.search(line))), None)
    if release is not None and tuple(int(part) for part in release.groups()) >= _PEERMEM_AWARE:
        return None
    said = "nvidia_peermem loaded; NCCL saw no peer-memory module"
    return Evidence(ctx.obs.path_of("cmd", "lsmod.txt"), said)
