"""Node names for shell completion: from the bundle given with --from, else the live cluster.

Completion must never print errors into the user's shell, so every failure
yields no candidates.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec


class _Meta(msgspec.Struct, frozen=True):
    name: str = ""


class _Item(msgspec.Struct, frozen=True):
    metadata: _Meta = _Meta()


class _List(msgspec.Struct, frozen=True):
    items: tuple[_Item, ...] = ()


def node_names(params: Mapping[str, Any]) -> list[str]:
    """Names of the nodes the command would see; empty when they cannot be read quickly."""
    try:
        source = params.get("source")
        raw = _from_bundle(Path(source)) if source else _from_cluster(params)
        return sorted(i.metadata.name for i in msgspec.json.decode(raw or b"{}", type=_List).items)
    except Exception:
        return []


def _from_bundle(path: Path) -> bytes | None:
    from gpunode.bundle.source import open_bundle

    return open_bundle(path).read("cluster/nodes.json")


def _from_cluster(params: Mapping[str, Any]) -> bytes:
    from gpunode.collect.kube import KubeApi, RetryPolicy, Timeouts, load_config

    kubeconfig = params.get("kubeconfig")
    api = KubeApi(
        load_config(Path(kubeconfig) if kubeconfig else None, params.get("context")),
        timeouts=Timeouts(3.0, 3.0, 3.0, 3.0),  # a credential plugin too: TAB never waits long
        policy=RetryPolicy(attempts=1, deadline_s=3.0),
    )
    try:
        return api.get("/api/v1/nodes", {"limit": 5000})
    finally:
        api.close()
