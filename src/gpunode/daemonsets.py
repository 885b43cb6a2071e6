"""Every GPU-stack DaemonSet, desired vs scheduled vs ready, and the GPU nodes it misses.

A DaemonSet's status counts the nodes its selector and tolerations let it run on
(desiredNumberScheduled), those running its pod (currentNumberScheduled), the ready ones
and the misscheduled ones; a GPU node its selector does not match (a label NFD or GFD
should have set, a taint it does not tolerate, a component disabled) is in none of those
counts. So the table adds, per DaemonSet, the reported GPU nodes where its component has
no pod and a failed or degraded verdict, with that verdict's summary as the reason (the
placement and pod checks say which label, taint or state). A component that is
not-deployed on a node by design (a VM node's container operands, a host-installed
driver) is no gap. The table is given only while some DaemonSet is not complete: a
healthy cluster's report stays as it was.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from gpunode.bundle.kube import DaemonSet
from gpunode.facts import ClusterFacts
from gpunode.model import DaemonSetRow, NodeReport, NodeWithoutPod


def daemonset_table(facts: ClusterFacts,
                    reports: Sequence[NodeReport]) -> tuple[DaemonSetRow, ...] | msgspec.UnsetType:
    """The stack DaemonSets (catalog order of their components), or UNSET when all are complete."""
    rows: list[DaemonSetRow] = []
    for component in facts.catalog.ids:
        sets = sorted(facts.daemonsets.get(component, ()), key=_key)
        gaps: dict[str, list[NodeWithoutPod]] = {_key_of(ds): [] for ds in sets}
        for gap in _without_pod(facts, component, reports) if sets else ():
            gaps[_key_of(_owner(facts, sets, gap.node))].append(gap)
        rows.extend(_row(component, ds, tuple(gaps[_key_of(ds)])) for ds in sets)
    if all(row.complete for row in rows):
        return msgspec.UNSET
    return tuple(rows)


def _key(ds: DaemonSet) -> tuple[str, str]:
    return ds.metadata.namespace, ds.metadata.name


def _key_of(ds: DaemonSet) -> str:
    return f"{ds.metadata.namespace}/{ds.metadata.name}"


def _owner(facts: ClusterFacts, sets: Sequence[DaemonSet], node_name: str) -> DaemonSet:
    """The DaemonSet a node's gap belongs to: the first whose nodeSelector the node's labels
    satisfy (a driver DaemonSet per OS version), else the first."""
    node = facts.nodes.get(node_name)
    labels = node.metadata.labels if node is not None else {}
    for ds in sets:
        selector = ds.spec.template.spec.node_selector
        if all(labels.get(k) == v for k, v in selector.items()):
            return ds
    return sets[0]


def _row(component: str, ds: DaemonSet, missing: tuple[NodeWithoutPod, ...]) -> DaemonSetRow:
    st = ds.status
    return DaemonSetRow(
        namespace=ds.metadata.namespace, name=ds.metadata.name, component=component,
        desired=st.desired_number_scheduled, current=st.current_number_scheduled,
        ready=st.number_ready, misscheduled=st.number_misscheduled, gpu_nodes_without_pod=missing,
    )


def _without_pod(facts: ClusterFacts, component: str,
                 reports: Sequence[NodeReport]) -> list[NodeWithoutPod]:
    """Reported GPU nodes where ``component`` has no pod and a failed or degraded verdict."""
    out = []
    for report in reports:
        if facts.pods_by_node.get(report.name, {}).get(component):
            continue
        verdict = next((c for c in report.components if c.component == component), None)
        if verdict is not None and verdict.status.is_problem:
            out.append(NodeWithoutPod(report.name, verdict.status, verdict.summary, verdict.cause))
    return out
