"""``diagnose --component ID[,ID]`` and ``--layer N[,N]``: what a report shows, never its verdict.

The filter narrows the report to the chosen components and layers (root causes, component
rows, shared-cause groups and the GPU workloads they lead to); the exit code stays the whole
report's, and one line on stderr says what it hid, so a filter never hides a failure silently.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

import msgspec

from gpunode.errors import UsageError
from gpunode.model import LAYER_NAMES, ClusterReport, NodeReport, Report, RootCause
from gpunode.report.options import RenderOptions


@dataclass(frozen=True)
class Shown:
    """The components and layers a user asked to see (empty: no narrowing by that)."""

    components: frozenset[str] = frozenset()
    layers: frozenset[int] = frozenset()

    @property
    def active(self) -> bool:
        return bool(self.components or self.layers)

    def shows(self, component: str | None, layer: int | None) -> bool:
        """Both filters must hold where given; a workload naming no component shows only
        when nothing narrows by component."""
        if self.components and component not in self.components:
            return False
        return not self.layers or layer in self.layers


def _items(values: Sequence[str] | None) -> list[str]:
    """Comma-separated and repeatable: ``--layer 1,2 --layer 3``."""
    return [part.strip() for v in values or () for part in v.split(",") if part.strip()]


def parse_shown(components: Sequence[str] | None, layers: Sequence[str] | None) -> Shown:
    """The filters from the command line; an unknown component id or layer is exit 2 naming it."""
    from gpunode.catalog import load_catalog

    known = load_catalog().ids
    chosen = _items(components)
    unknown = [c for c in chosen if c not in known]
    if unknown:
        raise UsageError(f"--component: unknown component {', '.join(unknown)}; known: {', '.join(known)}")
    numbers: set[int] = set()
    for text in _items(layers):
        if not text.isdigit() or int(text) not in LAYER_NAMES:
            raise UsageError(f"--layer {text!r}: layers are {min(LAYER_NAMES)} to {max(LAYER_NAMES)}")
        numbers.add(int(text))
    return Shown(frozenset(chosen), frozenset(numbers))


@dataclass
class _Hidden:
    causes: int = 0
    workloads: int = 0


def narrow(report: Report, shown: Shown) -> tuple[Report, str | None]:
    """The report as the filter shows it, and the one line saying what it hid (None: nothing)."""
    if not shown.active:
        return report, None
    from gpunode.catalog import load_catalog

    layer_of = {c.id: c.layer for c in load_catalog().components}
    hidden = _Hidden()
    cluster = _narrow_cluster(report.cluster, shown, hidden)
    nodes = tuple(_narrow_node(n, shown, hidden) for n in report.nodes)
    groups = tuple(g for g in report.groups if shown.shows(g.component, layer_of.get(g.component)))
    workloads = []
    for w in report.gpu_workloads:
        if shown.shows(w.component, layer_of.get(w.component or "")):
            workloads.append(w)
        elif w.failing:
            hidden.workloads += 1
    narrowed = msgspec.structs.replace(report, cluster=cluster, nodes=nodes, groups=groups,
                                       gpu_workloads=tuple(workloads))
    return narrowed, _hidden_line(hidden, shown)


def _keep(causes: tuple[RootCause, ...], shown: Shown, hidden: _Hidden) -> tuple[RootCause, ...]:
    kept = tuple(rc for rc in causes if shown.shows(rc.component, rc.layer))
    hidden.causes += len(causes) - len(kept)
    return kept


def _narrow_cluster(cluster: ClusterReport, shown: Shown, hidden: _Hidden) -> ClusterReport:
    causes = _keep(cluster.root_causes, shown, hidden)
    comps = tuple(c for c in cluster.components if shown.shows(c.component, c.layer))
    return msgspec.structs.replace(cluster, root_causes=causes, components=comps)


def _narrow_node(node: NodeReport, shown: Shown, hidden: _Hidden) -> NodeReport:
    causes = _keep(node.root_causes, shown, hidden)
    comps = tuple(c for c in node.components if shown.shows(c.component, c.layer))
    return msgspec.structs.replace(node, root_causes=causes, components=comps)


def _what(shown: Shown) -> str:
    parts = []
    if shown.components:
        parts.append("components")
    if shown.layers:
        parts.append("layers")
    return " or ".join(parts)


def _hidden_line(hidden: _Hidden, shown: Shown) -> str | None:
    """``3 root causes on components not shown`` (and failing GPU workloads), or None."""
    parts = []
    if hidden.causes:
        parts.append(f"{hidden.causes} root cause{'s' if hidden.causes != 1 else ''}")
    if hidden.workloads:
        parts.append(f"{hidden.workloads} failing GPU workload{'s' if hidden.workloads != 1 else ''}")
    if not parts:
        return None
    return f"{' and '.join(parts)} on {_what(shown)} not shown (the exit code counts them)"


def marked(options: RenderOptions, shown: Shown) -> RenderOptions:
    """Render options that say the report is narrowed (a table then reads "none shown")."""
    return msgspec.structs.replace(options, narrowed=True) if shown.active else options


def warn_hidden(line: str | None) -> None:
    """The filter's one line on stderr, before the report."""
    if line:
        print(f"diagnose: {line}", file=sys.stderr, flush=True)
