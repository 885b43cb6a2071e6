"""List first, then visit only the suspect nodes: which GPU nodes get their extras, and why.

The cluster lists (nodes, pods, events, DaemonSets, custom resources) and the
agents' ``GPUNodeReport`` objects cost one call per 500 objects. Every GPU node
is judged from them first: a fresh report's facts are folded into the bundle
as the node's probe result and the normal engine diagnoses the node from the
lists and those facts. Only nodes where that is not enough get their extras
(execs, exporter scrapes, agent facts):

- the verdict from the lists (and report facts) is not healthy: a root cause,
  or a failed or degraded component;
- the report says the node is not ``ok``;
- agents run in the cluster but the node has no report, or a stale one (facts
  older than ``REPORT_MAX_AGE_S``);
- the node was named on the command line, or ``--deep``/``--all-nodes`` asked;
- without fresh report facts, the lists show the node has GPU links (NVLink, InfiniBand
  or RoCE) whose state only its own files hold: a list-first run never calls ok what
  it could not see.

Without agents (no reports, no agent pods) the first and the last rules apply, so a
cluster without agents costs lists plus the extras of its suspect nodes and of its
nodes with GPU links.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum

import msgspec

from gpunode.agent.nodereport import HEALTHY, REPORT_MAX_AGE_S
from gpunode.model import NodeReport

#: Why a node the lists find healthy still gets its extras: links no list shows.
LINKS_REASON = "links only its node files show"


class ExtrasPolicy(StrEnum):
    """Whose node extras a collection fetches (manifest ``extras_policy``)."""

    SUSPECT = "suspect"  # default: nodes the lists and reports do not settle
    DEEP = "deep"  # every chosen GPU node (--deep)
    ALL_NODES = "all-nodes"  # every GPU node, the full sweep (--all-nodes)


class _S(msgspec.Struct, rename="camel"):
    """camelCase API JSON, unknown fields ignored."""


class _Meta(_S):
    name: str = ""


class _Status(_S):
    verdict: str = ""
    root_cause: str = ""
    probed_at: str = ""
    facts: msgspec.Raw = msgspec.field(default_factory=lambda: msgspec.Raw(b""))


class ReportItem(_S):
    """The parts of a GPUNodeReport the collector reads."""

    metadata: _Meta = msgspec.field(default_factory=_Meta)
    status: _Status | None = None


class ReportPage(_S):
    items: list[ReportItem] = []


def decode_reports(body: bytes) -> list[ReportItem]:
    """The reports of one list page; a page that does not fit the shape gives none (the
    nodes then count as without a report and are visited)."""
    try:
        return msgspec.json.decode(body, type=ReportPage).items
    except (msgspec.DecodeError, msgspec.ValidationError):
        return []


@dataclass(frozen=True)
class NodeReportSeen:
    """One node's report as listed: its verdict, and whether its facts are fresh enough."""

    node: str
    verdict: str
    root_cause: str
    probed_at: str
    facts: bytes
    fresh: bool


def parse_time(text: str) -> datetime | None:
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def reports_by_node(items: Iterable[ReportItem], now: datetime,
                    max_age_s: float = REPORT_MAX_AGE_S) -> dict[str, NodeReportSeen]:
    """Each listed report by node name; a report without status or facts is not fresh."""
    out: dict[str, NodeReportSeen] = {}
    for item in items:
        status = item.status or _Status()
        probed = parse_time(status.probed_at) if status.probed_at else None
        facts = bytes(status.facts)
        fresh = (probed is not None and bool(facts)
                 and -60.0 <= (now - probed).total_seconds() <= max_age_s)
        out[item.metadata.name] = NodeReportSeen(item.metadata.name, status.verdict or "unknown",
                                                 status.root_cause, status.probed_at, facts, fresh)
    return out


def healthy(node: NodeReport) -> bool:
    """No root cause and no failed or degraded component (unknown is not a suspicion)."""
    return not node.root_causes and not any(c.status.is_problem for c in node.components)


def _problem(node: NodeReport) -> str:
    causes = [f"{rc.component} {rc.cause}" for rc in node.root_causes]
    if causes:
        return ", ".join(causes[:3])
    return ", ".join(f"{c.component} {c.status}" for c in node.components if c.status.is_problem)


@dataclass
class ExtrasPlan:
    """Which GPU nodes get extras (with the reason) and which were judged without them."""

    policy: ExtrasPolicy
    reasons: dict[str, str] = field(default_factory=dict)
    from_reports: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)

    @property
    def nodes(self) -> list[str]:
        return sorted(self.reasons)


def plan_extras(candidates: Sequence[str], *, policy: ExtrasPolicy, named: Collection[str],
                reports: Mapping[str, NodeReportSeen], agents_deployed: bool,
                verdicts: Mapping[str, NodeReport], links: Mapping[str, str] | None = None) -> ExtrasPlan:
    """The reason each candidate GPU node needs its extras; nodes without one are settled.
    ``links`` names the nodes whose GPU links the lists show but cannot judge (NVLink,
    InfiniBand/RoCE: ``gpunode.collect.plan.link_nodes``): without fresh report facts,
    which hold them, only the node's own files show their state."""
    plan = ExtrasPlan(policy)
    for node in candidates:
        seen = reports.get(node)
        if seen is not None and seen.fresh:
            plan.from_reports.append(node)
        elif seen is not None:
            plan.stale.append(node)
        if policy is not ExtrasPolicy.SUSPECT:
            plan.reasons[node] = f"--{policy}"
        elif node in named:
            plan.reasons[node] = "named on the command line"
        elif reason := suspicion(seen, agents_deployed, verdicts.get(node)):
            plan.reasons[node] = reason
        elif links and node in links and not (seen is not None and seen.fresh):
            plan.reasons[node] = f"{LINKS_REASON} ({links[node]})"
    return plan


def suspicion(seen: NodeReportSeen | None, agents_deployed: bool, verdict: NodeReport | None) -> str:
    """Why the lists and the node's report do not settle the node; empty when they do."""
    if seen is not None and seen.fresh and seen.verdict != HEALTHY:
        cause = f" ({seen.root_cause})" if seen.root_cause else ""
        return f"GPUNodeReport verdict {seen.verdict}{cause}"
    if verdict is not None and not healthy(verdict):
        return f"verdict from the lists: {verdict.status} ({_problem(verdict)})"
    if seen is not None and not seen.fresh:
        return f"GPUNodeReport stale (facts from {seen.probed_at or 'never'})"
    if seen is None and agents_deployed:
        return "no GPUNodeReport"
    return ""
