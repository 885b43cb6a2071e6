"""What changed between two diagnoses of one cluster (``gpunode diff OLD NEW``).

Each side is its facts and its report. Every GPU node of either side is reduced to facets
(``what`` → value): node info versions, the image of each stack component's pod there,
``nvidia.com/*`` resources and labels, taints, conditions, cordoning, and a digest of its
container runtime configs (from the node pass, ``Observed.runtime_config``); the cluster
to the ClusterPolicy's collected settings and each stack DaemonSet's images. A change is
one facet going from one value to another on a set of nodes (cluster-wide changes hold
every node of the new side).

Ranking: the nodes that began to fail are those with a root cause in NEW that they did not
have in OLD. A change scores how exactly its nodes are those nodes (shared over either);
changes of what a person or a rollout sets (versions, images, configs, user labels) are
*inputs*; changes the failure itself makes (GFD's labels gone, allocatable 0, NotReady,
controller taints) are *outputs* and count half, so the breaking change ranks above its
consequences. Ties go to the change on fewer nodes, then by name.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

import msgspec

from gpunode.bundle.projection import project
from gpunode.facts import ClusterFacts
from gpunode.fleet.model import Change, DiffReport, RootCauseChange, Side
from gpunode.fleet.profile import GFD_TIMESTAMP_LABEL, Observed
from gpunode.model import Report

#: nvidia.com labels a person (or a tool acting for one) sets: a change there is an input.
INPUT_LABELS = ("nvidia.com/mig.config", "nvidia.com/device-plugin.config", "nvidia.com/gpu.deploy.",
                "nvidia.com/gpu.workload.config", "nvidia.com/gpu-driver-upgrade.skip")
CLUSTER = "(cluster)"
OUTPUT_WEIGHT = 0.5
ABSENT = "(absent)"
#: Facets read from a node's own files, absent where those files were not fetched.
NODE_FILE_FACETS = ("runtime config",)
#: Labels named in a merged change before "(+N more)".
LABELS_SHOWN = 4


def diff(old: tuple[ClusterFacts, Report, Mapping[str, Observed]],
         new: tuple[ClusterFacts, Report, Mapping[str, Observed]]) -> DiffReport:
    """Everything that changed from ``old`` to ``new``, ranked by the new failures it explains."""
    old_facts, old_report, old_seen = old
    new_facts, new_report, new_seen = new
    began, appeared, resolved = _root_cause_changes(old_report, new_report)
    old_nodes = [n.name for n in old_report.nodes]
    new_nodes = [n.name for n in new_report.nodes]
    in_old, in_new = set(old_nodes), set(new_nodes)
    grouped: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for name in dict.fromkeys([*old_nodes, *new_nodes]):
        before = node_facets(old_facts, name, old_seen.get(name)) if name in in_old else {}
        after = node_facets(new_facts, name, new_seen.get(name)) if name in in_new else {}
        if name in in_old and name in in_new:
            _only_both_read(before, after)
        if before == after:
            continue
        for what, (was, now) in _changed(before, after).items():
            grouped[(what, was, now)].append(name)
    every = tuple(new_nodes) or tuple(old_nodes)
    for what, (was, now) in _changed(cluster_facets(old_facts), cluster_facets(new_facts)).items():
        grouped[(what, was, now)] = list(every)
    failing = frozenset(began)
    changes = [_change(what, was, now, nodes, failing) for (what, was, now), nodes in _merged(grouped)]
    changes.sort(key=lambda c: (-c.score * (1 if c.kind == "input" else OUTPUT_WEIGHT), -c.explains,
                                len(c.nodes), c.what, c.before, c.after))
    return DiffReport(
        old=Side(old_report.source.location, old_report.source.collected_at, len(old_nodes)),
        new=Side(new_report.source.location, new_report.source.collected_at, len(new_nodes)),
        began_failing=tuple(began), new_root_causes=appeared, resolved_root_causes=resolved,
        changes=tuple(changes),
    )


Grouped = Mapping[tuple[str, str, str], list[str]]


def _merged(grouped: Grouped) -> list[tuple[tuple[str, str, str], list[str]]]:
    """Labels that all appeared (or all went) on the same nodes as one change: a driver that
    stops takes a dozen GFD labels with it."""
    out: list[tuple[tuple[str, str, str], list[str]]] = []
    bulk: dict[tuple[str, tuple[str, ...]], list[str]] = defaultdict(list)
    for (what, was, now), where in grouped.items():
        direction = "removed" if now == ABSENT else "added" if was == ABSENT else ""
        if what.startswith("label ") and direction:
            bulk[(direction, tuple(where))].append(what.removeprefix("label "))
        else:
            out.append(((what, was, now), where))
    for (direction, nodes), keys in bulk.items():
        if len(keys) == 1:
            out.append(((f"label {keys[0]}", *_values(grouped, keys[0], nodes)), list(nodes)))
            continue
        shown = ", ".join(keys[:LABELS_SHOWN]) + (f" (+{len(keys) - LABELS_SHOWN} more)"
                                                 if len(keys) > LABELS_SHOWN else "")
        count = f"{len(keys)} labels"
        was, now = (ABSENT, count) if direction == "added" else (count, ABSENT)
        out.append(((f"labels {direction}: {shown}", was, now), list(nodes)))
    return out


def _values(grouped: Grouped, key: str, nodes: tuple[str, ...]) -> tuple[str, str]:
    """The before and after of the one label change on exactly these nodes."""
    return next((was, now) for (what, was, now), where in grouped.items()
                if what == f"label {key}" and tuple(where) == nodes)


def _only_both_read(before: dict[str, str], after: dict[str, str]) -> None:
    """What only a node's own files tell (its runtime config) is compared where both sides read
    them: a list-first live run that read no file of a healthy node has not seen it change."""
    for what in NODE_FILE_FACETS:
        if (what in before) != (what in after):
            before.pop(what, None)
            after.pop(what, None)


def _changed(before: Mapping[str, str], after: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    return {what: (before.get(what, ABSENT), after.get(what, ABSENT))
            for what in dict.fromkeys([*before, *after]) if before.get(what) != after.get(what)}


def _change(what: str, before: str, after: str, nodes: Sequence[str], failing: frozenset[str]) -> Change:
    explains = sum(1 for n in nodes if n in failing)
    union = len(nodes) + len(failing) - explains
    score = round(explains / union, 3) if union else 0.0
    return Change(what, before, after, tuple(nodes), _kind(what), explains, score)


def _kind(what: str) -> str:
    if what.startswith("label "):
        return "input" if what.removeprefix("label ").startswith(INPUT_LABELS) else "output"
    if what.startswith(("labels ", "resource ", "taint ", "condition ", "unschedulable", "node")):
        return "output"
    return "input"


def node_facets(facts: ClusterFacts, name: str, seen: Observed | None) -> dict[str, str]:
    """What a node is and holds, as ``what`` → value (absent: not there)."""
    node = facts.nodes.get(name)
    out: dict[str, str] = {"node": "present"}
    if node is not None:
        info = node.status.node_info
        out |= {"kernel": info.kernel_version, "OS image": info.os_image,
                "container runtime": info.container_runtime_version, "kubelet": info.kubelet_version}
        labels = node.metadata.labels
        out |= {f"label {k}": v for k, v in labels.items()
                if k.startswith("nvidia.com/") and k != GFD_TIMESTAMP_LABEL}
        status = node.status
        out |= {f"resource {k} capacity": v
                for k, v in status.capacity.items() if k.startswith("nvidia.com/")}
        out |= {f"resource {k} allocatable": v
                for k, v in status.allocatable.items() if k.startswith("nvidia.com/")}
        out |= {f"taint {t.key}:{t.effect}": t.value or "(set)" for t in node.spec.taints}
        out |= {f"condition {c.type}": c.status for c in status.conditions}
        if node.spec.unschedulable:
            out["unschedulable"] = "true"
    for component, sps in facts.pods_by_node.get(name, {}).items():
        images = sorted({c.image for sp in sps for c in sp.pod.spec.containers if c.image})
        if images:
            out[f"image {component}"] = ", ".join(images)
    if seen is not None and seen.runtime_config:
        out[NODE_FILE_FACETS[0]] = seen.runtime_config
    return out


def cluster_facets(facts: ClusterFacts) -> dict[str, str]:
    """Cluster-wide settings: the ClusterPolicy's collected settings, stack DaemonSets' images."""
    out: dict[str, str] = {}
    for policy in facts.cluster_policies:
        # as collect writes it: a saved or simulated bundle with the whole spec compares
        # equal to a live read of the same cluster
        collected = project("clusterpolicies", {"spec": policy.spec}).get("spec") or {}
        for path, value in _flat(collected, f"ClusterPolicy {policy.metadata.name} "):
            out[path] = value
    for component, sets in facts.daemonsets.items():
        for ds in sets:
            images = sorted({c.image for c in ds.spec.template.spec.containers if c.image})
            if images:
                what = f"DaemonSet {ds.metadata.namespace}/{ds.metadata.name} ({component}) image"
                out[what] = ", ".join(images)
    return out


def _flat(value: object, prefix: str) -> Iterable[tuple[str, str]]:
    if isinstance(value, Mapping):
        for key in sorted(value):
            yield from _flat(value[key], f"{prefix}{'.' if not prefix.endswith(' ') else ''}{key}")
    else:
        yield prefix.rstrip(), msgspec.json.encode(value).decode()


def _root_cause_changes(
    old: Report, new: Report,
) -> tuple[list[str], tuple[RootCauseChange, ...], tuple[RootCauseChange, ...]]:
    before = _causes(old)
    after = _causes(new)
    began = [n.name for n in new.nodes if {(rc.component, rc.cause) for rc in n.root_causes}
             - {k for k, nodes in before.items() if n.name in nodes}]
    appeared = _listed(after, before, new)
    resolved = _listed(before, after, old)
    return began, appeared, resolved


def _causes(report: Report) -> dict[tuple[str, str], list[str]]:
    out: dict[tuple[str, str], list[str]] = defaultdict(list)
    for rc in report.cluster.root_causes:
        out[(rc.component, rc.cause)].append(CLUSTER)
    for node in report.nodes:
        for rc in node.root_causes:
            out[(rc.component, rc.cause)].append(node.name)
    return out


def _listed(these: Mapping[tuple[str, str], list[str]], others: Mapping[tuple[str, str], list[str]],
            report: Report) -> tuple[RootCauseChange, ...]:
    titles = {(rc.component, rc.cause): rc.title for rc in report.cluster.root_causes}
    titles |= {(rc.component, rc.cause): rc.title for n in report.nodes for rc in n.root_causes}
    out = []
    for key, nodes in these.items():
        fresh = tuple(n for n in nodes if n not in set(others.get(key, ())))
        if fresh:
            out.append(RootCauseChange(key[0], key[1], titles.get(key, ""), fresh))
    return tuple(sorted(out, key=lambda r: (-len(r.nodes), r.cause)))
