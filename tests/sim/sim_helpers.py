"""Readers for simulated bundles used by the simulator tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class Bundle:
    """Read access to a simulated bundle directory."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def items(self, resource: str) -> list[dict[str, Any]]:
        data = json.loads((self.root / "cluster" / f"{resource}.json").read_text())
        items: list[dict[str, Any]] = data["items"]
        return items

    def node(self, name: str) -> dict[str, Any]:
        return next(n for n in self.items("nodes") if n["metadata"]["name"] == name)

    def pods_on(self, node: str, prefix: str) -> list[dict[str, Any]]:
        return [
            p
            for p in self.items("pods")
            if p["spec"].get("nodeName") == node and p["metadata"]["name"].startswith(prefix)
        ]

    def pod_on(self, node: str, prefix: str) -> dict[str, Any]:
        pods = self.pods_on(node, prefix)
        assert len(pods) == 1, f"expected one {prefix}* pod on {node}, found {len(pods)}"
        return pods[0]

    def log(self, pod: dict[str, Any], container: str, previous: bool = False) -> str:
        md = pod["metadata"]
        suffix = ".previous.log" if previous else ".log"
        return (self.root / "logs" / md["namespace"] / md["name"] / f"{container}{suffix}").read_text()

    def node_file(self, node: str, rel: str) -> Path:
        return self.root / "nodes" / node / rel

    def events(self, reason: str) -> list[dict[str, Any]]:
        return [e for e in self.items("events") if e["reason"] == reason]


def status_of(pod: dict[str, Any], container: str) -> dict[str, Any]:
    """containerStatuses or initContainerStatuses entry of `container`."""
    status = pod["status"]
    for entry in status.get("initContainerStatuses", []) + status.get("containerStatuses", []):
        if entry["name"] == container:
            return dict(entry)
    raise AssertionError(f"no status for container {container}")


def condition(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(c for c in obj["status"]["conditions"] if c["type"] == kind)
