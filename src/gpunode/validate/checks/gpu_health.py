"""GPU health: GPUs advertised, one driver, GFD labels, hardware errors, heat, fabric, stack."""

from __future__ import annotations

from gpunode.checks.context import NodeContext
from gpunode.gpus import gfd_labels_as_gpu, gpu_resources, physical_gpus_labelled
from gpunode.model import Evidence
from gpunode.parse.nvidia_smi import GpuInfo, NvidiaSmiReport
from gpunode.parse.prom import Sample
from gpunode.validate.checks.common import consistent_values, dcgm_gpu_label, smi_path, value_outcome
from gpunode.validate.context import ValidationContext, quantity
from gpunode.validate.registry import (
    failed,
    named,
    node_validation,
    passed,
    unknown,
    validation,
    warned,
)
from gpunode.validation import CATEGORY, Outcome

CAT = CATEGORY.GPU_HEALTH
GPU = "nvidia.com/gpu"
GFD_REQUIRED = (
    "nvidia.com/gpu.product",
    "nvidia.com/gpu.count",
    "nvidia.com/gpu.memory",
    "nvidia.com/mig.capable",
)
# Xids caused by applications (or sympathetic to them): the GPU itself stays healthy.
APPLICATION_XIDS = frozenset({13, 31, 32, 43, 45, 68, 69, 109, 137})
TEMP_HEADROOM_C = 5
MEMORY_TOLERANCE = 0.01


@validation(
    "gpu.nodes-present",
    CAT,
    "GPU nodes found",
    fix=(
        "Check NFD labels (feature.node.kubernetes.io/pci-10de.present) and the GPU Operator on "
        "the GPU nodes."
    ),
    needs=("cluster/nodes",),
)
def nodes_present(ctx: ValidationContext) -> Outcome:
    """At least one node carries GPU labels, GPU capacity or GPU-stack pods."""
    names = ctx.gpu_nodes
    if names:
        return passed(f"{len(names)} GPU nodes: {named(names)}", Evidence("cluster/nodes.json", named(names)))
    return failed("no GPU node found (no GPU labels, capacity or GPU-stack pods)")


@node_validation(
    "gpu.allocatable",
    CAT,
    "Allocatable nvidia.com/gpu equals each node's GPU count",
    fix="Find why the device plugin withholds GPUs: unhealthy GPUs (Xid), a failing plugin, or missing GPUs.",
)
def gpus_allocatable(ctx: ValidationContext, node: NodeContext) -> Outcome | None:
    """Allocatable GPUs (or MIG devices) match what the node has, and ``--expect-gpus``."""
    if node.node is None:
        return unknown("node not in cluster/nodes.json")
    status = node.node.status
    allocatable = gpu_resources(node.node.metadata.labels, status.allocatable).advertised
    shown = f"{GPU}={status.allocatable.get(GPU, 'absent')} (capacity {status.capacity.get(GPU, 'absent')})"
    ev = Evidence(f"node/{node.name} status.allocatable", shown)
    expected, physical = node.expected_units, _physical_gpus(node)
    want = ctx.options.expect_gpus
    if want is not None and (physical or 0) < want:
        return failed(f"{physical or 0} GPUs present, expected {want}", ev)
    if expected is None and want is None:
        if allocatable == 0:
            return failed("no GPU allocatable on this GPU node (and no GPU count observed)", ev)
        return unknown("GPU count not observed (no labels, capacity or nvidia-smi)", ev)
    target = expected or 0
    if allocatable < target:
        return failed(f"{allocatable} of {target} GPU devices allocatable", ev)
    return passed(f"{allocatable} GPUs allocatable", ev)


def _physical_gpus(node: NodeContext) -> int | None:
    """Physical GPUs: nvidia-smi first, then GFD's count where it counts physical GPUs."""
    smi = node.nvidia_smi
    if smi is not None:
        return smi.attached_gpus
    return node.expected_gpus


@node_validation(
    "gpu.driver-consistent",
    CAT,
    "One driver version across GPU nodes",
    fix="Roll the named nodes to the fleet's driver (ClusterPolicy driver.version or the host package).",
    reduce=consistent_values("driver", severity="warn"),
)
def driver_version(ctx: ValidationContext, node: NodeContext) -> Outcome | None:
    """The loaded driver: nvidia-smi, else the GFD label, else DCGM's driver label."""
    smi = node.nvidia_smi
    if smi is not None and smi.driver_version:
        return value_outcome(
            smi.driver_version, Evidence(smi_path(node), f"driver_version={smi.driver_version}")
        )
    label = node.node.metadata.labels.get("nvidia.com/cuda.driver-version.full") if node.node else None
    if label:
        ev = Evidence(f"node/{node.name} metadata.labels", f"nvidia.com/cuda.driver-version.full={label}")
        return value_outcome(label, ev)
    dcgm = dcgm_gpu_label(node, "DCGM_FI_DRIVER_VERSION")
    if dcgm:
        return value_outcome(dcgm, Evidence(node.obs.path_of("metrics", "dcgm-exporter.prom"), dcgm))
    return unknown("driver version not observed")


@node_validation(
    "gpu.gfd-labels",
    CAT,
    "GFD labels present and consistent with the GPUs",
    fix="Check the gpu-feature-discovery pod on the node; stale labels clear when it restarts.",
)
def gfd_labels(ctx: ValidationContext, node: NodeContext) -> Outcome | None:
    """Product, count, memory and MIG capability labels exist and agree with nvidia-smi."""
    if node.node is None or not _gfd_expected(ctx, node):
        return None
    labels = gfd_labels_as_gpu(node.node.metadata.labels)
    where = f"node/{node.name} metadata.labels"
    missing = [k for k in GFD_REQUIRED if k not in labels]
    if missing:
        return failed(f"missing {', '.join(missing)}", Evidence(where, f"missing {', '.join(missing)}"))
    shown = Evidence(where, ", ".join(f"{k.removeprefix('nvidia.com/')}={labels[k]}" for k in GFD_REQUIRED))
    smi = node.nvidia_smi
    if smi is None or not smi.gpus:
        return passed(f"{labels['nvidia.com/gpu.product']} x{labels['nvidia.com/gpu.count']}", shown)
    mismatches = _label_mismatches(labels, smi)
    if mismatches:
        return failed(
            "labels disagree with nvidia-smi: " + "; ".join(mismatches),
            shown,
            Evidence(smi_path(node), _smi_line(smi)),
        )
    return passed(f"{labels['nvidia.com/gpu.product']} x{labels['nvidia.com/gpu.count']}", shown)


def _gfd_expected(ctx: ValidationContext, node: NodeContext) -> bool:
    """GFD applies where enabled and deployed (or where its labels already are)."""
    if node.operand_enabled("gfd") is False:
        return False
    if node.stack_pods("gfd") or "nvidia.com/gpu.product" in (node.node.metadata.labels if node.node else {}):
        return True
    return bool(ctx.facts.daemonsets.get("gfd"))


def _label_mismatches(labels: dict[str, str], smi: NvidiaSmiReport) -> list[str]:
    first = smi.gpus[0]
    out: list[str] = []
    mig_on = any(g.mig_mode_current == "Enabled" for g in smi.gpus)
    physical = physical_gpus_labelled(labels)
    if not mig_on and physical is not None and physical != smi.attached_gpus:
        out.append(f"gpu.count={labels['nvidia.com/gpu.count']} but {smi.attached_gpus} GPUs attached")
    product = first.product_name.replace(" ", "-")
    if product and not labels["nvidia.com/gpu.product"].startswith(product):
        out.append(f"gpu.product={labels['nvidia.com/gpu.product']} but GPUs are {first.product_name}")
    memory = quantity(labels["nvidia.com/gpu.memory"])
    if (
        not mig_on
        and first.memory_total_mib
        and abs(memory - first.memory_total_mib) > first.memory_total_mib * MEMORY_TOLERANCE
    ):
        out.append(f"gpu.memory={memory} but GPUs have {first.memory_total_mib} MiB")
    capable = first.mig_mode_current is not None
    if labels["nvidia.com/mig.capable"] != str(capable).lower():
        out.append(
            f"mig.capable={labels['nvidia.com/mig.capable']} "
            f"but nvidia-smi says MIG {'is' if capable else 'is not'} supported"
        )
    return out


def _smi_line(smi: NvidiaSmiReport) -> str:
    first = smi.gpus[0]
    return (
        f"attached_gpus={smi.attached_gpus} product={first.product_name} memory={first.memory_total_mib} MiB"
    )


@node_validation(
    "gpu.no-hardware-xid",
    CAT,
    "No hardware Xid errors",
    fix=(
        "Drain the node and follow the Xid's recovery action (GPU reset, reboot); repeated Xids "
        "on one GPU mean RMA."
    ),
)
def hardware_xids(ctx: ValidationContext, node: NodeContext) -> Outcome | None:
    """Kernel-log Xids (and DCGM's last Xid) other than application-caused ones."""
    log, dcgm = node.kernel_log, node.dcgm_samples
    if log is None and dcgm is None:
        return unknown("neither the kernel log nor DCGM metrics were observed")
    hits: list[Evidence] = []
    if log is not None:
        path = node.obs.path_of("cmd", "dmesg.txt")
        hits += [Evidence(path, x.line.strip()) for x in log.xids if x.xid not in APPLICATION_XIDS]
        hits += [Evidence(path, line.strip()) for _, line in log.fallen_off_bus[:1]]
    if dcgm is not None:
        hits += _dcgm_xids(node, dcgm)
    if hits:
        return failed(f"{len(hits)} hardware Xid report{'s' * (len(hits) > 1)}", *hits[:4])
    sources = " and ".join(s for s, d in (("kernel log", log), ("DCGM", dcgm)) if d is not None)
    return passed(f"no hardware Xid in {sources}")


def _dcgm_xids(node: NodeContext, samples: list[Sample]) -> list[Evidence]:
    path = node.obs.path_of("metrics", "dcgm-exporter.prom")
    out = []
    for s in samples:
        if s.name == "DCGM_FI_DEV_XID_ERRORS" and s.value and int(s.value) not in APPLICATION_XIDS:
            detail = s.labels.get("err_msg", "")
            out.append(
                Evidence(
                    path,
                    f"DCGM_FI_DEV_XID_ERRORS{{gpu={s.labels.get('gpu')}}}={int(s.value)} {detail}".strip(),
                )
            )
    return out


@node_validation(
    "gpu.memory-health",
    CAT,
    "No uncorrectable ECC error or pending row remap",
    fix=(
        "Drain the node and reset the named GPU (nvidia-smi -r) to apply pending remaps; a remap "
        "failure means RMA."
    ),
)
def memory_health(ctx: ValidationContext, node: NodeContext) -> Outcome | None:
    """nvidia-smi's volatile uncorrectable ECC, pending remaps and remap failures; DCGM as fallback."""
    smi = node.nvidia_smi
    if smi is not None and smi.gpus:
        problems = [p for g in smi.gpus for p in _gpu_memory_problems(g)]
        if problems:
            return failed("; ".join(problems[:3]), *(Evidence(smi_path(node), p) for p in problems[:4]))
        return passed(f"{len(smi.gpus)} GPUs: no uncorrectable ECC, no pending remap")
    if node.dcgm_samples is not None:
        return _dcgm_memory(node, node.dcgm_samples)
    return unknown("nvidia-smi -q and DCGM metrics not observed")


def _gpu_memory_problems(gpu: GpuInfo) -> list[str]:
    bus = gpu.pci_bus_id
    out = []
    if gpu.ecc_volatile_dbe:
        out.append(f"GPU {bus}: {gpu.ecc_volatile_dbe} volatile uncorrectable ECC errors")
    if gpu.remapped_rows_failure:
        out.append(f"GPU {bus}: row remapping failed")
    if gpu.remapped_rows_pending:
        out.append(f"GPU {bus}: remapped rows pending (reset required)")
    if gpu.retired_pages_pending:
        out.append(f"GPU {bus}: page retirement pending")
    return out


def _dcgm_memory(node: NodeContext, samples: list[Sample]) -> Outcome:
    path = node.obs.path_of("metrics", "dcgm-exporter.prom")
    failure = [s for s in samples if s.name == "DCGM_FI_DEV_ROW_REMAP_FAILURE" and s.value]
    if failure:
        return failed(
            f"row remap failure on GPU {failure[0].labels.get('gpu')}",
            Evidence(path, "DCGM_FI_DEV_ROW_REMAP_FAILURE=1"),
        )
    remapped = [s for s in samples if s.name == "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS" and s.value]
    if remapped:
        ev = Evidence(
            path,
            f"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS{{gpu={remapped[0].labels.get('gpu')}}}={int(remapped[0].value)}",
        )
        return warned(
            "rows remapped after uncorrectable errors (nvidia-smi not observed to check pending)", ev
        )
    return passed("DCGM reports no uncorrectable remaps or remap failures")


@node_validation(
    "gpu.temperature",
    CAT,
    "GPU temperatures under the slowdown threshold",
    fix=(
        "Check airflow/cooling and fan or liquid-cooling alarms on the node; thermal slowdown "
        "costs throughput."
    ),
)
def temperature(ctx: ValidationContext, node: NodeContext) -> Outcome | None:
    """Each GPU's temperature against its own slowdown threshold (nvidia-smi)."""
    smi = node.nvidia_smi
    judged = [(g, g.temperature_c, g.slowdown_temp_c) for g in (smi.gpus if smi else ())]
    judged = [(g, t, s) for g, t, s in judged if t is not None and s is not None]
    if not judged:
        return unknown("no GPU temperature with its slowdown threshold observed")
    hot = [(g, t, s) for g, t, s in judged if t >= s]  # type: ignore[operator]
    warm = [(g, t, s) for g, t, s in judged if t < s and t >= s - TEMP_HEADROOM_C]  # type: ignore[operator]
    lines = [f"GPU {g.pci_bus_id}: {t} C (slowdown at {s} C)" for g, t, s in [*hot, *warm]]
    evidence = [Evidence(smi_path(node), line) for line in lines[:4]]
    if hot:
        return failed(f"{len(hot)} GPUs at or above slowdown temperature", *evidence)
    if warm:
        return warned(f"{len(warm)} GPUs within {TEMP_HEADROOM_C} C of slowdown", *evidence)
    hottest = max(judged, key=lambda item: item[1] or 0)
    ev = Evidence(
        smi_path(node), f"hottest GPU {hottest[0].pci_bus_id}: {hottest[1]} C (slowdown {hottest[2]} C)"
    )
    return passed(f"all {len(judged)} GPUs under their slowdown temperature", ev)


@node_validation(
    "gpu.fabric-manager",
    CAT,
    "Fabric Manager healthy on NVSwitch systems",
    fix="Start nvidia-fabricmanager (driver container or host service) and check /var/log/fabricmanager.log.",
)
def fabric_manager(ctx: ValidationContext, node: NodeContext) -> Outcome | None:
    """GPUs behind NVSwitch report fabric state Completed and status Success."""
    smi = node.nvidia_smi
    if smi is None:
        return unknown("nvidia-smi -q not observed") if node.obs.cmd or node.node else None
    fabric = [g for g in smi.gpus if g.fabric_state]
    if not fabric:
        return None
    bad = [g for g in fabric if g.fabric_state != "Completed" or (g.fabric_status or "Success") != "Success"]
    if bad:
        detail = f"fabric state {bad[0].fabric_state}, status {bad[0].fabric_status or 'N/A'}"
        return failed(f"{len(bad)} of {len(fabric)} GPUs: {detail}", Evidence(smi_path(node), detail))
    return passed(
        f"fabric Completed on {len(fabric)} GPUs", Evidence(smi_path(node), "fabric.state=Completed")
    )


@validation(
    "gpu.stack-diagnosis",
    CAT,
    "The stack diagnosis of every GPU node has no root cause",
    fix="Run `gpunode diagnose` and fix the root causes bottom-up.",
)
def stack_diagnosis(ctx: ValidationContext) -> Outcome:
    """Reuses `gpunode diagnose`: any root cause on a GPU node (or cluster-wide) fails."""
    report = ctx.diagnosis
    causes = [("cluster", rc) for rc in report.cluster.root_causes]
    causes += [(node.name, rc) for node in report.nodes for rc in node.root_causes]
    if not report.nodes and not causes:
        return unknown("no GPU node was diagnosed")
    if not causes:
        unknown_nodes = [n.name for n in report.nodes if n.status.value == "unknown"]
        note = f" ({named(unknown_nodes)} not fully observed)" if unknown_nodes else ""
        return passed(f"no root cause on {len(report.nodes)} GPU nodes{note}")
    evidence = [
        Evidence(f"diagnose {where}", f"{rc.component}: {rc.cause} — {rc.title}") for where, rc in causes
    ]
    summary = "; ".join(f"{where}: {rc.component} {rc.cause}" for where, rc in causes[:5])
    nodes = sorted({where for where, _ in causes if where != "cluster"})
    return failed(summary, *evidence[:8], fix=causes[0][1].fix or "", nodes=nodes)
