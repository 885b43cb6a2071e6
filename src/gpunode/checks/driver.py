"""Layer 1 checks: the driver (operator-managed or host) and Fabric Manager."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import msgspec

from gpunode.checks.base import check, not_deployed, ok, problem, unknown
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import line_finding
from gpunode.decisive import Decisive
from gpunode.kb import KnowledgeBase
from gpunode.model import Evidence, Finding, Status
from gpunode.parse.nvidia_smi import GpuInfo, parse_nvidia_smi_failure

_FABRIC_OK = {"Completed"}
_VALIDATIONS = "run/nvidia/validations"


@check("driver")
def driver_answers(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """nvidia-smi output is the driver's own word: it answers, or says why not."""
    text = ctx.obs.cmd.get("nvidia-smi.txt")
    failure = parse_nvidia_smi_failure(text) if text is not None else None
    if failure:
        where = ctx.obs.path_of("cmd", "nvidia-smi.txt")
        cause, rank = _smi_cause(ctx.kb, component, failure)
        said = line_finding(ctx.kb, component, Status.FAILED, Decisive(1, failure, 2), where,
                            verb="fails in nvidia-smi", specificity=rank)
        yield msgspec.structs.replace(said, cause=cause)  # the line quoted, its cause named
        return
    smi = ctx.nvidia_smi
    if smi is not None and smi.driver_version:
        ev = Evidence(ctx.obs.path_of("cmd", "nvidia-smi-q.xml"), f"driver_version={smi.driver_version}")
        yield ok(component, f"driver {smi.driver_version}, CUDA {smi.cuda_version}", ev)


#: The state nvidia-smi's failure is when its words say nothing more.
_SMI_FAILED = "nvidia_smi_failed"


def _smi_cause(kb: KnowledgeBase, component: str, failure: str) -> tuple[str, int]:
    """What nvidia-smi's own failure line means: a catalogued cause of the driver whose
    signature it matches ("couldn't communicate with the NVIDIA driver" is NVML's Driver Not
    Loaded), else the class of the line ("Failed to initialize NVML: Unknown Error" is a
    device error), else the bare state; ranked at least as the state."""
    state = kb.get(_SMI_FAILED).specificity
    known = [c for source in ("text", "node_cmd") for c, m in kb.matchers(component, source)
             if m.regex.search(failure)]
    if known:
        best = max(known, key=lambda c: c.specificity)
        return best.code, max(best.specificity, state)
    cls = kb.class_of(failure)
    return (cls, state) if cls is not None else (_SMI_FAILED, state)


@check("driver")
def host_driver_evidence(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """Without driver pods, a host driver shows in validation markers and GFD labels."""
    if ctx.stack_pods(component) or ctx.daemonsets_targeting(component):
        return
    marker = ctx.obs.files.get(f"{_VALIDATIONS}/driver-ready")
    if marker is not None and "IS_HOST_DRIVER=true" in marker:
        ev = Evidence(ctx.obs.path_of("files", f"{_VALIDATIONS}/driver-ready"), "IS_HOST_DRIVER=true")
        yield ok(component, "host driver (validated by the GPU Operator)", ev)
        return
    version = ctx.node.metadata.labels.get("nvidia.com/cuda.driver-version.full") if ctx.node else None
    if version:
        ev = Evidence(f"node/{ctx.name} metadata.labels", f"nvidia.com/cuda.driver-version.full={version}")
        yield ok(component, f"host driver {version} (from GFD labels)", ev)
    elif ctx.operand_enabled("driver") is False:
        yield unknown(component, "ClusterPolicy expects a host driver; no evidence of it was collected")


@check("driver", needs=("cmd/lsmod.txt",))
def nouveau_module(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """nouveau loaded without the nvidia module: it holds the GPUs, the driver cannot bind."""
    modules = ctx.modules
    if modules is None or "nouveau" not in modules or "nvidia" in modules:
        return
    ev = Evidence(ctx.obs.path_of("cmd", "lsmod.txt"), "nouveau loaded, nvidia not loaded")
    yield problem(component, "nouveau_loaded", ev, specificity=85)


def _registration_failed(gpus: Iterable[GpuInfo]) -> str:
    """The GPUs whose fabric state is Completed with another status than Success."""
    bad = [f"{g.pci_bus_id}: fabric.status={g.fabric_status}" for g in gpus
           if g.fabric_state == "Completed" and g.fabric_status not in (None, "Success")]
    return "; ".join(bad[:4]) + (f" (+{len(bad) - 4} more)" if len(bad) > 4 else "")


@check("fabric-manager", needs=("cmd/nvidia-smi-q.xml",))
def fabric_state(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """NVSwitch systems report a fabric state per GPU; others report none."""
    smi = ctx.nvidia_smi
    if smi is None:
        return
    states = {g.fabric_state for g in smi.gpus if g.fabric_state and g.fabric_state != "N/A"}
    path = ctx.obs.path_of("cmd", "nvidia-smi-q.xml")
    if not states:
        yield not_deployed(component, "no NVSwitch fabric on this node")
    elif states <= _FABRIC_OK and (failed := _registration_failed(smi.gpus)):
        # Completed with an error status: Fabric Manager ran, the GPU did not join
        yield problem(component, "fabric_registration_failed", Evidence(path, failed), specificity=75)
    elif states <= _FABRIC_OK:
        yield ok(component, "fabric state Completed on all GPUs", Evidence(path, "fabric.state=Completed"))
    else:
        bad = sorted(states - _FABRIC_OK)
        ev = Evidence(path, f"fabric.state={', '.join(bad)}")
        yield problem(component, "fabric_manager_not_running", ev)
