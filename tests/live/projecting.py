"""Project a bundle folder's cluster lists in place, as ``collect`` writes them (importable
as ``projecting``: tests/live is on sys.path)."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from gpunode.bundle.projection import project_configmap, project_item
from gpunode.collect.plan import plugin_config_maps, stack_pods
from gpunode.collect.slim import PodPage, PolicyPage


def plugin_sources(root: Path) -> set[tuple[str, str]]:
    """The ConfigMaps the collector would keep device-plugin configs of (collect/live.py)."""
    cluster = root / "cluster"
    pods = cluster / "pods.json"
    policies = cluster / "clusterpolicies.json"
    stack = stack_pods(msgspec.json.decode(pods.read_bytes(), type=PodPage).items) if pods.exists() else []
    names = [p.plugin_config for p in msgspec.json.decode(policies.read_bytes(), type=PolicyPage).items
             if p.plugin_config] if policies.exists() else []
    return plugin_config_maps(stack, names)


def project_bundle(root: Path) -> None:
    """Every ``cluster/<list>.json`` of ``root`` with its items projected."""
    plugin = plugin_sources(root)
    for path in sorted((root / "cluster").glob("*.json")):
        if path.name == "version.json":
            continue
        doc = json.loads(path.read_text())
        raw = [json.dumps(item).encode() for item in doc.get("items") or []]
        stem = path.stem
        kept = [project_configmap(i, plugin) if stem == "configmaps" else project_item(stem, i)
                for i in raw]
        doc["items"] = [json.loads(i) for i in kept]
        path.write_text(json.dumps(doc))
