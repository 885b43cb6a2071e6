"""A bundle's objects, indexed and pre-encoded for serving as API lists.

Each ``cluster/<plural>.json`` is read once: items are kept as compact JSON
bytes sorted by etcd key (``namespace/name``), next to the few fields that
selectors look at. Serving a page is then a slice and a ``b",".join`` — no
re-encoding per request, which is what lets one Python process answer a
100,000-pod cluster quickly.
"""

from __future__ import annotations

import base64
import bisect
import gc
import gzip
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from gpunode.apiserver.resources import KNOWN_BY_PLURAL, KNOWN_TYPES, ResourceType, infer_type
from gpunode.apiserver.selectors import (
    Requirement,
    SelectorError,
    matches_all,
    parse_field_selector,
    parse_label_selector,
)
from gpunode.errors import BundleError
from gpunode.relazy import lazy_compile


class _Meta(msgspec.Struct):
    name: str = ""
    namespace: str = ""
    labels: dict[str, str] = {}
    resourceVersion: str = ""


class _Spec(msgspec.Struct, rename="camel"):
    node_name: str = ""
    restart_policy: str = ""
    scheduler_name: str = ""
    service_account_name: str = ""
    host_network: bool = False
    unschedulable: bool = False


class _Status(msgspec.Struct, rename="camel"):
    phase: str = ""
    pod_ip: str = msgspec.field(default="", name="podIP")
    nominated_node_name: str = ""


class _Involved(msgspec.Struct, rename="camel"):
    kind: str = ""
    namespace: str = ""
    name: str = ""
    uid: str = ""
    api_version: str = ""
    resource_version: str = ""
    field_path: str = ""


class _Source(msgspec.Struct):
    component: str = ""


class _IndexItem(msgspec.Struct, rename="camel"):
    """The fields selectors read; everything else in the item is skipped."""

    api_version: str = ""
    kind: str = ""
    metadata: _Meta = msgspec.field(default_factory=_Meta)
    spec: _Spec | None = None
    status: _Status | None = None
    involved_object: _Involved | None = None
    reason: str = ""
    type: str = ""
    reporting_component: str = ""
    source: _Source | None = None


class _RawList(msgspec.Struct):
    items: list[msgspec.Raw] = []


class _IndexList(msgspec.Struct):
    items: list[_IndexItem] = []


_COMMON_FIELDS = ("metadata.name", "metadata.namespace")
_EXTRA_FIELDS: dict[str, tuple[str, ...]] = {
    "pods": ("spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
             "spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP",
             "status.nominatedNodeName"),
    "events": ("involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
               "involvedObject.uid", "involvedObject.apiVersion",
               "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason",
               "reportingComponent", "source", "type"),
    "nodes": ("spec.unschedulable",),
}


def supported_fields(plural: str) -> tuple[str, ...]:
    return _COMMON_FIELDS + _EXTRA_FIELDS.get(plural, ())


def _field_values(plural: str, item: _IndexItem) -> dict[str, str]:
    """Field-selector values of one item; absent fields read as "" like the API's."""
    values = {"metadata.name": item.metadata.name, "metadata.namespace": item.metadata.namespace}
    if plural == "pods":
        values.update(_pod_fields(item.spec or _Spec(), item.status or _Status()))
    elif plural == "events":
        values.update(_event_fields(item))
    elif plural == "nodes":
        values["spec.unschedulable"] = _bool((item.spec or _Spec()).unschedulable)
    return values


def _pod_fields(spec: _Spec, status: _Status) -> dict[str, str]:
    return {
        "spec.nodeName": spec.node_name, "spec.restartPolicy": spec.restart_policy,
        "spec.schedulerName": spec.scheduler_name,
        "spec.serviceAccountName": spec.service_account_name,
        "spec.hostNetwork": _bool(spec.host_network), "status.phase": status.phase,
        "status.podIP": status.pod_ip, "status.nominatedNodeName": status.nominated_node_name,
    }


def _event_fields(item: _IndexItem) -> dict[str, str]:
    inv = item.involved_object or _Involved()
    values = {f"involvedObject.{k}": v for k, v in (
        ("kind", inv.kind), ("namespace", inv.namespace), ("name", inv.name), ("uid", inv.uid),
        ("apiVersion", inv.api_version), ("resourceVersion", inv.resource_version),
        ("fieldPath", inv.field_path))}
    values.update(reason=item.reason, type=item.type, reportingComponent=item.reporting_component,
                  source=(item.source or _Source()).component)
    return values


def _bool(flag: bool) -> str:
    return "true" if flag else "false"


_TYPEMETA_RE = lazy_compile(
    rb'^\{(?:"apiVersion":"[^"]*","kind":"[^"]*"|"kind":"[^"]*","apiVersion":"[^"]*"),?')


def strip_typemeta(item: bytes) -> bytes:
    """Drop apiVersion/kind from a compact item, as typed list responses do."""
    if b'"kind"' not in item:  # nothing to drop: no pattern to try
        return item
    stripped, count = _TYPEMETA_RE.subn(b"{", item, count=1)
    if count:
        return stripped
    obj = msgspec.json.decode(item)
    obj.pop("apiVersion", None)
    obj.pop("kind", None)
    return msgspec.json.encode(obj)


@dataclass
class Collection:
    """All objects of one resource type, sorted by key, encoded once."""

    rtype: ResourceType
    keys: list[str] = field(default_factory=list)
    items: list[bytes] = field(default_factory=list)
    labels: list[dict[str, str]] = field(default_factory=list)
    fields: list[dict[str, str]] = field(default_factory=list)
    position: dict[str, int] = field(default_factory=dict)
    max_rv: int = 0

    def get(self, namespace: str, name: str) -> bytes | None:
        pos = self.position.get(f"{namespace}/{name}" if self.rtype.namespaced else name)
        return None if pos is None else self.items[pos]

    def with_typemeta(self, item: bytes) -> bytes:
        """Single GETs carry apiVersion/kind even where list items do not."""
        if not self.rtype.builtin:
            return item
        head = f'{{"kind":"{self.rtype.kind}","apiVersion":"{self.rtype.api_version}"'.encode()
        return head + (b"," + item[1:] if item != b"{}" else b"}")


def _load_collection(rtype: ResourceType, raw_items: Sequence[msgspec.Raw],
                     index: Sequence[_IndexItem]) -> Collection:
    keyed = sorted(zip((_key(rtype, i) for i in index), range(len(index)), strict=True))
    coll = Collection(rtype)
    for key, pos in keyed:
        item = msgspec.json.format(bytes(raw_items[pos]), indent=0)
        coll.position[key] = len(coll.keys)
        coll.keys.append(key)
        coll.items.append(strip_typemeta(item) if rtype.builtin else item)
        coll.labels.append(index[pos].metadata.labels)
        coll.fields.append(_field_values(rtype.plural, index[pos]))
        rv = index[pos].metadata.resourceVersion
        coll.max_rv = max(coll.max_rv, int(rv) if rv.isdigit() else 0)
    return coll


def _key(rtype: ResourceType, item: _IndexItem) -> str:
    meta = item.metadata
    return f"{meta.namespace}/{meta.name}" if rtype.namespaced else meta.name


def _read_list(path: Path) -> tuple[list[msgspec.Raw], list[_IndexItem]]:
    data = path.read_bytes()
    try:
        raw = msgspec.json.decode(data, type=_RawList).items
        index = msgspec.json.decode(data, type=_IndexList).items
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise BundleError(f"{path}: not a Kubernetes list: {exc}") from exc
    return raw, index


def _type_for(plural: str, index: Sequence[_IndexItem]) -> ResourceType | None:
    known = KNOWN_BY_PLURAL.get(plural)
    if known or not index:
        return known
    first = index[0]
    if not first.api_version or not first.kind:
        return None
    return infer_type(plural, first.api_version, first.kind,
                      any(i.metadata.namespace for i in index))


@dataclass(frozen=True)
class ListQuery:
    """The parameters of one list call that shape its result."""

    namespace: str = ""
    label_selector: str = ""
    field_selector: str = ""
    limit: int = 0
    token: str = ""


@dataclass(frozen=True)
class Page:
    """One list response: the body and whether more pages follow."""

    body: bytes
    item_count: int
    has_more: bool
    gzipped: bool


class ContinueError(Exception):
    """A continue token is malformed (400) or stale (410)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


EXPIRED_MESSAGE = (
    "The provided continue parameter is too old to display a consistent list result. "
    "You can start a new list without the continue parameter, or use the continue token "
    "in this response to retrieve the remainder of the results. Continuing with the "
    "provided token results in an inconsistent list - objects that were created, modified, "
    "or deleted between the time the first chunk was returned and now may show up in the list."
)


class BundleStore:
    """Everything the server answers from, loaded once from a bundle directory."""

    def __init__(self, bundle_dir: Path, *, cache_pages: bool = True) -> None:
        self.root = bundle_dir
        if not (bundle_dir / "cluster").is_dir():
            raise BundleError(f"{bundle_dir}: not a bundle directory (no cluster/)")
        self.collections: dict[str, Collection] = {}
        # Loading only adds objects that live as long as the server: the cyclic collector's
        # passes over them while they are built find nothing (a third of the load of a
        # million-pod list).
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            for path in sorted((bundle_dir / "cluster").glob("*.json")):
                if path.stem != "version":
                    self._load(path)
        finally:
            if was_enabled:
                gc.enable()
        self._add_builtin_defaults()
        self.resource_version = max(1000, _scan_resource_versions(self.collections.values()))
        self._cache_pages = cache_pages
        self._lock = threading.Lock()
        self._matches: dict[tuple[str, ...], tuple[list[int], list[str]]] = {}
        self._pages: dict[tuple[Any, ...], tuple[bytes, bool]] = {}

    def _load(self, path: Path) -> None:
        raw, index = _read_list(path)
        rtype = _type_for(path.stem, index)
        if rtype is not None:
            self.collections[rtype.plural] = _load_collection(rtype, raw, index)

    def _add_builtin_defaults(self) -> None:
        """A real cluster always has the built-in kinds, if only as empty lists."""
        for rtype in KNOWN_TYPES:
            if rtype.builtin and rtype.plural not in self.collections:
                self.collections[rtype.plural] = Collection(rtype)
        self.collections.setdefault("secrets", Collection(
            ResourceType("secrets", "", "v1", "Secret", True)))
        if not self.collections["namespaces"].items:
            self.collections["namespaces"] = _synthesise_namespaces(self.collections.values())

    def cluster_name(self) -> str:
        """The bundle's cluster name (manifest), so a kubeconfig can carry it."""
        try:
            manifest = msgspec.json.decode((self.root / "manifest.json").read_bytes())
        except (OSError, msgspec.DecodeError):
            return ""
        name = manifest.get("cluster_name") if isinstance(manifest, dict) else None
        return name if isinstance(name, str) else ""

    def version_json(self) -> bytes:
        path = self.root / "cluster" / "version.json"
        if path.is_file():
            return msgspec.json.format(path.read_bytes(), indent=0)
        return msgspec.json.encode(DEFAULT_VERSION)

    def expire_continue_tokens(self) -> None:
        """Simulate etcd compaction: every continue token handed out so far turns stale."""
        with self._lock:
            self.resource_version += 1
            self._pages.clear()

    def by_type(self, group: str, version: str, plural: str) -> Collection | None:
        coll = self.collections.get(plural)
        if coll and coll.rtype.group == group and coll.rtype.version == version:
            return coll
        return None

    def list_page(self, coll: Collection, query: ListQuery, *, accept_gzip: bool,
                  gzip_threshold: int) -> Page:
        """One page of a list call; raises SelectorError or ContinueError."""
        idx, keys = self._matching(coll, query.namespace, query.label_selector,
                                   query.field_selector)
        start = self._start_position(query.token, keys)
        end = len(idx) if query.limit <= 0 else min(len(idx), start + query.limit)
        cache_key = (coll.rtype.plural, query.namespace, query.label_selector,
                     query.field_selector, start, end, self.resource_version, accept_gzip)
        cached = self._pages.get(cache_key)
        if cached is None:
            filtered = bool(query.label_selector or query.field_selector)
            body = self._render(coll, idx[start:end], keys, (start, end, len(idx)), filtered)
            gzipped = accept_gzip and len(body) >= gzip_threshold
            cached = (gzip.compress(body, compresslevel=1, mtime=0) if gzipped else body, gzipped)
            if self._cache_pages and gzipped:
                self._pages[cache_key] = cached
        return Page(cached[0], end - start, end < len(idx), cached[1])

    def _matching(self, coll: Collection, namespace: str, label_selector: str,
                  field_selector: str) -> tuple[list[int], list[str]]:
        key = (coll.rtype.plural, namespace, label_selector, field_selector)
        found = self._matches.get(key)
        if found is None:
            found = _filter(coll, namespace, parse_label_selector(label_selector),
                            _checked_fields(coll, parse_field_selector(field_selector)))
            with self._lock:
                if len(self._matches) > 256:
                    self._matches.clear()
                self._matches[key] = found
        return found

    def _start_position(self, token: str, keys: list[str]) -> int:
        if not token:
            return 0
        rv, start_key = decode_continue(token)
        if rv != self.resource_version:
            raise ContinueError(410, EXPIRED_MESSAGE)
        return bisect.bisect_left(keys, start_key)

    def _render(self, coll: Collection, chosen: list[int], keys: list[str],
                span: tuple[int, int, int], filtered: bool) -> bytes:
        """``span`` is (start, end, total) of the page within the matching items."""
        _start, end, total = span
        meta: dict[str, Any] = {"resourceVersion": str(self.resource_version)}
        if end < total:
            meta["continue"] = encode_continue(self.resource_version, keys[end - 1] + "\x00")
            if not filtered:
                meta["remainingItemCount"] = total - end
        head = msgspec.json.encode({"kind": coll.rtype.list_kind,
                                    "apiVersion": coll.rtype.api_version, "metadata": meta})
        items = b",".join(coll.items[i] for i in chosen)
        return head[:-1] + b',"items":[' + items + b"]}"


def _checked_fields(coll: Collection, reqs: tuple[Requirement, ...]) -> tuple[Requirement, ...]:
    allowed = supported_fields(coll.rtype.plural)
    for req in reqs:
        if req.key not in allowed:
            raise SelectorError(f'field label not supported: {req.key}')
    return reqs


def _filter(coll: Collection, namespace: str, labels: tuple[Requirement, ...],
            fields: tuple[Requirement, ...]) -> tuple[list[int], list[str]]:
    lo, hi = 0, len(coll.keys)
    if namespace and coll.rtype.namespaced:
        lo = bisect.bisect_left(coll.keys, namespace + "/")
        hi = bisect.bisect_left(coll.keys, namespace + "0")  # "0" sorts right after "/"
    if not labels and not fields:
        return list(range(lo, hi)), coll.keys[lo:hi]
    idx = [i for i in range(lo, hi)
           if matches_all(labels, coll.labels[i]) and matches_all(fields, coll.fields[i])]
    return idx, [coll.keys[i] for i in idx]


def _scan_resource_versions(collections: Any) -> int:
    return max((c.max_rv for c in collections), default=0)


def _synthesise_namespaces(collections: Any) -> Collection:
    names = sorted({ns for c in collections if c.rtype.namespaced
                    for ns in (k.split("/", 1)[0] for k in c.keys)})
    coll = Collection(KNOWN_BY_PLURAL["namespaces"])
    for name in names:
        coll.position[name] = len(coll.keys)
        coll.keys.append(name)
        coll.items.append(msgspec.json.encode({
            "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}},
            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}))
        coll.labels.append({"kubernetes.io/metadata.name": name})
        coll.fields.append({"metadata.name": name, "metadata.namespace": ""})
    return coll


class _Token(msgspec.Struct):
    v: str
    rv: int
    start: str


def encode_continue(resource_version: int, start_key: str) -> str:
    """Same layout as the API server's tokens: base64 of {"v","rv","start"}."""
    raw = msgspec.json.encode(_Token("meta.k8s.io/v1", resource_version, start_key))
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_continue(token: str) -> tuple[int, str]:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        parsed = msgspec.json.decode(raw, type=_Token)
    except (ValueError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ContinueError(400, f"continue key is not valid: {exc}") from exc
    if parsed.v != "meta.k8s.io/v1":
        raise ContinueError(400, f"continue key is not valid: incorrect encoded start "
                                 f"resourceVersion (version {parsed.v})")
    return parsed.rv, parsed.start


DEFAULT_VERSION: dict[str, str] = {
    "major": "1", "minor": "31", "gitVersion": "v1.31.4",
    "gitCommit": "a78aa47129b8539636eb86a9d00e31b2720fe06b", "gitTreeState": "clean",
    "buildDate": "2024-12-10T18:39:29Z", "goVersion": "go1.22.9", "compiler": "gc",
    "platform": "linux/amd64",
}
