"""Discovery documents (/api, /apis, /api/v1, /apis/<group>/<version>).

Clients such as kubectl map a resource name to its path with these; lightkube
does not need them, but a real server always answers them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gpunode.apiserver.resources import ResourceType

_READ_VERBS = ["get", "list", "watch"]
_SUBRESOURCE_KINDS = {"log": ("Pod", ["get"]), "exec": ("PodExecOptions", ["create", "get"]),
                      "proxy": ("PodProxyOptions", ["get"]), "status": (None, ["get"])}


def api_versions(server_address: str) -> dict[str, Any]:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0",
                                            "serverAddress": server_address}]}


def _group_versions(types: Iterable[ResourceType]) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for rtype in types:
        if rtype.group and rtype.version not in groups.setdefault(rtype.group, []):
            groups[rtype.group].append(rtype.version)
    return groups


def _group_doc(name: str, versions: list[str]) -> dict[str, Any]:
    entries = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": entries, "preferredVersion": entries[0]}


def api_group_list(types: Iterable[ResourceType]) -> dict[str, Any]:
    groups = _group_versions(types)
    return {"kind": "APIGroupList", "apiVersion": "v1",
            "groups": [_group_doc(g, v) for g, v in sorted(groups.items())]}


def api_group(types: Iterable[ResourceType], group: str) -> dict[str, Any] | None:
    versions = _group_versions(types).get(group)
    if not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group_doc(group, versions)}


def resource_list(types: Iterable[ResourceType], group: str, version: str) -> dict[str, Any] | None:
    """The APIResourceList of one group/version, with the subresources gpunode uses."""
    chosen = [t for t in types if t.group == group and t.version == version]
    if not chosen:
        return None
    resources: list[dict[str, Any]] = []
    for rtype in sorted(chosen, key=lambda t: t.plural):
        resources.append(_resource_doc(rtype))
        resources.extend(_subresource_doc(rtype, sub) for sub in rtype.subresources)
    return {"kind": "APIResourceList", "apiVersion": "v1",
            "groupVersion": f"{group}/{version}" if group else version, "resources": resources}


def _resource_doc(rtype: ResourceType) -> dict[str, Any]:
    doc: dict[str, Any] = {"name": rtype.plural, "singularName": rtype.singular,
                           "namespaced": rtype.namespaced, "kind": rtype.kind,
                           "verbs": _READ_VERBS}
    if rtype.short_names:
        doc["shortNames"] = list(rtype.short_names)
    return doc


def _subresource_doc(rtype: ResourceType, sub: str) -> dict[str, Any]:
    kind, verbs = _SUBRESOURCE_KINDS.get(sub, (None, ["get"]))
    return {"name": f"{rtype.plural}/{sub}", "singularName": "", "namespaced": rtype.namespaced,
            "kind": kind or rtype.kind, "verbs": verbs}
