"""Collect only what is read: the projection of each cluster list's items.

A bundle travels (into tickets, to support), so ``collect`` writes of each API object only
the fields gpunode reads. What it reads is already written down: the slim Structs of
``bundle/kube.py`` that the loader decodes into. The projection of a list is derived from
its item Struct (every field, under the API's camelCase name, nested Structs recursively);
what a Struct holds as an open mapping is narrowed by the declarations beside the Structs
(``kube.READ_KEYS``: annotation keys; ``kube.READ_PATHS``: paths inside a custom resource's
``spec``). Container args, env, commands, probes, volumes, annotations outside the
allowlist and unread custom-resource fields are never written, so a secret of a shape no
redaction rule knows is not collected either; redaction (gpunode/redact.py) stays as the
second net for what is read (messages, logs, node files).

Kept besides what is read: ``apiVersion``, ``kind`` and an object's identity
(``metadata.uid``, ``resourceVersion``, ``creationTimestamp``), so a projected bundle still
serves as an API (``serve-bundle``). A value of the wrong type where a Struct is expected
keeps its type (a string becomes ``<not collected>``), so the loader skips a malformed item
exactly as it would have.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Final, TypeAlias

import msgspec
import msgspec.inspect as mi

from gpunode.bundle import kube

#: A shape: which keys of a JSON object are kept, each with the shape of its value; ``"*"``
#: stands for any key; None keeps the value whole. Applied to a list, it applies to each item.
Shape: TypeAlias = "dict[str, Shape | None]"


class Only(dict[str, "Shape | None"]):
    """The shape of a list's items that keeps only the items whose ``key`` is one of ``values``
    (``kube.READ_ITEMS``): a container's env keeps its NVIDIA variables and no other."""

    def __init__(self, key: str, names: tuple[str, ...], shape: Shape | None) -> None:
        super().__init__(shape or {})
        self.key, self.names = key, names

    def kept(self, items: list[Any]) -> list[Any]:
        return [i for i in items if isinstance(i, dict) and i.get(self.key) in self.names]


NOT_COLLECTED: Final = "<not collected>"
#: Kept of every object, read or not: what makes it an API object someone can look up.
IDENTITY: Final[Shape] = {
    "apiVersion": None,
    "kind": None,
    "metadata": {"name": None, "namespace": None, "uid": None, "resourceVersion": None,
                 "creationTimestamp": None},
}


def merge(a: Shape | None, b: Shape | None) -> Shape | None:
    """Both shapes' keys (None, keep whole, wins)."""
    if a is None or b is None:
        return None
    out: Shape = Only(a.key, a.names, dict(a)) if isinstance(a, Only) else dict(a)
    for key, sub in b.items():
        out[key] = merge(out[key], sub) if key in out else sub
    return out


def path_shape(paths: Collection[str]) -> Shape:
    """``("*.enabled", "devicePlugin.config.name", "ofedDriver.{}")`` as a shape: each path's
    last key kept whole, ``{}`` as the last step keeps an object without its keys."""
    shape: Shape = {}
    for path in paths:
        steps = path.split(".")
        whole: Shape | None = {} if steps[-1] == "{}" else None
        steps = steps[:-1] if steps[-1] == "{}" else steps
        for step in reversed(steps[1:]):
            whole = {step: whole}
        merged = merge(shape, {steps[0]: whole})
        assert merged is not None
        shape = merged
    return shape


def struct_shape(cls: type[msgspec.Struct], stem: str = "") -> Shape:
    """Every field of ``cls`` (encoded names), nested Structs by their own fields; open
    mappings as ``kube.READ_KEYS`` / ``kube.READ_PATHS`` (for list ``stem``) declare them."""
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    return _fields(info, stem, top=True)


def _fields(info: mi.StructType, stem: str, top: bool) -> Shape:
    shape: Shape = {}
    for f in info.fields:
        keys = kube.READ_KEYS.get((info.cls, f.name))
        paths = kube.READ_PATHS.get(stem, {}).get(f.name) if top else None
        items = kube.READ_ITEMS.get((info.cls, f.name))
        if items is not None:
            shape[f.encode_name] = Only(*items, _type_shape(f.type, stem))
        elif keys is not None:
            shape[f.encode_name] = dict.fromkeys(keys)
        elif paths is not None:
            shape[f.encode_name] = path_shape(paths)
        else:
            shape[f.encode_name] = _type_shape(f.type, stem)
    return shape


def _type_shape(t: mi.Type, stem: str) -> Shape | None:
    if isinstance(t, mi.StructType):
        return _fields(t, stem, top=False)
    if isinstance(t, mi.UnionType):
        shapes = [_type_shape(m, stem) for m in t.types if not isinstance(m, mi.NoneType)]
        out: Shape | None = {}
        for s in shapes:
            out = merge(out, s)
        return out if shapes else None
    if isinstance(t, mi.VarTupleType | mi.ListType | mi.SetType | mi.FrozenSetType):
        return _type_shape(t.item_type, stem)
    if isinstance(t, mi.DictType) and _open(t.value_type):
        return {}  # an open mapping nothing declares a path of: nothing in it is read
    return None  # scalars, and mappings of scalars (labels, capacity): read whole


def _open(t: mi.Type) -> bool:
    """A value type that holds any JSON (``object``, ``Any``)."""
    return isinstance(t, mi.AnyType) or (isinstance(t, mi.CustomType) and t.cls is object)


def apply(value: Any, shape: Shape | None) -> Any:
    """``value`` with only what ``shape`` keeps."""
    if shape is None:
        return value
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        star = shape.get("*", _ABSENT)
        for key, item in value.items():
            sub = shape.get(key, _ABSENT)
            if sub is _ABSENT and star is _ABSENT:
                continue
            kept = star if sub is _ABSENT else sub if star is _ABSENT else merge(sub, star)
            out[key] = apply(item, kept)
        return out
    if isinstance(value, list):
        kept = shape.kept(value) if isinstance(shape, Only) else value
        return [apply(item, shape) for item in kept]
    return NOT_COLLECTED if isinstance(value, str) else value  # a Struct expected: stays malformed


_ABSENT: Final[Any] = object()


def _shapes() -> dict[str, Shape]:
    from gpunode.bundle.load import RESOURCES

    shapes: dict[str, Shape] = {}
    for stem, cls in RESOURCES.items():
        merged = merge(IDENTITY, struct_shape(cls, stem))
        assert merged is not None
        shapes[stem] = merged
    return shapes


#: The projection of each list file's items (``cluster/<stem>.json``).
SHAPES: Final[dict[str, Shape]] = _shapes()
#: Lists collect writes that nothing reads offline (NVIDIADriver, GPUNodeReport): who they are.
UNREAD: Final[Shape] = merge(IDENTITY, {"metadata": {"labels": None}}) or {}


def shape_of(stem: str) -> Shape:
    return SHAPES.get(stem, UNREAD)


def project(stem: str, obj: Any) -> Any:
    """A decoded item of ``cluster/<stem>.json``, projected."""
    return apply(obj, shape_of(stem))


def project_item(stem: str, item: bytes) -> bytes:
    """One API object's JSON, projected (``collect``): decoded straight into a Struct made
    from the same shape (``_fast``), which skips everything else in C; an item that does not
    fit it (a malformed one) goes the slow way, ``project``, keeping its faults."""
    fast = _FAST.get(stem)
    if fast is not None:
        try:
            return fast.project(item)
        except (msgspec.ValidationError, RecursionError):
            pass
    try:
        obj = msgspec.json.decode(item)
    except (msgspec.DecodeError, RecursionError):
        return b"{}"
    return msgspec.json.encode(project(stem, obj))


# --- The fast path: the shape as Structs ----------------------------------------------------
#
# A projection Struct has the fields of its kube Struct (encoded under the same names,
# defaults omitted when writing), plus the identity on the top-level object; a declared
# mapping of keys is a Struct of those keys; an open mapping with declared paths is kept raw
# and projected by ``apply`` afterwards (custom resources, PVCs, ServiceMonitors: few).


class _Base(msgspec.Struct, omit_defaults=True, frozen=True):
    """Projection Structs: unknown fields skipped, defaults not written."""


class _Nothing(_Base, frozen=True):
    """An open mapping nothing in which is read."""


class _Fast:
    """One list's projection Struct and the top-level fields to project afterwards."""

    def __init__(self, stem: str, cls: type[msgspec.Struct]) -> None:
        self.paths = {f.encode_name: path_shape(paths) for f in msgspec.structs.fields(cls)
                      if (paths := kube.READ_PATHS.get(stem, {}).get(f.name)) is not None}
        self.raw = {f.name: f.encode_name for f in msgspec.structs.fields(cls)
                    if f.encode_name in self.paths}
        self.decoder = msgspec.json.Decoder(_top(stem, cls, self.raw))
        self.encoder = msgspec.json.Encoder()

    def project(self, item: bytes) -> bytes:
        obj = self.decoder.decode(item)
        if self.raw:
            changes = {name: msgspec.Raw(msgspec.json.encode(apply(msgspec.json.decode(raw),
                                                                   self.paths[wire])))
                       for name, wire in self.raw.items() if (raw := getattr(obj, name))}
            obj = msgspec.structs.replace(obj, **changes)
        return self.encoder.encode(obj)


def _top(stem: str, cls: type[msgspec.Struct], raw: Mapping[str, str]) -> type[msgspec.Struct]:
    fields: list[Any] = [("api_version", str, ""), ("kind", str, "")]
    for f in msgspec.structs.fields(cls):
        if f.name in raw:
            fields.append((f.name, msgspec.Raw, msgspec.Raw(b"")))
        elif f.name == "metadata":
            meta = f.type
            fields.append((f.name, _struct(meta, identity=True), _struct(meta, identity=True)()))
        else:
            fields.append(_field(cls, f))
    rename = {"api_version": "apiVersion", "kind": "kind",
              **{f.name: f.encode_name for f in msgspec.structs.fields(cls)}}
    return msgspec.defstruct(f"Projected{cls.__name__}_{stem}", fields, bases=(_Base,),
                             rename=rename, frozen=True)


_IDENTITY_FIELDS: Final = (("uid", "uid"), ("resource_version", "resourceVersion"),
                           ("creation_timestamp", "creationTimestamp"))
_MADE: dict[tuple[type[msgspec.Struct], bool], type[msgspec.Struct]] = {}


def _struct(cls: type[msgspec.Struct], identity: bool = False) -> type[msgspec.Struct]:
    made = _MADE.get((cls, identity))
    if made is not None:
        return made
    fields = [_field(cls, f) for f in msgspec.structs.fields(cls)]
    rename = {f.name: f.encode_name for f in msgspec.structs.fields(cls)}
    only = {f.name: kept for f in msgspec.structs.fields(cls)
            if (kept := kube.READ_ITEMS.get((cls, f.name))) is not None}
    if identity:
        have = {f.name for f in msgspec.structs.fields(cls)}
        extra = [(name, wire) for name, wire in _IDENTITY_FIELDS if name not in have]
        fields += [(name, str | None, None) for name, _ in extra]
        rename.update(extra)
    made = msgspec.defstruct(f"Projected{cls.__name__}", fields, bases=(_Base,), rename=rename,
                             frozen=not only, namespace=_keeping(only) if only else None)
    _MADE[(cls, identity)] = made
    return made


def _keeping(only: Mapping[str, tuple[str, tuple[str, ...]]]) -> dict[str, Any]:
    """A ``__post_init__`` that keeps, of each list field in ``only``, the items whose key is
    one of the values (``kube.READ_ITEMS``), run by msgspec as it decodes the item."""

    def __post_init__(self: Any) -> None:
        for name, (key, values) in only.items():
            setattr(self, name, tuple(i for i in getattr(self, name) if getattr(i, key) in values))

    return {"__post_init__": __post_init__}


def _field(owner: type[msgspec.Struct], f: Any) -> tuple[str, Any, Any]:
    keys = kube.READ_KEYS.get((owner, f.name))
    if keys is not None:
        kept = msgspec.defstruct(f"Read{owner.__name__}{f.name}",
                                 [(f"k{i}", str | None, None) for i in range(len(keys))],
                                 bases=(_Base,), rename={f"k{i}": k for i, k in enumerate(keys)},
                                 frozen=True)
        return f.name, kept, kept()
    kind, default = _fast_type(f.type), f.default
    if isinstance(default, msgspec.Struct):
        default = _struct(type(default))()
    elif default is msgspec.NODEFAULT:
        default = msgspec.field(default_factory=f.default_factory)
    if kind is _Nothing:
        default = _Nothing()
    return f.name, kind, default


def _fast_type(t: Any) -> Any:
    """The projection type of a kube field type."""
    import types
    import typing

    origin, args = typing.get_origin(t), typing.get_args(t)
    if isinstance(t, type) and issubclass(t, msgspec.Struct):
        return _struct(t)
    if origin in (types.UnionType, typing.Union):
        mapped = tuple(_fast_type(a) for a in args)
        out = mapped[0]
        for member in mapped[1:]:
            out = out | member
        return out
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return tuple[_fast_type(args[0]), ...]  # type: ignore[misc]
    if origin is dict and args[1] is object:
        return _Nothing
    return t


def _fasts() -> dict[str, _Fast]:
    from gpunode.bundle.load import RESOURCES

    return {stem: _Fast(stem, cls) for stem, cls in RESOURCES.items()}


_FAST: Final[dict[str, _Fast]] = _fasts()


# --- ConfigMaps: of their data only the device plugin's configs are read -------------------

PluginConfigs: TypeAlias = Collection[tuple[str, str]]


def project_configmap(item: bytes, plugin: PluginConfigs) -> bytes:
    """A ConfigMap projected; of its values only the device-plugin configs of a ConfigMap the
    device plugin reads (``plugin``: namespace and name, those its pods mount or the
    ClusterPolicy names) are kept, as the part of them gpunode reads; other values are
    ``<not collected>`` (their keys stay: the node's label picks one by name)."""
    try:
        obj = msgspec.json.decode(item)
    except (msgspec.DecodeError, RecursionError):
        return b"{}"
    out = project("configmaps", obj)
    data = out.get("data") if isinstance(out, dict) else None
    if isinstance(data, dict):
        meta = out.get("metadata") if isinstance(out.get("metadata"), dict) else {}
        source = (str(meta.get("namespace", "")), str(meta.get("name", "")))
        read = source in plugin
        out["data"] = {k: plugin_config_read(v) if read else NOT_COLLECTED for k, v in data.items()}
    return msgspec.json.encode(out)


def plugin_config_read(text: Any) -> Any:
    """What gpunode reads of a device-plugin config file (``gpus.plugin_sharing``): its
    version, whether it has flags, and each sharing section's ``renameByDefault`` and
    resources (name, replicas, rename); written back as YAML. Text that is no
    device-plugin config is not read at all: ``<not collected>``."""
    from gpunode.gpus import plugin_sharing

    if not isinstance(text, str):
        return text  # not a string: the item stays malformed
    original = plugin_sharing(text)
    if original is None:
        return NOT_COLLECTED
    import yaml

    from gpunode.limits import bounded_yaml

    doc = bounded_yaml(text, "device-plugin config")
    kept = _plugin_doc(doc)
    rendered = yaml.safe_dump(kept, sort_keys=False, default_flow_style=False)
    return rendered if plugin_sharing(rendered) == original else NOT_COLLECTED


def _plugin_doc(doc: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(doc.get("version"), str | int | float):
        out["version"] = doc["version"]
    if "flags" in doc:
        out["flags"] = {}
    if "sharing" in doc:
        sharing = doc["sharing"]
        out["sharing"] = {k: _sharing_section(v) for k, v in sharing.items()
                          if k in _SHARING and isinstance(v, dict)} if isinstance(sharing, dict) else {}
    return out


_SHARING: Final = ("timeSlicing", "mps")
_RESOURCE_KEYS: Final = ("name", "replicas", "rename")


def _sharing_section(section: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "renameByDefault" in section:
        out["renameByDefault"] = section["renameByDefault"] is True
    resources = section.get("resources")
    if isinstance(resources, list):
        out["resources"] = [{k: _scalar(e[k]) for k in _RESOURCE_KEYS if k in e}
                            for e in resources if isinstance(e, dict)]
    return out


def _scalar(value: Any) -> Any:
    return value if isinstance(value, str | int | float | bool) or value is None else str(value)


def describe(shape: Shape | None) -> str:
    """A shape in one line, as docs/bundle-format.md lists it: ``a, b.{c, d.e}``."""
    if shape is None:
        return ""
    parts = []
    for key, sub in shape.items():
        inner = describe(sub)
        key = f"{key}[{sub.key} {' or '.join(sub.names)}]" if isinstance(sub, Only) else key  # noqa: PLW2901
        if sub is None:
            parts.append(key)
        elif not sub:
            parts.append(f"{key}.{{}}")
        else:
            parts.append(f"{key}.{inner}" if len(sub) == 1 else f"{key}.{{{inner}}}")
    return ", ".join(parts)


def documented() -> dict[str, str]:
    """What each list keeps beyond the identity, as documented (tests compare the two)."""
    out = {}
    for stem, shape in SHAPES.items():
        kept = {k: v for k, v in shape.items() if k not in ("apiVersion", "kind")}
        meta = kept.get("metadata")
        if isinstance(meta, dict):
            rest = {k: v for k, v in meta.items() if k not in IDENTITY["metadata"]}  # type: ignore[operator]
            if "annotations" in rest:
                rest["annotations"] = {"<read annotations>": None}
            kept["metadata"] = rest
            if not rest:
                del kept["metadata"]
        out[stem] = describe(kept)
    return out
