"""A cluster component's error that names a node label it could not find: the component
that writes the label is where to look, not the one that reads it.

The GPU Operator reads NFD's labels off a GPU node (``nvidia.com/gpu.present=true``) to
pick the driver image, and its ClusterPolicy reconcile stops with, in NVIDIA/gpu-operator's
controllers (``getGPUNodeOSTag``), "unable to retrieve OS name from label
feature.node.kubernetes.io/system-os_release.ID" when NFD's system source does not run
(Vikaspogu/home-ops@e6af032). The reader's line is the symptom: the label's setter
(catalog ``sets_labels``) owes it. Read only where the line is among a log's last lines
(its latest word), the node it reads lacks the label (a line about a label the node carries
is stale) and the setter is deployed (no NFD at all is ``nfd_not_deployed``, another check).
Pure: the facts in, findings out.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator, Mapping, Sequence

from gpunode.checks.base import problem
from gpunode.checks.cluster import cluster_check
from gpunode.facts import ClusterFacts
from gpunode.model import Evidence, Finding
from gpunode.relazy import lazy_compile

#: A Kubernetes label key with a DNS prefix (``feature.node.kubernetes.io/cpu-model.id``):
#: a bare word after "label" is not read as a key.
_KEY = r"[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?\.[a-z]{2,}/[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?"
#: The word "label" beside the key it names, either order ("from label K", "label K not
#: found", "K label is missing").
_NAMED = lazy_compile(rf"(?i:\blabels? [\"'`]?(?P<a>{_KEY})|(?P<b>{_KEY})[\"'`]? labels?\b)")
#: The reader's words for not finding it.
_UNFOUND = lazy_compile(
    r"(?i:\b(?:unable to|could not|couldn'?t|cannot|can'?t|failed to) (?:retrieve|find|get|read|"
    r"determine|obtain|fetch)\b|\bmissing\b|\bnot (?:found|present|set)\b|\bno such\b|"
    r"\bdoes(?: not|n'?t) have\b|\bwithout\b)")
#: The label the GPU Operator marks a GPU node with: the node it reads the others from.
_GPU_NODE = "nvidia.com/gpu.present"
#: A log's last lines within which the line must stand.
_TAIL = 3


def unfound_label(line: str) -> str | None:
    """The label key an error line says it could not find, None for any other line."""
    if not _UNFOUND.search(line):
        return None
    found = _NAMED.search(line)
    return (found["a"] or found["b"]) if found is not None else None


def _sets(patterns: Sequence[str], key: str) -> bool:
    return any(fnmatch.fnmatchcase(key, p) for p in patterns)


def _read_nodes(facts: ClusterFacts) -> Sequence[tuple[str, Mapping[str, str]]]:
    """The nodes a cluster component reads labels from: the GPU nodes where the operator
    marked them, else every node."""
    nodes = [(name, n.metadata.labels) for name, n in sorted(facts.nodes.items())]
    gpu = [(name, labels) for name, labels in nodes if labels.get(_GPU_NODE) == "true"]
    return gpu or nodes


def _deployed(facts: ClusterFacts, setter: str, patterns: Sequence[str]) -> bool:
    """The setter runs somewhere or has labelled some node."""
    if setter in facts.cluster_side or any(setter in comps for comps in facts.pods_by_node.values()):
        return True
    return any(_sets(patterns, k) for n in facts.nodes.values() for k in n.metadata.labels)


def labels_unfound(facts: ClusterFacts, setter: str) -> Iterator[Finding]:
    """``setter``'s label that a cluster component's latest error line says it could not
    find on a node that indeed lacks it."""
    if not facts.has("nodes") or not facts.nodes:
        return
    patterns = facts.catalog.get(setter).sets_labels
    if not patterns or not _deployed(facts, setter, patterns):
        return
    nodes = _read_nodes(facts)
    for reader, pods in sorted(facts.cluster_side.items()):
        if reader == setter:
            continue
        for sp in pods:
            for log in facts.cluster_logs.get(sp.key, ()):
                tail = [line for line in log.lines[-_TAIL * 4:] if line.strip()][-_TAIL:]
                for line in tail:
                    key = unfound_label(line)
                    if key is None or not _sets(patterns, key):
                        continue
                    lacking = [name for name, labels in nodes if key not in labels]
                    if not lacking:
                        continue  # the node carries it now: a stale line
                    shown = f"no {key} on {', '.join(lacking[:3])}"
                    yield problem(
                        setter, "node_labels_missing",
                        Evidence(log.path, line.strip()),
                        Evidence(f"node/{lacking[0]} metadata.labels", shown),
                        specificity=35, explains=reader, label=key, waiting=reader)
                    return


@cluster_check("nfd")
def nfd_label_unfound(facts: ClusterFacts) -> Iterator[Finding]:
    """A cluster component cannot find an NFD label on the GPU node it reads."""
    yield from labels_unfound(facts, "nfd")
