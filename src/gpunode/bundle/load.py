"""Decode a bundle's cluster/*.json into slim facts, once.

Only the fields the checks read are decoded (see kube.py); the cyclic garbage
collector is paused while decoding because the object graph of a large list
only grows, so collection passes would be pure overhead.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from gpunode.bundle import kube
from gpunode.bundle.source import BundleSource, open_bundle
from gpunode.errors import BundleError
from gpunode.facts import MAX_LOG_BYTES, ClusterFacts, LogFile, Manifest, NodeObservations

T = TypeVar("T", bound=msgspec.Struct)

# resource file stem → (item Struct, accepted list kinds)
RESOURCES: dict[str, type[msgspec.Struct]] = {
    "nodes": kube.Node,
    "pods": kube.Pod,
    "daemonsets": kube.DaemonSet,
    "deployments": kube.Deployment,
    "events": kube.Event,
    "clusterpolicies": kube.CustomResource,
    "nicclusterpolicies": kube.CustomResource,
    "runtimeclasses": kube.RuntimeClass,
    "csidrivers": kube.GenericObject,
    "csinodes": kube.CSINode,
    "storageclasses": kube.GenericObject,
    "services": kube.GenericObject,
    "persistentvolumeclaims": kube.GenericObject,
    "servicemonitors": kube.GenericObject,
}

_LIST_DECODERS = {name: msgspec.json.Decoder(kube.list_type(t)) for name, t in RESOURCES.items()}
_MANIFEST_DECODER = msgspec.json.Decoder(Manifest)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause cyclic GC for bulk decoding; restores the previous state."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def load_bundle(path: Path) -> ClusterFacts:
    """Open and decode a bundle (directory or archive) into cluster facts."""
    source = open_bundle(path)
    return load_source(source)


def load_source(source: BundleSource) -> ClusterFacts:
    """Decode every cluster resource present; record which sections are missing."""
    manifest = _load_manifest(source)
    _require_bundle(source)
    lists: dict[str, tuple[Any, ...]] = {}
    missing: list[str] = []
    lost = {m.path for m in manifest.missing}
    with gc_paused():
        for name in RESOURCES:
            rel = f"cluster/{name}.json"
            items = None if rel in lost else _load_list(source, name)
            if items is None:
                missing.append(rel)
            else:
                lists[name] = items
    version = _load_version(source)
    return ClusterFacts.build(source, manifest, lists, tuple(missing), version)


def _require_bundle(source: BundleSource) -> None:
    """A typo'd path or an unrelated folder is an error, not an empty (healthy) cluster."""
    if source.read("manifest.json") is not None:
        return
    if any(source.list(top) for top in ("cluster", "nodes", "logs")):
        return
    raise BundleError(f"{source.location}: not a gpunode bundle or GPU Operator must-gather "
                      "(no manifest.json and nothing under cluster/, nodes/ or logs/)")


def _load_manifest(source: BundleSource) -> Manifest:
    data = source.read("manifest.json")
    if data is None:
        return Manifest(source="manual")
    try:
        manifest = _MANIFEST_DECODER.decode(data)
    except msgspec.DecodeError as exc:
        raise BundleError(f"{source.location}/manifest.json: {exc}") from exc
    if manifest.format and not manifest.format.startswith("gpunode-bundle/v1"):
        raise BundleError(
            f"{source.location}/manifest.json: unsupported format {manifest.format!r}"
            " (this gpunode reads gpunode-bundle/v1)"
        )
    return manifest


def _load_list(source: BundleSource, name: str) -> tuple[Any, ...] | None:
    rel = f"cluster/{name}.json"
    data = source.read(rel)
    if data is None:
        return None
    try:
        decoded = _LIST_DECODERS[name].decode(data)
    except msgspec.DecodeError as exc:
        raise BundleError(f"{source.location}/{rel}: {_short(exc)}") from exc
    kind = getattr(decoded, "kind", "")
    if kind and not kind.endswith("List"):
        raise BundleError(
            f"{source.location}/{rel}: expected a List (kubectl get {name} -A -o json), found kind {kind!r}"
        )
    items: tuple[Any, ...] = getattr(decoded, "items", ())
    return items


def _load_version(source: BundleSource) -> dict[str, str]:
    data = source.read("cluster/version.json")
    if data is None:
        return {}
    try:
        raw = msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        raise BundleError(f"{source.location}/cluster/version.json: {_short(exc)}") from exc
    if not isinstance(raw, dict):
        raise BundleError(f"{source.location}/cluster/version.json: expected an object")
    return {str(k): str(v) for k, v in raw.items()}


def _short(exc: Exception) -> str:
    return str(exc).splitlines()[0]


def read_node_observations(facts: ClusterFacts, node: str) -> NodeObservations:
    """Read one node's command output, files, metrics and its stack pods' logs."""
    source = facts.source
    prefix = f"nodes/{node}/"
    tables: dict[str, dict[str, str]] = {"cmd": {}, "files": {}, "metrics": {}}
    for rel in source.list(prefix.rstrip("/")):
        kind, _, name = rel[len(prefix) :].partition("/")
        if kind in tables and name:
            tables[kind][name] = _text(source, rel)
    logs = _node_logs(facts, node)
    return NodeObservations(node, tables["cmd"], tables["files"], tables["metrics"], logs)


def _node_logs(facts: ClusterFacts, node: str) -> dict[tuple[str, str], tuple[LogFile, ...]]:
    out: dict[tuple[str, str], tuple[LogFile, ...]] = {}
    for pods in facts.pods_by_node.get(node, {}).values():
        for sp in pods:
            paths = facts.log_index.get(sp.key, [])
            if paths:
                out[sp.key] = tuple(_log_file(facts.source, p) for p in paths)
    return out


def _log_file(source: BundleSource, rel: str) -> LogFile:
    _, namespace, pod, filename = rel.split("/")
    previous = filename.endswith(".previous.log")
    container = filename.removesuffix(".log").removesuffix(".previous")
    data = source.read(rel) or b""
    if len(data) > MAX_LOG_BYTES:
        data = data[-MAX_LOG_BYTES:]
    lines = tuple(data.decode("utf-8", errors="replace").splitlines())
    return LogFile(rel, namespace, pod, container, previous, lines)


def _text(source: BundleSource, rel: str) -> str:
    data = source.read(rel) or b""
    return data.decode("utf-8", errors="replace")
