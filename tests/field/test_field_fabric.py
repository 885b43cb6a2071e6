"""The network fabric under GPU jobs, read in the words of the layer that failed: libfabric's
fi_getinfo finding no provider (FI_ENODATA), a Mellanox direct-verbs call the kernel's RDMA
driver does not implement (EPROTONOSUPPORT), NCCL's shared-memory segment line as a paste
wrapped it, NCCL failing to import the topology or graph file the node injects, and the node's
InfiniBand tools finding no device under /sys/class/infiniband beside a Mellanox NIC
(data/job_errors.toml, checks/fabric_words.py). Each failure line is from a public report (its
address beside it); each reading has a healthy look-alike that stays healthy."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import diagnose_case, top_root_cause

from gpunode.checks.fabric_words import injected_topology_refused
from gpunode.checks.job_words import job_cause, job_names
from gpunode.checks.net_plugin import plugin_fell_back
from gpunode.kb import load_kb

#: ofiwg/libfabric#5149 and gist joerns/c0631a32840b96d25380cc1e91a1e7a0 (FI_PROVIDER=verbs
#: finding no device); aws-ofi-nccl's wording of the same call.
GETINFO_GIST = "error: fi_getinfo failed: -61 'No data available'"
GETINFO_OFI = ("ip-10-0-0-1:1929:1937 [0] nccl_net_ofi_init:1444 NCCL WARN NET/OFI OFI "
               "fi_getinfo() call failed: "
               "No data available")
#: open-mpi/ompi#12251: Open MPI's verbose probe of a provider, no failure of the job.
GETINFO_PROBE = "mtl_ofi_component.c:764: fi_getinfo(): No data available"
#: openucx/ucx#8440 and openucx/ucx#7229: the kernel lacks the DEVX async event method.
DEVX_8440 = ("[1668070000.123456] [node1:1234 :0]   UCX  ERROR mlx5dv_devx_create_event_channel() failed: "
             "Protocol not supported")
#: NVIDIA/nccl-tests#166's segment line, as a paste wrapped at its width splits it.
SHM_WRAPPED = ("NCCL WARN Error",
               "while creating shared memory segment /dev/shm/nccl-fjwOOB (size 5967872), error: No space",
               "left on device (28)")
#: NVIDIA/nccl's graph/search.cc: a graph file naming a GPU the node does not have.
GRAPH_SET = "host:1:2 [0] NCCL INFO NCCL_GRAPH_FILE set by environment to /opt/vm/graph.xml"
GRAPH_WARN = "host:1:2 [0] graph/search.cc:703 NCCL WARN XML Import Channel : dev 3 not found."
#: The Open MPI users list, 2012-12 ("Seems like driver was not started").
IBSTATUS = "Fatal error:  device '*': sys files not found (/sys/class/infiniband/*/ports)"


def _job(text: str, state: str = "Error") -> Case:
    workload: dict[str, Any] = {"kind": "workload", "name": "job-0", "namespace": "default",
                                "container": "main", "state": state}
    if state == "Error":
        workload["exit_code"] = 1
    evidence: list[dict[str, Any]] = [
        workload,
        {"kind": "log", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
         "container": "main", "text": text}]
    raw = {"id": "x-fabric", "source": "https://example.org/x", "title": "t", "platform": "ubuntu",
           "evidence": evidence, "expect": {"healthy": True}}
    return msgspec.convert(raw, Case)


def _node(files: dict[str, str], nics: int | None = None) -> Case:
    evidence = [{"kind": "node-cmd", "name": name, "text": text} for name, text in files.items()]
    raw: dict[str, Any] = {"id": "x-fabric-node", "source": "https://example.org/x", "title": "t",
                           "platform": "ubuntu", "evidence": evidence, "expect": {"healthy": True}}
    if nics is not None:
        raw["cluster"] = {"gpu_node": {"nics": nics}}
    return msgspec.convert(raw, Case)


def _top(case: Case) -> tuple[str, str] | None:
    top = top_root_cause(diagnose_case(case), case.node)
    return (top.component, top.cause) if top else None


def _table(line: str) -> tuple[str | None, str | None]:
    component = job_names(line)
    return component, job_cause(line, component) if component else None


def test_fi_getinfo_finding_no_provider_is_the_fabric_not_found() -> None:
    for line in (GETINFO_GIST, GETINFO_OFI):
        assert _table(line) == ("gpudirect-rdma", "error_not_found"), line
    assert _top(_job(f"starting\n{GETINFO_OFI}\n")) == ("gpudirect-rdma", "error_not_found")


def test_a_provider_probe_or_a_plugin_nccl_went_past_says_nothing() -> None:
    assert _table(GETINFO_PROBE) == (None, None)
    fell_back = f"{GETINFO_OFI}\nhost:1:2 [0] NCCL INFO Using network Socket\n"
    assert plugin_fell_back(GETINFO_OFI, 1, fell_back.splitlines())
    assert _top(_job(fell_back, "Running")) is None


def test_a_direct_verbs_call_the_kernel_lacks_is_the_ofed_version() -> None:
    assert _table(DEVX_8440) == ("ofed", "error_version_mismatch")
    assert _top(_job(f"starting\n{DEVX_8440}\n")) == ("ofed", "error_version_mismatch")
    # a firmware syndrome on the same call is not the kernel's missing method
    assert _table("mlx5dv_devx_obj_create(QP) failed, syndrome 0x1234: Remote I/O error") == (None, None)


def test_the_shared_memory_segment_line_wrapped_by_a_paste() -> None:
    assert _table(SHM_WRAPPED[1]) == ("container-runtime", "error_resource_exhausted")
    assert _top(_job("\n".join(SHM_WRAPPED) + "\n")) == ("container-runtime", "error_resource_exhausted")
    # another errno after the segment line is not the pod's /dev/shm size: a refusal is the
    # runtime's permission on /dev/shm (shm-permission-denied), never its size
    other = "while creating shared memory segment /dev/shm/nccl-x (size 10), error: Permission denied"
    assert _table(other) == ("container-runtime", "error_permission_denied")


def test_an_injected_graph_file_naming_a_gpu_the_node_lacks() -> None:
    lines = ["host:1:2 [0] NCCL INFO cudaDriverVersion 12020", GRAPH_SET, GRAPH_WARN]
    assert injected_topology_refused(lines) == (1, 2)
    assert _top(_job("\n".join(lines) + "\n")) == ("gpudirect-rdma", "error_config_invalid")


def test_a_topology_file_that_imports_or_nccl_s_own_limit_says_nothing() -> None:
    healthy = [GRAPH_SET, "host:1:2 [0] NCCL INFO comm 0x1 rank 0 nranks 1 - Init COMPLETE"]
    assert injected_topology_refused(healthy) is None
    assert _top(_job("\n".join(healthy) + "\n", "Running")) is None
    # aws/aws-ofi-nccl#1226: the XML node cap fires with or without a file
    limit = [GRAPH_SET, "host:1:2 [0] graph/xml.h:150 NCCL WARN Error : too many XML nodes (max 256)"]
    assert injected_topology_refused(limit) is None
    # the graph code's warning without a file given is not this reading
    assert injected_topology_refused([GRAPH_WARN]) is None


def test_no_rdma_device_beside_a_mellanox_nic_is_the_ofed_stack() -> None:
    # the simulated node has mlx5_core loaded
    assert _top(_node({"ibstat.txt": IBSTATUS})) == ("ofed", "error_not_found")
    assert _top(_node({"ibv_devinfo.txt": "No IB devices found\n"})) == ("ofed", "error_not_found")


def test_no_rdma_device_on_a_node_without_a_mellanox_nic_says_nothing() -> None:
    # a GPU node built without NICs: no mlx4/mlx5 core module, no Mellanox PCI label
    assert _top(_node({"ibstat.txt": IBSTATUS}, nics=0)) is None


def test_a_qualified_search_that_finds_nothing_is_not_found() -> None:
    # aws-samples/aws-efa-eks#18 (the EFA plugin crash-loops on an instance without EFA: the
    # line of sagemaker-hyperpod-cli#367's plugin); ggml-org/llama.cpp#23943
    kb = load_kb()
    for line in ("2026/02/03 15:23:32 Error to get IB device: %v. No valid EFA devices found",
                 "warning: no usable GPU found, --gpu-layers option will be ignored"):
        cause = kb.line_class(line)
        assert cause is not None and cause.code == "error_not_found", line
    # a count of what was found, or what was searched for and not qualified, is no such line
    found = kb.line_class("device plugin: 4 valid EFA devices found")
    assert found is None or found.code != "error_not_found"
