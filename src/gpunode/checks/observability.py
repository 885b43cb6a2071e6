"""Layer 4 checks: the DCGM exporter really serves per-GPU series."""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpunode.checks.base import check, ok, pods_here, problem, unknown
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import line_finding
from gpunode.decisive import MAX_LINE, Decisive, message_of
from gpunode.errors import ParseError
from gpunode.model import Evidence, Finding, Status
from gpunode.parse.prom import parse_prometheus_text
from gpunode.relazy import lazy_compile


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


#: A collector's own word that a collection round produced none of a kind of series it exists
#: to collect, at whatever level it logs it: the AWS distro's Container Insights receiver
#: warns "No pod metric collected" every round where its cAdvisor pass matched no pod
#: container (open-telemetry/opentelemetry-collector-contrib#12638 on Bottlerocket's
#: containerd, aws-observability/aws-otel-collector#1987 and #2486): it runs and ships node
#: series only. Every node runs pods, so a healthy round never says it.
_COLLECTED_NONE = lazy_compile(r"\bNo (?:\w+ ){0,2}metrics? (?:were |was )?collected\b", re.I)
#: What ``_COLLECTED_NONE`` reports: the series it looked for are not there.
_NONE_CLASS = "error_not_found"


@check("otel-agent", may_find=pods_here("otel-agent"))
def agent_collects_none(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A running agent whose current log's last word on a kind of series is that it collected
    none of them (``_COLLECTED_NONE``): degraded with that line."""
    for _, log in ctx.current_logs(component):
        lines = log.lines
        at = next((i for i in range(len(lines) - 1, -1, -1)
                   if "ollected" in lines[i] and _COLLECTED_NONE.search(message_of(lines[i]))), None)
        if at is None:
            continue
        found = Decisive(at + 1, lines[at].strip()[:MAX_LINE], 1)
        yield line_finding(ctx.kb, component, Status.DEGRADED, found, f"{log.path}:{at + 1}",
                           verb="collects nothing", line_class=_NONE_CLASS, namespace=log.namespace,
                           pod=log.pod, container=log.container, standalone="true")
        return
