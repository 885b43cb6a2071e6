"""The fleet section of a report: outliers, shared factors, wedges and NVLink domains over
one diagnosis."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from gpunode.facts import ClusterFacts
from gpunode.fleet import domains, factors, outliers, wedges
from gpunode.fleet.model import FleetAnalysis
from gpunode.fleet.profile import NOTHING_OBSERVED, Observed, class_keys, profile
from gpunode.model import NodeReport


def analyse(facts: ClusterFacts, nodes: Sequence[NodeReport],
            observed: Mapping[str, Observed]) -> FleetAnalysis:
    """Patterns across the reported nodes; ``observed`` holds what each node's own files
    said (nodes judged from the lists alone have nothing there)."""
    profiles = [profile(facts, report, observed.get(report.name)) for report in nodes]
    # (each profile's GFD GPU count, read once: the wedges compare it with NVML's too)
    labelled = {p.name: p.counts.get("gpus.labelled") for p in profiles}
    return FleetAnalysis(
        outliers=tuple(outliers.find(profiles)),
        correlations=tuple(factors.find(profiles)),
        wedges=tuple(wedges.find(facts, [n.name for n in nodes], observed, _failing_below_gfd(nodes),
                                 labelled)),
        domains=tuple(found) if (found := domains.find(_members(facts, nodes, observed))) else msgspec.UNSET,
    )


def _members(facts: ClusterFacts, nodes: Sequence[NodeReport],
             observed: Mapping[str, Observed]) -> list[domains.Member]:
    """Each reported node's NVLink domain as its label and its GPUs say."""
    out: list[domains.Member] = []
    for report in nodes:
        node = facts.nodes.get(report.name)
        labels: Mapping[str, str] = node.metadata.labels if node is not None else {}
        seen = observed.get(report.name) or NOTHING_OBSERVED
        label = labels.get(domains.CLIQUE_LABEL) or None
        if label is None and seen.domains is None:
            continue
        product = class_keys(labels).get("product") or seen.product
        out.append(domains.Member(report.name, label, product, seen.domains, seen.links))
    return out


def _failing_below_gfd(nodes: Sequence[NodeReport]) -> set[str]:
    """Nodes with a root cause other than GFD's own (a GPU lost, a driver down): what their
    labels say is explained by that, not by a labeller that stopped."""
    return {n.name for n in nodes if any(rc.component != "gfd" for rc in n.root_causes)}
