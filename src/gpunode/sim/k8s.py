"""Builders for Kubernetes API objects, shaped exactly as `kubectl get -o json` prints them.

Plain dicts (not Structs) because the bundle must carry the API's full, loosely
typed shape; faults then edit them in place. Field order follows the API server's
JSON output so bundles read like real ones.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from gpunode.sim import ids

Obj = dict[str, Any]

# Tolerations the DaemonSet controller adds to every pod it creates.
DAEMONSET_TOLERATIONS: tuple[tuple[str, str], ...] = (
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
)


def object_list(items: list[Obj]) -> Obj:
    """The `v1/List` wrapper kubectl prints for `get -A -o json`."""
    return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}


def meta(
    name: str,
    created: datetime,
    namespace: str | None = None,
    *,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    owner: Obj | None = None,
    generation: int | None = None,
    generate_name: str | None = None,
) -> Obj:
    """ObjectMeta with a stable uid and resourceVersion."""
    key = f"{namespace or ''}/{name}"
    out: Obj = {}
    if annotations:
        out["annotations"] = annotations
    out["creationTimestamp"] = ids.rfc3339(created)
    if generation is not None:
        out["generation"] = generation
    if generate_name:
        out["generateName"] = generate_name
    if labels:
        out["labels"] = labels
    out["name"] = name
    if namespace is not None:
        out["namespace"] = namespace
    if owner is not None:
        out["ownerReferences"] = [owner]
    out["uid"], out["resourceVersion"] = ids.uid_and_version(key)
    return out


def owner_ref(kind: str, name: str, namespace: str | None, api_version: str = "apps/v1") -> Obj:
    """A controller ownerReference pointing at a workload object."""
    return {
        "apiVersion": api_version,
        "blockOwnerDeletion": True,
        "controller": True,
        "kind": kind,
        "name": name,
        "uid": ids.uid(f"{namespace or ''}/{name}"),
    }


def toleration(
    key: str | None,
    effect: str | None,
    operator: str = "Exists",
    value: str | None = None,
    seconds: int | None = None,
) -> Obj:
    """One toleration in API field order."""
    out: Obj = {}
    if effect:
        out["effect"] = effect
    if key:
        out["key"] = key
    out["operator"] = operator
    if seconds is not None:
        out["tolerationSeconds"] = seconds
    if value is not None:
        out["value"] = value
    return out


def daemonset_pod_tolerations(template: list[Obj]) -> list[Obj]:
    """Template tolerations plus those the DaemonSet controller injects."""
    return template + [toleration(key, effect) for key, effect in DAEMONSET_TOLERATIONS]


def default_pod_tolerations(template: list[Obj]) -> list[Obj]:
    """Template tolerations plus the DefaultTolerationSeconds admission defaults."""
    return [
        *template,
        toleration("node.kubernetes.io/not-ready", "NoExecute", seconds=300),
        toleration("node.kubernetes.io/unreachable", "NoExecute", seconds=300),
    ]


def tolerates(tolerations: list[Obj], taint: Obj) -> bool:
    """Whether one of `tolerations` matches `taint` (key/effect/operator semantics)."""
    for tol in tolerations:
        if tol.get("effect") and tol["effect"] != taint["effect"]:
            continue
        if tol.get("operator") == "Exists" and not tol.get("key"):
            return True
        if tol.get("key") != taint["key"]:
            continue
        if tol.get("operator") == "Exists" or tol.get("value", "") == taint.get("value", ""):
            return True
    return False


def condition(
    kind: str, status: str, when: datetime, reason: str | None = None, message: str | None = None
) -> Obj:
    """A pod condition (with the API's null lastProbeTime)."""
    out: Obj = {"lastProbeTime": None, "lastTransitionTime": ids.rfc3339(when)}
    if message:
        out["message"] = message
    if reason:
        out["reason"] = reason
    out["status"] = status
    out["type"] = kind
    return out


def event(
    obj_kind: str,
    obj: Obj,
    reason: str,
    message: str,
    *,
    first: datetime,
    last: datetime,
    count: int = 1,
    kind: str = "Warning",
    component: str = "kubelet",
    host: str | None = None,
    field_path: str | None = None,
) -> Obj:
    """A core/v1 Event about `obj`, as the kubelet or a controller records it."""
    md = obj["metadata"]
    namespace = md.get("namespace", "default")
    involved: Obj = {"apiVersion": "v1" if obj_kind in ("Pod", "Node") else "apps/v1"}
    if field_path:
        involved["fieldPath"] = field_path
    involved |= {"kind": obj_kind, "name": md["name"], "namespace": namespace}
    involved |= {"resourceVersion": md.get("resourceVersion", ""), "uid": md.get("uid", "")}
    if obj_kind == "Node":
        involved = {"kind": "Node", "name": md["name"], "uid": md["name"]}
    token = ids.hex_id(f"ev:{md['name']}:{reason}:{message}", 16)
    name = f"{md['name']}.{token}"
    source: Obj = {"component": component}
    if host:
        source["host"] = host
    return {
        "apiVersion": "v1",
        "count": count,
        "eventTime": None,
        "firstTimestamp": ids.rfc3339(first),
        "involvedObject": involved,
        "kind": "Event",
        "lastTimestamp": ids.rfc3339(last),
        "message": message,
        "metadata": meta(name, first, namespace),
        "reason": reason,
        "reportingComponent": component,
        "reportingInstance": host or "",
        "source": source,
        "type": kind,
    }
