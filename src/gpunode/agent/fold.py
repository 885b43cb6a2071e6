"""Fold the agents' facts into a bundle, so the cluster CLI judges what the nodes saw.

Where the agent DaemonSet runs, the live collector fetches each node's probe
through the API server's pod proxy (``facts_proxy_path``) and calls
``fold_agent_facts`` on the bundle directory before diagnosing it: each node
gets ``nodes/<node>/cmd/gpunode-probe.json`` plus the raw texts the probe read
(``cmd/dmesg.txt``, ``files/proc/modules``, ...), the same layout
``write_probe_bundle`` writes on the node itself. Observations the collector
already wrote for that node are kept; the probe fills in the rest.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import msgspec

from gpunode.bundle.kube import Pod
from gpunode.errors import BundleError, ParseError
from gpunode.probe.result import ProbeResult, load_probe_json, probe_json
from gpunode.redact import redact_bytes
from gpunode.safety import inside

log = logging.getLogger(__name__)

AGENT_NAMESPACE = "gpunode"
AGENT_PORT = 9808
AGENT_LABEL = ("app.kubernetes.io/name", "gpunode-agent")
AGENT_SELECTOR = f"{AGENT_LABEL[0]}={AGENT_LABEL[1]}"
PROBE_FILE = "cmd/gpunode-probe.json"
#: The agent's history of its node (``/history``), where a bundle keeps it (docs/bundle-format.md).
HISTORY_FILE = "cmd/gpunode-history.json"


def node_dir_name(node: str) -> str:
    """The folder a node's observations live in (as ``write_probe_bundle`` names it)."""
    return node.replace("/", "_") or "unknown-node"


def probe_files(result: ProbeResult) -> dict[str, bytes]:
    """The probe's bundle layout: ``gpunode-probe.json`` plus every raw text it read."""
    base = f"nodes/{node_dir_name(result.node_name)}/"
    files = {base + "cmd/gpunode-probe.json": probe_json(result)}
    for rel, text in result.raw.items():
        if rel.split("/", 1)[0] in ("cmd", "files") and ".." not in rel.split("/"):
            files[base + rel] = text.encode()
    return files


def facts_proxy_path(pod: str, namespace: str = AGENT_NAMESPACE, port: int = AGENT_PORT) -> str:
    """API server path of an agent's ``/facts?raw=1`` through the pod proxy (needs ``get pods/proxy``)."""
    return f"/api/v1/namespaces/{namespace}/pods/{pod}:{port}/proxy/facts?raw=1"


def history_proxy_path(pod: str, namespace: str = AGENT_NAMESPACE, port: int = AGENT_PORT) -> str:
    """API server path of an agent's ``/history`` through the pod proxy."""
    return f"/api/v1/namespaces/{namespace}/pods/{pod}:{port}/proxy/history"


def agent_pods_by_node(pods: Iterable[Pod]) -> dict[str, str]:
    """Running, ready agent pods by node name (the pods to ask for facts)."""
    out: dict[str, str] = {}
    for pod in pods:
        if pod.metadata.labels.get(AGENT_LABEL[0]) != AGENT_LABEL[1] or not pod.spec.node_name:
            continue
        statuses = pod.status.container_statuses
        if pod.status.phase == "Running" and statuses and all(s.ready for s in statuses):
            out[pod.spec.node_name] = pod.metadata.name
    return out


@dataclass
class FoldResult:
    """Which nodes got agent facts, and why the others did not (for manifest warnings)."""

    folded: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)

    def warnings(self) -> list[str]:
        return [f"node {node}: agent facts not used: {why}" for node, why in sorted(self.skipped.items())]


def fold_agent_facts(
    bundle_dir: Path,
    facts_by_node: Mapping[str, bytes],
    *,
    max_age_s: float | None = None,
    now: datetime | None = None,
) -> FoldResult:
    """Write each node's agent facts (``/facts?raw=1`` bodies) into ``bundle_dir``."""
    outcome = FoldResult()
    for node, data in sorted(facts_by_node.items()):
        why = _unusable_node_name(node)
        result = None if why else _decode(data)
        if result is None:
            outcome.skipped[node] = why or "not a gpunode probe result"
            continue
        age = _age_s(result, now or datetime.now(UTC))
        if max_age_s is not None and (age is None or age > max_age_s):
            outcome.skipped[node] = f"facts collected at {result.collected_at} are too old"
            continue
        _write_node(Path(bundle_dir), node, result)
        outcome.folded.append(node)
    return outcome


def _decode(data: bytes) -> ProbeResult | None:
    try:
        return load_probe_json(data)
    except ParseError as exc:
        log.warning("agent facts: %s", exc)
        return None


def _unusable_node_name(node: str) -> str:
    if not node or "/" in node or node in (".", ".."):
        return f"unusable node name {node!r}"
    return ""


def _age_s(result: ProbeResult, now: datetime) -> float | None:
    try:
        collected = datetime.fromisoformat(result.collected_at.replace("Z", "+00:00"))
    except ValueError:
        return None
    if collected.tzinfo is None:
        collected = collected.replace(tzinfo=UTC)
    return (now - collected).total_seconds()


def _write_node(bundle_dir: Path, node: str, result: ProbeResult) -> None:
    """The probe file always; raw texts only where the collector wrote nothing."""
    if result.node_name != node:
        log.warning("agent on %s reports node name %s; filing it under %s", node, result.node_name, node)
    files = probe_files(_renamed(result, node))
    for rel, data in files.items():
        path = inside(bundle_dir, rel)
        if path.exists() and not rel.endswith(PROBE_FILE):
            continue
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(redact_bytes(data, rel))  # the agent's raw texts: configs, logs
        except OSError as exc:
            raise BundleError(f"{path}: cannot write: {exc.strerror or exc}") from None


def _renamed(result: ProbeResult, node: str) -> ProbeResult:
    return result if result.node_name == node else msgspec.structs.replace(result, node_name=node)
