"""The fleet section of a report: outliers, shared factors and wedges over one diagnosis."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gpunode.facts import ClusterFacts
from gpunode.fleet import factors, outliers, wedges
from gpunode.fleet.model import FleetAnalysis
from gpunode.fleet.profile import Observed, profile
from gpunode.model import NodeReport


def analyse(facts: ClusterFacts, nodes: Sequence[NodeReport],
            observed: Mapping[str, Observed]) -> FleetAnalysis:
    """Patterns across the reported nodes; ``observed`` holds what each node's own files
    said (nodes judged from the lists alone have nothing there)."""
    profiles = [profile(facts, report, observed.get(report.name)) for report in nodes]
    return FleetAnalysis(
        outliers=tuple(outliers.find(profiles)),
        correlations=tuple(factors.find(profiles)),
        wedges=tuple(wedges.find(facts, [n.name for n in nodes], observed, _failing_below_gfd(nodes))),
    )


def _failing_below_gfd(nodes: Sequence[NodeReport]) -> set[str]:
    """Nodes with a root cause other than GFD's own (a GPU lost, a driver down): what their
    labels say is explained by that, not by a labeller that stopped."""
    return {n.name for n in nodes if any(rc.component != "gfd" for rc in n.root_causes)}
