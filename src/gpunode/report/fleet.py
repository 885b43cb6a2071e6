"""The fleet view shared by every reporter: one row per affected node, worst first.

Severity order (issue 13): hardware faults that need a drain come first, then
root causes bottom-up by layer, then causes that hit more nodes. Identical root
causes on many nodes collapse into one group unless the caller wants them all.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime

import msgspec

from gpunode.model import STATUS_RANK, NodeReport, Report, RootCause, Status

# A cause shared by more nodes than this is shown as one "N nodes: …" row.
GROUP_THRESHOLD = 2
CLUSTER = "(cluster)"
# Commands that only make sense on the node itself (or reach it over ssh).
_NODE_ONLY_PREFIXES = ("ssh ", "nvidia-smi", "dmesg", "journalctl", "modprobe", "lsmod", "uname", "cat /")


class FleetRow(msgspec.Struct, frozen=True):
    """One root cause on one node (or one group of nodes sharing it)."""

    nodes: tuple[str, ...]
    component: str
    layer: int
    cause: str
    title: str
    status: Status
    since: str | None
    blocked: int
    drain: bool

    @property
    def label(self) -> str:
        return self.nodes[0] if len(self.nodes) == 1 else f"{len(self.nodes)} nodes"


def needs_drain(rc: RootCause) -> bool:
    """A fault the knowledge base answers with a drain: the node must leave service first."""
    return any(step.startswith("kubectl drain") for step in rc.next_steps)


def node_only(step: str) -> bool:
    """True for commands that run on the node (directly or over ssh), not against the API."""
    return step.startswith(_NODE_ONLY_PREFIXES)


def blocked_by(node: NodeReport, rc: RootCause) -> list[str]:
    return [c.component for c in node.components if rc.component in c.blocked_by]


def rows(report: Report, *, expand: bool) -> list[FleetRow]:
    """Every root cause as a fleet row, worst first; shared causes grouped unless ``expand``."""
    single = [
        _row((CLUSTER,), rc, len(_cluster_blocked(report, rc))) for rc in report.cluster.root_causes
    ] + [_row((n.name,), rc, len(blocked_by(n, rc))) for n in report.nodes for rc in n.root_causes]
    counts = Counter(r.cause for r in single)
    if not expand:
        single = _grouped(single, counts)
    return sorted(single, key=lambda r: _severity(r, counts))


def _cluster_blocked(report: Report, rc: RootCause) -> set[str]:
    return {n.name for n in report.nodes for c in n.components if rc.component in c.blocked_by}


def _row(nodes: tuple[str, ...], rc: RootCause, blocked: int) -> FleetRow:
    return FleetRow(
        nodes=nodes,
        component=rc.component,
        layer=rc.layer,
        cause=rc.cause,
        title=rc.title,
        status=rc.status,
        since=rc.since,
        blocked=blocked,
        drain=needs_drain(rc),
    )


def _grouped(single: Sequence[FleetRow], counts: Counter[str]) -> list[FleetRow]:
    by_key: dict[tuple[str, str], list[FleetRow]] = defaultdict(list)
    for r in single:
        by_key[(r.cause, r.component)].append(r)
    out: list[FleetRow] = []
    for members in by_key.values():
        if len(members) <= GROUP_THRESHOLD:
            out += members
            continue
        stamps = [m.since for m in members if m.since]
        out.append(
            msgspec.structs.replace(
                members[0],
                nodes=tuple(n for m in members for n in m.nodes),
                since=min(stamps) if stamps else None,
                blocked=max(m.blocked for m in members),
            )
        )
    return out


def _severity(r: FleetRow, counts: Counter[str]) -> tuple[int, int, int, int, str, str]:
    status = 0 if r.status == Status.FAILED else 1
    return (0 if r.drain else 1, r.layer, -counts[r.cause], status, r.cause, r.nodes[0])


def healthy(report: Report) -> dict[Status, list[str]]:
    """Nodes without a root cause, by status (ok, unknown, …)."""
    out: dict[Status, list[str]] = defaultdict(list)
    for n in report.nodes:
        if not n.root_causes:
            out[n.status].append(n.name)
    return dict(out)


def healthy_worst_first(report: Report) -> list[tuple[Status, list[str]]]:
    """``healthy`` in every reporter's order: failed, degraded, unknown, then ok."""
    return sorted(healthy(report).items(), key=lambda kv: STATUS_RANK[kv[0]])


def worst_first(nodes: Sequence[NodeReport]) -> list[NodeReport]:
    """Broken nodes before healthy ones (a root cause first, then by status: failed,
    degraded, unknown, ok), otherwise in the report's order."""
    return sorted(nodes, key=lambda n: (0 if n.root_causes else 1, STATUS_RANK[n.status]))


def _parse(stamp: str | None) -> datetime | None:
    if not stamp:
        return None
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def age(stamp: str | None, reference: str | None = None, now: datetime | None = None) -> str:
    """How long ago ``stamp`` was, as kubectl prints ages (45s, 5m30s, 5m, 3h, 2d4h, 2d, 3y):
    counted to ``reference`` (the collection time: a saved bundle's ages stay those it had)
    or else to now; ``-`` when there is none."""
    when = _parse(stamp)
    if when is None:
        return "-"
    until = _parse(reference) or now or datetime.now(UTC)
    return human_duration(int((until - when).total_seconds()))


def human_duration(seconds: int) -> str:
    """Kubernetes' HumanDuration (apimachinery util/duration), which kubectl's AGE column uses."""
    if seconds < -1:
        return "<invalid>"
    seconds = max(seconds, 0)
    minutes, hours, days = seconds // 60, seconds // 3600, seconds // 86400
    steps = (
        (seconds < 120, f"{seconds}s"),
        (minutes < 10, _two(minutes, "m", seconds % 60, "s")),
        (minutes < 180, f"{minutes}m"),
        (hours < 8, _two(hours, "h", minutes % 60, "m")),
        (hours < 48, f"{hours}h"),
        (hours < 24 * 8, _two(days, "d", hours % 24, "h")),
        (hours < 24 * 365 * 2, f"{days}d"),
        (hours < 24 * 365 * 8, _two(days // 365, "y", days % 365, "d")),
    )
    return next((text for fits, text in steps if fits), f"{days // 365}y")


def _two(big: int, big_unit: str, small: int, small_unit: str) -> str:
    return f"{big}{big_unit}{small}{small_unit}" if small else f"{big}{big_unit}"


def short_time(stamp: str | None) -> str:
    """2025-05-20T09:15:00Z -> 2025-05-20 09:15 (UTC, as the API gives it)."""
    if not stamp:
        return "-"
    return stamp.replace("T", " ")[:16]


class UnknownWhy(msgspec.Struct, frozen=True):
    """One reason some components were left unknown, on some nodes."""

    text: str
    components: tuple[str, ...]
    nodes: tuple[str, ...]


def unknown_reasons(nodes: Sequence[NodeReport]) -> list[UnknownWhy]:
    """The nodes' missing data grouped by what was missing and why (most nodes first)."""
    from gpunode.unseen import label, short_reason

    comps: dict[str, set[str]] = defaultdict(set)
    names: dict[str, list[str]] = defaultdict(list)
    for node in nodes:
        for entry in node.missing_data:
            text = f"no {label(entry.data)}: {short_reason(entry.reason)}"
            comps[text].update(entry.components)
            if node.name not in names[text]:
                names[text].append(node.name)
    ordered = sorted(names, key=lambda t: (-len(names[t]), t))
    return [UnknownWhy(t, tuple(sorted(comps[t])), tuple(names[t])) for t in ordered]


def not_read_reasons(nodes: Sequence[NodeReport]) -> list[UnknownWhy]:
    """The ok nodes' data left unread on purpose, one entry per reason: what was not read
    (``text``: the labels joined, then the reason) and on which nodes."""
    from gpunode.unseen import label, short_reason

    what: dict[str, list[str]] = defaultdict(list)
    names: dict[str, list[str]] = defaultdict(list)
    for node in nodes:
        for entry in node.missing_data:
            reason = short_reason(entry.reason)
            if label(entry.data) not in what[reason]:
                what[reason].append(label(entry.data))
            if node.name not in names[reason]:
                names[reason].append(node.name)
    ordered = sorted(names, key=lambda t: (-len(names[t]), t))
    return [UnknownWhy(f"not read: {', '.join(what[t])} ({t})", (), tuple(names[t])) for t in ordered]
