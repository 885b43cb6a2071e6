"""Observability: DCGM exporter per GPU node, node exporter and logging on every node, OTel, scraping."""

from __future__ import annotations

from collections.abc import Sequence

from gpunode.bundle.kube import GenericObject, Pod
from gpunode.checks.context import NodeContext
from gpunode.checks.pods import pod_problem
from gpunode.model import Evidence, Finding
from gpunode.validate.context import ValidationContext
from gpunode.validate.registry import (
    failed,
    named,
    node_validation,
    passed,
    skipped,
    unknown,
    validation,
)
from gpunode.validation import CATEGORY, Outcome

CAT = CATEGORY.OBSERVABILITY
DCGM = "dcgm-exporter"
DCGM_SERVICE_LABELS = (("app", "nvidia-dcgm-exporter"), ("app.kubernetes.io/name", "dcgm-exporter"))


@node_validation(
    "obs.dcgm-exporter",
    CAT,
    "DCGM exporter serving fresh per-GPU series on every GPU node",
    fix="Check the nvidia-dcgm-exporter pod on the node and its log (DCGM init, hostengine connection).",
)
def dcgm_exporter(ctx: ValidationContext, node: NodeContext) -> Outcome | None:
    """An exporter pod runs, its scrape has a series per GPU, and (live) the values move."""
    pods = [sp.pod for sp in node.stack_pods(DCGM)]
    bad = _unhealthy(pods, DCGM)
    if not pods:
        return failed(
            "no DCGM exporter pod on the node", Evidence("cluster/pods.json", f"no {DCGM} on {node.name}")
        )
    if bad:
        return failed(f"{pods[0].metadata.name} unhealthy", *bad[0].evidence)
    found = node.dcgm_gpus
    path = node.obs.path_of("metrics", "dcgm-exporter.prom")
    if found is None:
        return unknown("exporter runs but its metrics were not scraped")
    gpus, families = found
    expected = node.expected_gpus or 0
    shown = f"{len(gpus)} GPUs in {len(families)} DCGM_FI_DEV_* families"
    if len(gpus) < max(expected, 1):
        return failed(f"per-GPU series for {len(gpus)} GPUs, node has {expected}", Evidence(path, shown))
    return _freshness(ctx, node, len(gpus), Evidence(path, shown))


def _freshness(ctx: ValidationContext, node: NodeContext, gpus: int, ev: Evidence) -> Outcome:
    live = ctx.options.live
    if live is not None and node.name in live.dcgm_fresh:
        fresh, detail = live.dcgm_fresh[node.name]
        proof = Evidence(f"two scrapes of {DCGM} on {node.name}", detail)
        if not fresh:
            return failed(f"series for {gpus} GPUs but values are stale: {detail}", ev, proof)
        return passed(f"series for {gpus} GPUs, values moving", ev, proof)
    when = ctx.facts.manifest.collected_at or "collection time"
    return passed(f"series for {gpus} GPUs", ev, Evidence("manifest.json collected_at", f"scraped at {when}"))


def _unhealthy(pods: Sequence[Pod], component: str) -> list[Finding]:
    return [f for f in (pod_problem(p, component) for p in pods) if f is not None]


def _agent_everywhere(ctx: ValidationContext, component: str, label: str) -> Outcome:
    """A healthy pod of ``component`` on every node of the cluster."""
    nodes = sorted(ctx.facts.nodes)
    if not nodes:
        return unknown("no nodes listed")
    missing = [n for n in nodes if not ctx.facts.pods_on(n, component)]
    if len(missing) == len(nodes):
        return failed(f"no {label} on any node", Evidence("cluster/pods.json", f"no {component} pods"))
    sick = [
        (n, f)
        for n in nodes
        for f in _unhealthy([sp.pod for sp in ctx.facts.pods_on(n, component)], component)
    ]
    evidence = [Evidence("cluster/pods.json", f"no {component} pod on {n}") for n in missing]
    evidence += [ev for _, f in sick for ev in f.evidence[:1]]
    bad = sorted({*missing, *(n for n, _ in sick)})
    if bad:
        return failed(f"{label} missing or unhealthy on {named(bad)}", *evidence[:8], nodes=bad)
    return passed(f"{label} ready on all {len(nodes)} nodes")


@validation(
    "obs.node-exporter",
    CAT,
    "Node exporter on every node",
    fix=(
        "Check the node-exporter DaemonSet's tolerations and node selector (it must run on GPU "
        "and control-plane nodes)."
    ),
    needs=("cluster/pods", "cluster/nodes"),
)
def node_exporter(ctx: ValidationContext) -> Outcome:
    """Host metrics (and RDMA port counters) come from one node exporter per node."""
    return _agent_everywhere(ctx, "node-exporter", "node exporter")


@validation(
    "obs.logging-agent",
    CAT,
    "Logging agent on every node",
    fix="Check the logging DaemonSet (Fluent Bit, Vector, Promtail...) tolerations and its pods' logs.",
    needs=("cluster/pods", "cluster/nodes"),
)
def logging_agent(ctx: ValidationContext) -> Outcome:
    """Container and node logs leave every node through a logging agent."""
    return _agent_everywhere(ctx, "logging-agent", "logging agent")


@validation(
    "obs.otel-agent",
    CAT,
    "OpenTelemetry agent healthy where deployed",
    fix="Check the OpenTelemetry Collector agent DaemonSet and its pods' logs.",
    needs=("cluster/pods",),
)
def otel_agent(ctx: ValidationContext) -> Outcome:
    """Where an OTel collector DaemonSet exists, all its pods are scheduled and ready."""
    pods = [sp.pod for sps in ctx.facts.pods_by_node.values() for sp in sps.get("otel-agent", [])]
    sets = ctx.facts.daemonsets.get("otel-agent", [])
    if not pods and not sets:
        return skipped("no OpenTelemetry agent deployed")
    sick = _unhealthy(pods, "otel-agent")
    short = [ds for ds in sets if ds.status.number_ready < ds.status.desired_number_scheduled]
    evidence = [ev for f in sick for ev in f.evidence[:1]]
    evidence += [
        Evidence(
            f"daemonset {ds.metadata.namespace}/{ds.metadata.name}",
            f"desired={ds.status.desired_number_scheduled} ready={ds.status.number_ready}",
        )
        for ds in short
    ]
    if sick or short:
        return failed(f"{len(sick)} unhealthy OTel agent pods, {len(short)} DaemonSets short", *evidence[:8])
    return passed(f"{len(pods)} OTel agent pods ready")


@validation(
    "obs.dcgm-scrape-config",
    CAT,
    "DCGM exporter scraped (ServiceMonitor or scrape config)",
    fix=(
        "Enable ClusterPolicy dcgmExporter.serviceMonitor.enabled=true, or add a ServiceMonitor "
        "for its Service."
    ),
)
def dcgm_scrape_config(ctx: ValidationContext) -> Outcome:
    """With the Prometheus Operator CRDs present, a ServiceMonitor selects the exporter's Service."""
    if not ctx.facts.has("servicemonitors"):
        return skipped("no Prometheus Operator CRDs (no ServiceMonitor list in the collection)")
    services = [s for s in ctx.facts.services if _is_dcgm_service(s)]
    if not services and not ctx.facts.daemonsets.get(DCGM):
        return skipped("no DCGM exporter deployed")
    monitors = [m for m in ctx.facts.service_monitors if any(_selects(m, s) for s in services)]
    if monitors:
        names = ", ".join(f"{m.metadata.namespace}/{m.metadata.name}" for m in monitors)
        return passed(f"ServiceMonitor {names}", Evidence("cluster/servicemonitors.json", names))
    annotated = [s for s in services if s.metadata.annotations.get("prometheus.io/scrape") == "true"]
    if annotated:
        ev = Evidence(
            f"service {annotated[0].metadata.namespace}/{annotated[0].metadata.name}", "prometheus.io/scrape"
        )
        return passed("exporter Service annotated prometheus.io/scrape=true", ev)
    shown = named([f"{s.metadata.namespace}/{s.metadata.name}" for s in services]) or "no exporter Service"
    return failed(
        f"no ServiceMonitor selects {shown}", Evidence("cluster/servicemonitors.json", "none for DCGM")
    )


def _is_dcgm_service(service: GenericObject) -> bool:
    labels = service.metadata.labels
    return any(labels.get(k) == v for k, v in DCGM_SERVICE_LABELS) or DCGM in service.metadata.name


def _selects(monitor: GenericObject, service: GenericObject) -> bool:
    """ServiceMonitor spec.selector.matchLabels ⊆ the Service's labels, in an allowed namespace."""
    selector = monitor.spec.get("selector")
    match = selector.get("matchLabels") if isinstance(selector, dict) else None
    if not isinstance(match, dict) or not match:
        return False
    if any(service.metadata.labels.get(k) != v for k, v in match.items()):
        return False
    return _namespace_allowed(monitor, service.metadata.namespace)


def _namespace_allowed(monitor: GenericObject, namespace: str) -> bool:
    chooser = monitor.spec.get("namespaceSelector")
    if not isinstance(chooser, dict) or not chooser:
        return namespace == monitor.metadata.namespace
    if chooser.get("any"):
        return True
    names = chooser.get("matchNames")
    return isinstance(names, list) and namespace in names
