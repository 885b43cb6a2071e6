"""The ``GPUStackHealthy`` node condition, set the way Node Problem Detector sets its own.

The value is a pure function of the node's report; the keeper patches
``nodes/<name>/status`` only when that value differs from the last one it set
or found on the Node, so a steady node costs no API writes.

Reasons must be CamelCase for Kubernetes, so a cause code becomes its words
capitalised and joined: ``gpu_fallen_off_bus`` → ``GpuFallenOffBus``; a code
that would start with a digit is prefixed with ``Cause``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from gpunode.model import STATUS_RANK, NodeReport, RootCause, Status

log = logging.getLogger(__name__)

CONDITION_TYPE = "GPUStackHealthy"
MAX_MESSAGE_CHARS = 1024
FIELD_MANAGER = "gpunode-agent"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
# Components the probe observes directly; if none of them is ok, the verdict is Unknown.
PROBED_LAYERS = (0, 1, 2)


@dataclass(frozen=True)
class ConditionValue:
    """What the condition says: status True/False/Unknown, a CamelCase reason, a message."""

    status: str
    reason: str
    message: str


def camel_case(code: str) -> str:
    """A cause code as a Kubernetes reason: ``driver_library_mismatch`` → ``DriverLibraryMismatch``."""
    words = [w for w in re.split(r"[^A-Za-z0-9]+", code) if w]
    reason = "".join(w[0].upper() + w[1:] for w in words)
    if not reason or not reason[0].isalpha():
        reason = "Cause" + reason
    return reason


def primary_root_cause(node: NodeReport) -> RootCause | None:
    """The root cause to name: failed before degraded, then the lowest layer."""
    ranked = sorted(node.root_causes, key=lambda rc: (STATUS_RANK[rc.status], rc.layer))
    return ranked[0] if ranked else None


def condition_for(node: NodeReport | None) -> ConditionValue:
    """The condition a node report adds up to."""
    if node is None:
        return ConditionValue("Unknown", "NoProbeResult", "gpunode agent has no probe result yet")
    primary = primary_root_cause(node)
    if primary is not None:
        others = [rc.cause for rc in node.root_causes if rc is not primary]
        message = primary.title + (f" (also: {', '.join(others)})" if others else "")
        return ConditionValue("False", camel_case(primary.cause), message[:MAX_MESSAGE_CHARS])
    if not any(c.status == Status.OK for c in node.components if c.layer in PROBED_LAYERS):
        message = "gpunode agent could not observe the host, driver or container runtime"
        return ConditionValue("Unknown", "NotObserved", message)
    return ConditionValue("True", "NoRootCause", "gpunode agent found no root cause in the GPU stack")


def stale_condition(age_s: float) -> ConditionValue:
    """What to say when probes keep failing: the last verdict is too old to stand."""
    return ConditionValue("Unknown", "ProbeStale", f"no successful gpunode probe for {age_s:.0f}s")


def current_condition(node: Mapping[str, Any]) -> tuple[ConditionValue | None, str | None]:
    """The condition as found on a Node object, and its lastTransitionTime."""
    for cond in (node.get("status") or {}).get("conditions") or []:
        if cond.get("type") == CONDITION_TYPE:
            value = ConditionValue(
                str(cond.get("status", "")), str(cond.get("reason", "")), str(cond.get("message", ""))
            )
            return value, cond.get("lastTransitionTime")
    return None, None


class NodeApi(Protocol):
    """The two API calls the agent makes (see deploy/agent RBAC)."""

    def get_node(self, name: str) -> dict[str, Any]:
        """GET /api/v1/nodes/<name>, as JSON."""
        ...

    def patch_condition(self, name: str, condition: dict[str, str]) -> None:
        """PATCH /api/v1/nodes/<name>/status with one condition (strategic merge by type)."""
        ...


def _utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class ConditionKeeper:
    """Remembers the condition last set (or found) and patches only on change."""

    def __init__(self, api: NodeApi, node_name: str, now: Callable[[], str] = _utc_now) -> None:
        self._api = api
        self._node = node_name
        self._now = now
        self._last: ConditionValue | None = None
        self._transition: str | None = None

    @property
    def last(self) -> ConditionValue | None:
        return self._last

    def adopt(self, node: Mapping[str, Any]) -> None:
        """Take the Node's current condition as the last value (at start and on refresh)."""
        self._last, self._transition = current_condition(node)

    def update(self, value: ConditionValue) -> bool:
        """Patch when the value changed; True when a patch was sent. API errors propagate."""
        if value == self._last:
            return False
        now = self._now()
        moved = self._last is None or self._last.status != value.status or not self._transition
        transition = now if moved else str(self._transition)
        body = {
            "type": CONDITION_TYPE,
            "status": value.status,
            "reason": value.reason,
            "message": value.message,
            "lastHeartbeatTime": now,
            "lastTransitionTime": transition,
        }
        self._api.patch_condition(self._node, body)
        log.info("node condition %s=%s (%s): %s", CONDITION_TYPE, value.status, value.reason, value.message)
        self._last, self._transition = value, transition
        return True
