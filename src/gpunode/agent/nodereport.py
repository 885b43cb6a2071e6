"""``GPUNodeReport``: each agent's verdict and compact facts, one cluster-scoped object per node.

Node Feature Discovery's nfd-worker publishes a ``NodeFeature`` object per node the
same way: the cluster side then lists one kind instead of visiting every node.
The agent writes its node's report through the status subresource when the
verdict changes and at least every ``--report-interval`` seconds; the live
collector lists the reports with the other kinds and fetches a node's own extras
(execs, scrapes, logs) only when its report is missing, stale or not healthy.

The object (CRD in ``deploy/agent/gpunodereport-crd.yaml``)::

    apiVersion: gpunode.io/v1alpha1
    kind: GPUNodeReport
    metadata: {name: <node>, ownerReferences: [<its Node>]}
    spec: {nodeName: <node>}
    status: {verdict, rootCause, message, rootCauses[], components[], probedAt,
             publishedAt, agentVersion, trends[], facts: <the probe JSON without raw texts>}
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Protocol

import msgspec

from gpunode import __version__
from gpunode.agent.condition import condition_for, primary_root_cause
from gpunode.fleet.model import Trend
from gpunode.model import NodeReport

log = logging.getLogger(__name__)

GROUP: Final = "gpunode.io"
VERSION: Final = "v1alpha1"
KIND: Final = "GPUNodeReport"
PLURAL: Final = "gpunodereports"
API_VERSION: Final = f"{GROUP}/{VERSION}"
COLLECTION_PATH: Final = f"/apis/{GROUP}/{VERSION}/{PLURAL}"
FIELD_MANAGER: Final = "gpunode-agent"
JSON_PATCH: Final = "application/json-patch+json"
#: The agent republishes an unchanged verdict at least this often (``--report-interval``).
DEFAULT_PUBLISH_INTERVAL_S: Final = 300.0
#: A report whose facts are older than this is stale (three missed publications at the
#: default interval): the collector then reads that node itself.
REPORT_MAX_AGE_S: Final = 900.0
#: Verdicts a report may carry; only ``ok`` lets the collector skip the node's extras.
HEALTHY: Final = "ok"


def report_path(node: str) -> str:
    return f"{COLLECTION_PATH}/{node}"


def _utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Verdict(msgspec.Struct, frozen=True):
    """What a report says about its node, compared between cycles to detect a change."""

    verdict: str
    root_cause: str
    message: str
    root_causes: tuple[tuple[str, str, str], ...]
    components: tuple[tuple[str, str], ...]


def verdict_of(node: NodeReport | None, stale_message: str = "") -> Verdict:
    """The node's verdict as the ``GPUStackHealthy`` condition states it: ``ok`` when no root
    cause and layers 0–2 were seen working, the primary root cause's status when there is
    one, else (or without a fresh judgement) ``unknown``."""
    if stale_message or node is None:
        return Verdict("unknown", "", stale_message or "no probe result yet", (), ())
    condition = condition_for(node)
    primary = primary_root_cause(node)
    verdict = {"True": HEALTHY, "Unknown": "unknown"}.get(condition.status)
    causes = tuple((rc.component, rc.cause, str(rc.status)) for rc in node.root_causes)
    comps = tuple((c.component, str(c.status)) for c in node.components)
    return Verdict(verdict or str(primary.status if primary else "unknown"),
                   primary.cause if primary else "", condition.message, causes, comps)


def report_status(verdict: Verdict, facts_json: bytes, published_at: str,
                  trends: tuple[Trend, ...] = ()) -> dict[str, Any]:
    """The ``status`` of a GPUNodeReport: the verdict, compactly, the trends over the agent's
    history (gpunode.fleet.history) and the probe's facts."""
    facts: dict[str, Any] = msgspec.json.decode(facts_json)
    return {
        "verdict": verdict.verdict,
        "rootCause": verdict.root_cause,
        "message": verdict.message,
        "rootCauses": [{"component": c, "cause": k, "status": s} for c, k, s in verdict.root_causes],
        "components": [{"component": c, "status": s} for c, s in verdict.components],
        "probedAt": str(facts.get("collected_at", "")),
        "publishedAt": published_at,
        "agentVersion": __version__,
        "trends": msgspec.to_builtins(trends),  # omits what a trend leaves unset
        "facts": facts,
    }


def report_object(node: str, node_uid: str | None) -> dict[str, Any]:
    """A new report for ``node``, owned by its Node (deleted with it) when the uid is known."""
    meta: dict[str, Any] = {"name": node, "labels": {"app.kubernetes.io/managed-by": FIELD_MANAGER}}
    if node_uid:
        meta["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Node", "name": node, "uid": node_uid}
        ]
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": meta, "spec": {"nodeName": node}}


class ReportApi(Protocol):
    """The calls that publish a report (see deploy/agent/rbac.yaml)."""

    def get_report(self, name: str) -> dict[str, Any] | None:
        """GET the report; None when there is none (404)."""
        ...

    def create_report(self, body: dict[str, Any]) -> None:
        """POST a new report (metadata and spec; the status goes through /status)."""
        ...

    def set_report_status(self, name: str, status: dict[str, Any]) -> None:
        """PATCH .../<name>/status, replacing the whole status (JSON patch ``add /status``)."""
        ...


@dataclass
class _Published:
    verdict: Verdict
    at: float


class ReportPublisher:
    """Publishes one node's report on change and at least every ``interval_s``.

    Never raises: a refused call (no RBAC, no CRD) is logged once as a warning and
    retried after ``interval_s`` (other failures at the next cycle); the agent keeps
    probing and serving /metrics.
    """

    def __init__(self, api: ReportApi, node: str, interval_s: float = DEFAULT_PUBLISH_INTERVAL_S,
                 *, clock: Callable[[], float], now: Callable[[], str] = _utc_now) -> None:
        self._api, self._node, self.interval_s = api, node, interval_s
        self._clock, self._now = clock, now
        self._last: _Published | None = None
        self._exists = False
        self._retry_at = 0.0
        self._warned = False
        self.published = 0

    def due(self, verdict: Verdict) -> bool:
        """A changed verdict, or an unchanged one older than the interval."""
        now = self._clock()
        if now < self._retry_at:
            return False
        last = self._last
        return last is None or last.verdict != verdict or now - last.at >= self.interval_s

    def publish(self, verdict: Verdict, facts_json: bytes, node_uid: str | None,
                trends: tuple[Trend, ...] = ()) -> bool:
        """Create the report if needed and set its status; False when the API refused."""
        try:
            if not self._exists:
                self._ensure(node_uid)
            self._api.set_report_status(self._node, report_status(verdict, facts_json, self._now(), trends))
        except Exception as exc:  # the agent must keep running whatever the API says
            self._failed(exc)
            return False
        self._last = _Published(verdict, self._clock())
        self.published += 1
        if self._warned:
            log.info("GPUNodeReport %s published again", self._node)
            self._warned = False
        return True

    def _ensure(self, node_uid: str | None) -> None:
        if self._api.get_report(self._node) is None:
            self._api.create_report(report_object(self._node, node_uid))
        self._exists = True

    def _failed(self, exc: Exception) -> None:
        code = getattr(exc, "code", 0)
        if code == 404:  # deleted meanwhile (or the CRD is missing): create it next time
            self._exists = False
        self._retry_at = self._clock() + (self.interval_s if code in (401, 403, 404) else 0.0)
        if not self._warned:
            log.warning("cannot publish GPUNodeReport %s (%s); retrying every %gs, the agent keeps "
                        "probing and serving /metrics (RBAC and CRD: deploy/agent)",
                        self._node, exc, self.interval_s)
            self._warned = True
        else:
            log.debug("GPUNodeReport %s still not published: %s", self._node, exc)
