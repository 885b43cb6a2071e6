"""Live-only facts: the endpoint answered, and DCGM values move between two scrapes.

The bundle's scrape is the first sample; a second one through the API server's
pod proxy, at least one exporter collect interval later, must show changed
values (the energy counter of a powered GPU always grows). An exporter whose
DCGM connection hung keeps serving its last values, which one scrape cannot show.
"""

from __future__ import annotations

import time

from gpunode.collect.access import ClusterAccess
from gpunode.collect.kube import ApiFailure, KubeApi
from gpunode.collect.targets import DEFAULT_METRICS_PORTS
from gpunode.deadline import cut_short, out_of_time, within_run
from gpunode.errors import ParseError
from gpunode.facts import ClusterFacts
from gpunode.parse.prom import Sample, parse_prometheus_text
from gpunode.validate.context import LiveFacts

DCGM = "dcgm-exporter"


def live_facts(
    facts: ClusterFacts,
    access: ClusterAccess,
    *,
    first_scrape_at: float,
    interval_s: float,
) -> LiveFacts:
    """What the live run proved: the API answered (collection worked) and DCGM freshness.
    ``access``: the cluster the collection read, resolved then (its kubeconfig is not read
    again, its credential plugin not run again)."""
    manifest = facts.manifest
    detail = f"answered; gitVersion {facts.version.get('gitVersion', 'unknown')}"
    wait = interval_s + 1 - (time.monotonic() - first_scrape_at)
    if wait > 0:
        time.sleep(within_run(wait))
    if cut_short():
        out_of_time(access.config().cluster.server, "the second DCGM scrape (metrics freshness)")
    api = access.api()
    try:
        fresh = {
            node: result for node in facts.gpu_nodes() if (result := _fresh(api, facts, node)) is not None
        }
    finally:
        api.close()
    return LiveFacts(manifest.api_server or api.server, True, detail, fresh)


def _fresh(api: KubeApi, facts: ClusterFacts, node: str) -> tuple[bool, str] | None:
    """(values moved?, detail) for the node's exporter; None when there is nothing to compare."""
    first = facts.source.read(f"nodes/{node}/metrics/{DCGM}.prom")
    pods = facts.pods_on(node, DCGM)
    if first is None or not pods:
        return None
    pod = pods[0].pod.metadata
    path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}:{DEFAULT_METRICS_PORTS[DCGM]}/proxy/metrics"
    try:
        second = api.get(path, retry_503=False)
    except ApiFailure as exc:
        return False, f"second scrape failed: {exc.message}"
    return compare_scrapes(first.decode(errors="replace"), second.decode(errors="replace"))


def compare_scrapes(first: str, second: str) -> tuple[bool, str]:
    """Whether any per-GPU DCGM value changed between two scrapes, and how many did."""
    try:
        before, after = _values(parse_prometheus_text(first)), _values(parse_prometheus_text(second))
    except ParseError as exc:
        return False, f"unreadable scrape: {exc}"
    shared = before.keys() & after.keys()
    changed = [k for k in shared if before[k] != after[k]]
    if not shared:
        return False, "no DCGM series in common between the two scrapes"
    if not changed:
        return False, f"all {len(shared)} DCGM values identical between the two scrapes"
    return True, f"{len(changed)} of {len(shared)} DCGM values changed between the two scrapes"


def _values(samples: list[Sample]) -> dict[tuple[str, str], float]:
    return {(s.name, s.labels.get("gpu", "")): s.value for s in samples if s.name.startswith("DCGM_FI_")}
