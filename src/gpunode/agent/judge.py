"""Judge one probe result with the normal engine, without touching the disk.

The probe's own bundle layout (what ``write_probe_bundle`` writes) is built as
a mapping of bundle paths to bytes and served through an in-memory
``BundleSource``; ``load_source`` and ``diagnose`` then run exactly as they do on
a bundle directory. Measured against writing a temporary bundle and loading it,
this is the cheaper path (docs/agent.md, "Judging in memory").
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import IO, Any

import msgspec

from gpunode.agent.condition import CONDITION_TYPE
from gpunode.agent.fold import node_dir_name, probe_files
from gpunode.bundle.load import load_source, read_node_observations
from gpunode.diagnose import diagnose
from gpunode.model import Report
from gpunode.probe.result import ProbeResult

BUNDLE_FORMAT = "gpunode-bundle/v1"


class MemorySource:
    """A bundle held in memory: relative POSIX paths to bytes."""

    def __init__(self, files: Mapping[str, bytes], location: str) -> None:
        self._files = dict(files)
        self.location = location

    def read(self, rel: str, limit: int | None = None) -> bytes | None:
        data = self._files.get(rel)
        return data if data is None or limit is None else data[:limit]

    def list(self, prefix: str) -> list[str]:
        base = prefix.rstrip("/") + "/"
        return sorted(rel for rel in self._files if rel.startswith(base))

    def open(self, rel: str) -> tuple[IO[bytes], int] | None:
        data = self._files.get(rel)
        return None if data is None else (io.BytesIO(data), len(data))


def node_list(node: Mapping[str, Any]) -> bytes:
    """``cluster/nodes.json`` holding this one node, without the agent's own condition.

    The condition is dropped so the agent never judges its previous verdict
    (a signature matching its message would otherwise keep it set forever).
    """
    item = dict(node)
    status = dict(item.get("status") or {})
    conditions = status.get("conditions") or []
    status["conditions"] = [c for c in conditions if c.get("type") != CONDITION_TYPE]
    item["status"] = status
    return msgspec.json.encode({"apiVersion": "v1", "kind": "NodeList", "items": [item]})


def manifest(result: ProbeResult) -> bytes:
    """The manifest a probe bundle carries: source ``probe``, partial when a step failed."""
    return msgspec.json.encode(
        {
            "format": BUNDLE_FORMAT,
            "collected_at": result.collected_at,
            "source": "probe",
            "partial": bool(result.errors),
            "warnings": list(result.errors),
        }
    )


def judge_probe(result: ProbeResult, node: Mapping[str, Any] | None = None) -> Report:
    """Diagnose this node from its probe result (and its Node object, when known)."""
    files = probe_files(result)
    files["manifest.json"] = manifest(result)
    if node is not None:
        files["cluster/nodes.json"] = node_list(node)
    source = MemorySource(files, f"probe:{result.node_name}")
    facts = load_source(source)
    return diagnose(facts, read_node_observations, [node_dir_name(result.node_name)])
