"""Layer 4 checks: the DCGM exporter really serves per-GPU series."""

from __future__ import annotations

from collections.abc import Iterator

from gpunode.checks.base import check, ok, problem, unknown
from gpunode.checks.context import NodeContext
from gpunode.errors import ParseError
from gpunode.model import Evidence, Finding, Status
from gpunode.parse.prom import parse_prometheus_text


@check("dcgm-exporter", needs=("metrics/dcgm-exporter.prom",))
def dcgm_series(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """Per-GPU series for every physical GPU show the exporter sees them all.

    GPUs are counted as distinct ``gpu``/``UUID`` labels over the per-GPU families
    present (not one family: vGPU guests lack the temperature), and compared with
    physical GPUs (MIG instances carry their GPU's index).
    """
    found = ctx.dcgm_gpus
    path = ctx.obs.path_of("metrics", "dcgm-exporter.prom")
    if found is None:
        return
    gpus, families = found
    expected = ctx.expected_gpus
    shown = f"{len(gpus)} GPUs in {len(families)} DCGM_FI_DEV_* families"
    unreadable = _not_a_scrape(ctx.obs.metrics.get("dcgm-exporter.prom", "")) if not gpus else ""
    if unreadable:  # a damaged file is no evidence of missing series
        yield unknown(component, f"the DCGM scrape is unreadable ({unreadable})", Evidence(path, unreadable))
    elif not gpus:
        ev = Evidence(path, f"no per-GPU DCGM_FI_DEV_* series ({', '.join(families) or 'none'})")
        yield problem(component, "dcgm_metrics_missing", ev, status=Status.DEGRADED)
    elif expected and len(gpus) < expected:
        ev = Evidence(path, f"{shown}; node has {expected}")
        yield problem(component, "dcgm_metrics_missing", ev, status=Status.DEGRADED)
    else:
        yield ok(component, f"serving metrics for {len(gpus)} GPUs", Evidence(path, shown))


def _not_a_scrape(text: str) -> str:
    """Why a scrape without GPU series is damaged rather than an exporter's answer: it is
    not Prometheus text, or its last line is cut off (exposition lines end in a newline).
    An empty answer, or comments only, is an exporter serving nothing: a real failure."""
    if text and not text.endswith("\n"):
        return "its last line is cut off"
    try:
        parse_prometheus_text(text)
    except ParseError as exc:
        return f"not Prometheus text: {exc}"[:200]
    return ""
