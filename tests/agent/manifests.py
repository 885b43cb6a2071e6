"""Render deploy/agent the way ``kubectl kustomize`` does, for the parts it uses.

Only what the manifests use is implemented: ``resources``, ``namespace``,
``images``, components with resources and JSON 6902 patches (add, remove,
replace). A test compares this rendering with kubectl's when kubectl is there.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import msgspec
import yaml

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "agent"
COMPONENTS = ("node-condition", "servicemonitor", "privileged")
CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition"}

Obj = dict[str, Any]


def load_docs(path: Path) -> list[Obj]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def render(*components: str) -> list[Obj]:
    """The base with the named components, as kubectl kustomize would output it."""
    base = load_docs(DEPLOY / "kustomization.yaml")[0]
    objects = [obj for rel in base["resources"] for obj in load_docs(DEPLOY / rel)]
    for name in components:
        objects = _component(DEPLOY / "components" / name, objects)
    for obj in objects:
        _set_namespace(obj, base["namespace"])
        _set_images(obj, base.get("images", []))
    return objects


def _component(folder: Path, objects: list[Obj]) -> list[Obj]:
    spec = load_docs(folder / "kustomization.yaml")[0]
    assert spec["kind"] == "Component"
    objects = objects + [obj for rel in spec.get("resources", []) for obj in load_docs(folder / rel)]
    for patch in spec.get("patches", []):
        target = patch["target"]
        ops = load_docs(folder / patch["path"])[0]
        for obj in objects:
            if obj["kind"] == target["kind"] and obj["metadata"]["name"] == target["name"]:
                for op in ops:
                    apply_op(obj, op)
    return objects


def apply_op(obj: Obj, op: Obj) -> None:
    """One JSON 6902 operation (add, remove, replace) on ``obj`` in place."""
    *parents, last = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
    node: Any = obj
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    value = copy.deepcopy(op.get("value"))
    if op["op"] == "remove":
        del node[int(last) if isinstance(node, list) else last]
    elif isinstance(node, list) and last == "-":
        node.append(value)
    elif isinstance(node, list) and op["op"] == "add":
        node.insert(int(last), value)
    else:
        assert op["op"] in ("add", "replace") and (op["op"] == "add" or last in node)
        node[int(last) if isinstance(node, list) else last] = value


def _set_namespace(obj: Obj, namespace: str) -> None:
    if obj["kind"] not in CLUSTER_SCOPED:
        obj["metadata"]["namespace"] = namespace
    for subject in obj.get("subjects", []):
        if subject.get("kind") == "ServiceAccount":
            subject["namespace"] = namespace


def _set_images(obj: Obj, images: list[Obj]) -> None:
    spec = obj.get("spec", {}).get("template", {}).get("spec", {})
    for container in spec.get("containers", []):
        for image in images:
            if container["image"] == image["name"]:
                container["image"] = f"{image['newName']}:{image['newTag']}"


def by_kind(objects: list[Obj], kind: str) -> list[Obj]:
    return [o for o in objects if o["kind"] == kind]


def one(objects: list[Obj], kind: str) -> Obj:
    found = by_kind(objects, kind)
    assert len(found) == 1, f"expected one {kind}, found {len(found)}"
    return found[0]


def unknown_fields(value: Any, typ: Any, where: str = "$") -> list[str]:
    """Keys in ``value`` that the Kubernetes schema (lightkube's models) does not have."""
    info = msgspec.inspect.type_info(typ)
    return _unknown(value, info, where)


def _unknown(value: Any, info: msgspec.inspect.Type, where: str) -> list[str]:
    if isinstance(info, msgspec.inspect.UnionType):
        found = [t for t in info.types if not isinstance(t, msgspec.inspect.NoneType)]
        return _unknown(value, found[0], where) if len(found) == 1 else []
    if isinstance(info, msgspec.inspect.StructType) and isinstance(value, dict):
        fields = {f.encode_name: f.type for f in info.fields}
        out = [f"{where}.{k}" for k in value if k not in fields]
        for key, item in value.items():
            if key in fields:
                out += _unknown(item, fields[key], f"{where}.{key}")
        return out
    if isinstance(info, msgspec.inspect.ListType | msgspec.inspect.VarTupleType) and isinstance(value, list):
        return [u for i, item in enumerate(value) for u in _unknown(item, info.item_type, f"{where}[{i}]")]
    return []
