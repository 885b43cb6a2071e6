"""Why a component is unknown: the data its checks needed, and why that data is absent.

Checks name what they need (``cmd/nvidia-smi-q.xml``, ``cluster/pods``, ``node``);
without it a component is ``unknown``. The reason is the collector's own when it
recorded one (the manifest's ``missing``: "pods/exec create forbidden (403)"),
otherwise what the bundle shows (no folder for the node, no such file in it).
Pure functions over the manifest and the bundle's index: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from gpunode.facts import Manifest
from gpunode.model import MissingInput
from gpunode.relazy import lazy_compile

#: Plain names of the data checks need, for summaries.
LABELS: Mapping[str, str] = {
    "cmd/nvidia-smi-q.xml": "nvidia-smi output",
    "cmd/gpunode-probe.json": "gpunode probe facts",
    "cmd/lsmod.txt": "lsmod output",
    "metrics/dcgm-exporter.prom": "DCGM exporter metrics",
    "cluster/pods": "pod list",
    "cluster/csinodes": "CSINode list",
    "node": "Node object",
}
#: Data only a gpunode agent or probe supplies: its absence is named only when nothing else is.
OPTIONAL = frozenset({"cmd/gpunode-probe.json"})
_STATUS_DETAIL = lazy_compile(r"^(?P<head>.*?) \((?P<code>\d{3})\b[^)]*\)?.*$", re.DOTALL)


def label(need: str) -> str:
    return LABELS.get(need, need)


def bundle_path(need: str, node: str | None) -> str:
    """Where the bundle holds the data a check names."""
    kind, _, rest = need.partition("/")
    if kind == "cluster":
        return f"cluster/{rest}.json"
    if kind == "node" or node is None:
        return "cluster/nodes.json"
    return f"nodes/{node}/{need}"


def missing_data(unknown_by_need: Mapping[str, Sequence[str]], node: str | None,
                 manifest: Manifest, node_dirs: frozenset[str],
                 not_fetched: str = "") -> tuple[MissingInput, ...]:
    """One entry per absent need (with the components it left unknown): where the data
    would be in the bundle and why it is not there. ``not_fetched`` says why the node's
    files were left out by design (list-first collection judged the node healthy)."""
    lost = {m.path: m.reason for m in manifest.missing}
    out = []
    for need in sorted(unknown_by_need):
        path = bundle_path(need, node)
        by_design = not_fetched if path.startswith("nodes/") else ""
        reason = lost.get(path) or by_design or _bundle_reason(need, path, node, node_dirs)
        out.append(MissingInput(need, path, reason, tuple(sorted(unknown_by_need[need]))))
    return tuple(out)


def _bundle_reason(need: str, path: str, node: str | None, node_dirs: frozenset[str]) -> str:
    if need == "node":
        return f"{node} is not in cluster/nodes.json" if node else "not in cluster/nodes.json"
    if need.startswith("cluster/"):
        return f"the bundle has no {path}"
    if node is not None and node not in node_dirs:
        return f"the bundle has no nodes/{node}/ folder"
    return f"the node folder has no {need}"


def named_needs(needs: Iterable[str]) -> list[str]:
    """The needs worth naming: optional ones (agent facts) only when nothing else is missing."""
    unique = list(dict.fromkeys(needs))
    return [n for n in unique if n not in OPTIONAL] or unique


def unknown_summary(needs: Iterable[str], node: str | None, data: Sequence[MissingInput]) -> str:
    """``no nvidia-smi output for gpu-wk-01: pods/exec create forbidden (403)`` (at most two)."""
    wanted = set(named_needs(needs))
    entries = [d for d in data if d.data in wanted]
    lost_first = sorted(entries, key=lambda d: d.reason.startswith(("the bundle", "the node folder")))
    parts = [_one(d, node) for d in lost_first[:2]]
    return "; ".join(parts) if parts else "no evidence collected"


def _one(entry: MissingInput, node: str | None) -> str:
    where = f" for {node}" if node and entry.data.partition("/")[0] in ("cmd", "files", "metrics") else ""
    return f"no {label(entry.data)}{where}: {short_reason(entry.reason)}"


def short_reason(reason: str) -> str:
    """A collector reason without the API's long message: ``forbidden to list pods cluster-wide (403)``."""
    match = _STATUS_DETAIL.match(reason)
    if match is None:
        return reason if len(reason) <= 160 else reason[:157] + "..."
    return f"{match['head']} ({match['code']})"
