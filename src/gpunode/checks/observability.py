"""Layer 4 checks: the DCGM exporter really serves per-GPU series."""

from __future__ import annotations

from collections.abc import Iterator

from gpunode.checks.base import check, ok, problem
from gpunode.checks.context import NodeContext
from gpunode.model import Evidence, Finding, Status

TEMP = "DCGM_FI_DEV_GPU_TEMP"


@check("dcgm-exporter", needs=("metrics/dcgm-exporter.prom",))
def dcgm_series(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """One temperature series per GPU shows the exporter sees every GPU."""
    samples = ctx.dcgm_metric(TEMP)
    path = ctx.obs.path_of("metrics", "dcgm-exporter.prom")
    if samples is None:
        return
    gpus = {s.labels.get("gpu", "") for s in samples if s.name == TEMP}
    expected = ctx.expected_gpus
    if not gpus:
        yield problem(
            component, "dcgm_metrics_missing", Evidence(path, f"no {TEMP} series"), status=Status.DEGRADED
        )
    elif expected and len(gpus) < expected:
        ev = Evidence(path, f"{TEMP} for {len(gpus)} GPUs; node has {expected}")
        yield problem(component, "dcgm_metrics_missing", ev, status=Status.DEGRADED)
    else:
        yield ok(component, f"serving metrics for {len(gpus)} GPUs", Evidence(path, f"{TEMP} x{len(gpus)}"))
