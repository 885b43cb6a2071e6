"""Decode a bundle's cluster/*.json into slim facts, once.

Only the fields the checks read are decoded (see kube.py); the cyclic garbage
collector is paused while decoding because the object graph of a large list
only grows, so collection passes would be pure overhead.
"""

from __future__ import annotations

import gc
import tarfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, TypeVar

import msgspec

from gpunode import limits
from gpunode.bundle import kube
from gpunode.bundle.pieces import PIECE_BYTES, ListFile, Piece
from gpunode.bundle.source import BundleSource, open_bundle
from gpunode.errors import BundleError
from gpunode.facts import (
    MAX_LOG_BYTES,
    MAX_SKIPPED_NAMES,
    ClusterFacts,
    LogFile,
    Manifest,
    NodeObservations,
    SkippedItems,
)
from gpunode.limits import (
    MAX_DOC_BYTES,
    MAX_FILE_BYTES,
    MAX_LIST_ITEMS,
    MAX_NODE_BYTES,
    MAX_NODE_FILE_BYTES,
    MAX_NODE_LOG_BYTES,
    MAX_NODE_LOG_LINES,
    MemoryBudget,
    cut_line,
)

T = TypeVar("T", bound=msgspec.Struct)
F = TypeVar("F", ClusterFacts, None)

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
    "configmaps": kube.ConfigMap,
    "resourceslices": kube.ResourceSlice,
    "computedomains": kube.ComputeDomain,
    "sriovnetworknodestates": kube.SriovNetworkNodeState,
}
#: Files a bundle may lack without anything being missing: extensions of format v1 that
#: older collectors did not write (their absence only leaves what they tell unknown), and
#: lists of APIs a cluster may not serve (DRA's resource.k8s.io, the DRA driver's CRD, the
#: SR-IOV Network Operator's node states).
OPTIONAL = frozenset({"configmaps", "resourceslices", "computedomains", "sriovnetworknodestates"})

_LIST_DECODERS = {name: msgspec.json.Decoder(kube.list_type(t)) for name, t in RESOURCES.items()}
_MANIFEST_DECODER = msgspec.json.Decoder(Manifest)


@contextmanager
def gc_paused(keep: bool = False) -> Iterator[None]:
    """Pause cyclic GC while a large object graph is built (collection passes over a graph
    that only grows would be pure overhead); restores the previous state.

    Re-enabled as is, the collector's next pass scans every object made while it was off
    (all of them still in the youngest generation): about a second for a 100,000-pod
    bundle, finding no garbage. ``keep``: what was built lives on (a command's facts and
    report, until it exits), so the outermost pause ends with ``gc.freeze()`` instead: the
    objects alive then are never scanned again, yet are freed by reference counting as
    usual. The next outermost ``keep`` pause (a watch loop's next round) first undoes that
    freeze with one full collection, so cyclic garbage is never kept for good.
    """
    was_enabled = gc.isenabled()
    if keep:
        keep_facts(None)  # an earlier round's facts (a watch loop) go before these are built
        if was_enabled:
            _release_frozen()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if keep:
                gc.freeze()
                _FROZEN[0] = True
            gc.enable()


#: Whether the permanent generation holds objects frozen by ``gc_paused`` (not someone else's).
_FROZEN = [False]


def _release_frozen() -> None:
    """Objects an earlier pause froze back to the oldest generation, and a full collection."""
    if _FROZEN[0]:
        _FROZEN[0] = False
        gc.unfreeze()
        gc.collect()


#: The facts a command judged last (keep_facts).
_KEPT: list[ClusterFacts] = []


def keep_facts(facts: F) -> F:
    """Keep ``facts`` alive until the next call (None: keep nothing). Freeing a large
    bundle's millions of objects one by one takes a fifth of a second (100,000 pods), and a
    command's process ends without it (cli.run: os._exit); a loop (watch) frees the facts
    of one round when it begins the next."""
    _KEPT[:] = [] if facts is None else [facts]
    return facts


def load_bundle(path: Path) -> ClusterFacts:
    """Open and decode a bundle (directory or archive) into cluster facts."""
    source = open_bundle(path)
    return load_source(source)


@contextmanager
def loaded_reading_ahead(path: Path) -> Iterator[ClusterFacts]:
    """``load_bundle`` for a command that judges the nodes right after loading: a large
    bundle folder's nodes/ is walked, and its nodes' files parsed, by a helper process
    while this one decodes the cluster lists (bundle/ahead.py; only where the nodes will be
    judged in worker processes anyway). The helper is gone when the block ends."""
    from gpunode.bundle.ahead import start_read_ahead

    source = open_bundle(path)
    ahead = start_read_ahead(source)
    try:
        facts = load_source(source)
        facts.ahead = ahead
        yield facts
    finally:
        if ahead is not None:
            ahead.close()


def load_source(source: BundleSource) -> ClusterFacts:
    """Decode every cluster resource present; record which sections are missing."""
    manifest = _load_manifest(source)
    _require_bundle(source)
    lists: dict[str, tuple[Any, ...]] = {}
    budget = _Budget()
    missing: list[str] = []
    lost = {m.path for m in manifest.missing}
    warnings: list[str] = []
    damaged: set[str] = set()
    skipped: dict[str, SkippedItems] = {}
    with gc_paused():
        for name in RESOURCES:
            rel = f"cluster/{name}.json"
            items = None if rel in lost else _load_list(source, name, warnings, budget, skipped)
            if items is None:
                if name not in OPTIONAL or rel in lost:
                    missing.append(rel)
            else:
                lists[name] = items
                damaged.update([name] if any(w.startswith(f"{rel}: item ") for w in warnings) else [])
    version = _load_version(source, warnings)
    if warnings:
        manifest = msgspec.structs.replace(manifest, partial=True,
                                           warnings=(*manifest.warnings, *_summarised(warnings)))
    facts = ClusterFacts.build(source, manifest, lists, tuple(missing), version)
    facts.damaged = frozenset(damaged)
    facts.skipped = {name: found for name, found in skipped.items() if found.count}
    facts.memory = budget.memory  # the node pass goes on counting from here
    facts.cluster_logs = _pod_logs(facts, (sp.key for pods in facts.cluster_side.values() for sp in pods))
    return facts


#: Item warnings shown per file before they are summed up (a fuzzed list can have thousands).
MAX_ITEM_WARNINGS = 5


def _summarised(warnings: list[str]) -> list[str]:
    out: list[str] = []
    per_file: dict[str, int] = {}
    more: list[str] = []
    for warning in warnings:
        if warning.endswith(" more malformed items skipped"):
            more.append(warning)  # already summed up where the items were read
            continue
        rel = warning.partition(": item ")[0]
        per_file[rel] = per_file.get(rel, 0) + 1
        if per_file[rel] <= MAX_ITEM_WARNINGS:
            out.append(warning)
    out += [f"{rel}: {n - MAX_ITEM_WARNINGS} more malformed items skipped"
            for rel, n in per_file.items() if n > MAX_ITEM_WARNINGS]
    return out + more


def _require_bundle(source: BundleSource) -> None:
    """A typo'd path or an unrelated folder is an error, not an empty (healthy) cluster."""
    opened = source.open("manifest.json")
    if opened is not None:
        opened[0].close()
        return
    if any(source.list(top) for top in ("cluster", "nodes", "logs")):
        return
    raise BundleError(f"{source.location}: not a gpunode bundle or GPU Operator must-gather "
                      "(no manifest.json and nothing under cluster/, nodes/ or logs/)")


def _load_manifest(source: BundleSource) -> Manifest:
    data = _read_doc(source, "manifest.json")
    if data is None:
        return Manifest(source="manual")
    try:
        manifest = _MANIFEST_DECODER.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        raise BundleError(f"{source.location}/manifest.json: {_short(exc)}") from None
    except RecursionError:
        raise BundleError(f"{source.location}/manifest.json: nested too deeply") from None
    if manifest.format and not manifest.format.startswith("gpunode-bundle/v1"):
        raise BundleError(
            f"{source.location}/manifest.json: unsupported format {manifest.format!r}"
            " (this gpunode reads gpunode-bundle/v1)"
        )
    return manifest


class _RawList(msgspec.Struct):
    """A list whose items are decoded one by one (the fast path found a bad one)."""

    kind: str = ""
    items: list[msgspec.Raw] = []


_RAW_LIST = msgspec.json.Decoder(_RawList)
_RAW_ITEMS = msgspec.json.Decoder(list[msgspec.Raw])
_ITEM_DECODERS = {name: msgspec.json.Decoder(t) for name, t in RESOURCES.items()}
_PIECE_DECODERS = {name: msgspec.json.Decoder(list[t]) for name, t in RESOURCES.items()}  # type: ignore[valid-type]


#: Memory the items of a piece may take once decoded, per byte of their JSON, at most: a list
#: of ``{}`` custom resources (three bytes, 126 decoded) is the worst measured (x42). Reserved
#: before each piece (or whole small list) is decoded, so no piece overshoots the budget.
DECODED_PER_BYTE = 48
#: The same per JSON value (``{``, ``[`` or ``,`` counted): where the byte reserve does not fit,
#: the values a piece holds are counted and it is decoded only if they fit.
DECODED_PER_VALUE = 160
#: Below this many bytes nothing is reserved: what it decodes into (3 MiB at most) is what
#: the check after it allows to pass the limit by.
RESERVED_FROM = 64 * 1024


class _Budget:
    """What decoding the cluster lists may cost: memory grown since loading began, and items."""

    def __init__(self) -> None:
        self.memory = MemoryBudget()

    def reserve(self, where: str, items: int, data: bytes) -> None:
        """Before ``data`` (whole items) is decoded: refuse it if what it can decode into does
        not fit. Tiny items cost what they decode into, not what they weigh, so the values are
        counted (at C speed) where the cheap bound by bytes says it may not fit."""
        if len(data) < RESERVED_FROM or not self.memory.over(len(data) * DECODED_PER_BYTE):
            return
        values = data.count(b"{") + data.count(b"[") + data.count(b",") + 1
        if self.memory.over(values * DECODED_PER_VALUE + len(data)):
            raise BundleError(f"{where}: reading stopped at item {items:,}: the bundle would take "
                              f"more than {limits.memory_limit_hint(self.memory.limit)}: its next "
                              f"{len(data):,} bytes hold up to {values:,} values")

    def check(self, where: str, items: int) -> None:
        if items > MAX_LIST_ITEMS:
            raise BundleError(f"{where}: more than {MAX_LIST_ITEMS:,} items (the limit for one list)")
        if self.memory.over():
            raise BundleError(f"{where}: reading stopped at item {items:,}: the bundle would take "
                              f"more than {limits.memory_limit_hint(self.memory.limit)}")


class _IdentMeta(msgspec.Struct, frozen=True):
    name: str = ""


class _IdentSpec(msgspec.Struct, frozen=True):
    nodeName: str = ""  # the API's field name


class _Named(msgspec.Struct, frozen=True):
    metadata: _IdentMeta = _IdentMeta()


class _Placed(msgspec.Struct, frozen=True):
    spec: _IdentSpec = _IdentSpec()


#: What a skipped item still says of itself: its name, and (a pod) its node.
_NAMED = msgspec.json.Decoder(_Named)
_PLACED = msgspec.json.Decoder(_Placed)


class _Skips:
    """Malformed items of one list: a few named in warnings, the rest counted (millions of
    junk items cost no memory); who they were, where still legible, in ``record``."""

    def __init__(self, rel: str, record: SkippedItems | None = None) -> None:
        self.rel, self.count = rel, 0
        self.record = record if record is not None else SkippedItems()

    def add(self, index: int, problem: str, warnings: list[str], item: bytes = b"") -> None:
        self.count += 1
        if self.count <= MAX_ITEM_WARNINGS:
            warnings.append(f"{self.rel}: item {index} skipped: {problem}")
        record = self.record
        record.count += 1
        record.first = record.first or f"item {index}: {problem}"
        if record.named:  # once one is anonymous any may be: nothing more to read (junk lists)
            name = _legible(_NAMED, item)
            if name is None or not name.metadata.name or len(record.names) >= MAX_SKIPPED_NAMES:
                record.named = False
            else:
                record.names.add(name.metadata.name)
        if record.placed:
            placed = _legible(_PLACED, item)
            if placed is None or len(record.nodes) >= MAX_SKIPPED_NAMES:
                record.placed = False
            elif placed.spec.nodeName:
                record.nodes.add(placed.spec.nodeName)

    def close(self, warnings: list[str]) -> None:
        if self.count > MAX_ITEM_WARNINGS:
            warnings.append(f"{self.rel}: {self.count - MAX_ITEM_WARNINGS} more malformed items skipped")


def _legible(decoder: msgspec.json.Decoder[T], item: bytes) -> T | None:
    try:
        return decoder.decode(item)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None


def _load_list(source: BundleSource, name: str, warnings: list[str],
               budget: _Budget, skipped: dict[str, SkippedItems] | None = None) -> tuple[Any, ...] | None:
    rel = f"cluster/{name}.json"
    opened = source.open(rel)
    if opened is None:
        return None
    handle, size = opened
    where = f"{source.location}/{rel}"
    with handle:
        if size > MAX_FILE_BYTES:
            source.read(rel)  # refuses it (before reading) with the source's own message
            raise BundleError(f"{where}: {size} bytes, over the {MAX_FILE_BYTES}-byte limit")
        record = (skipped if skipped is not None else {}).setdefault(name, SkippedItems())
        if size > PIECE_BYTES:
            return _load_pieces(ListFile(handle, size, where), name, rel, warnings, budget, record=record)
        data = _read_small(handle, where)
    budget.reserve(where, 0, data)
    items = _load_whole(where, name, rel, data, warnings, record=record)
    budget.check(where, len(items))
    return items


def _read_small(handle: IO[bytes], where: str) -> bytes:
    try:
        return handle.read(PIECE_BYTES + 1)
    except (OSError, EOFError, tarfile.TarError) as exc:
        raise BundleError(f"{where}: cannot read: {exc}") from None


def _load_whole(where: str, name: str, rel: str, data: bytes, warnings: list[str], *,
                record: SkippedItems | None = None) -> tuple[Any, ...]:
    """A small list (at most one piece) decoded at once."""
    try:
        decoded: Any = _LIST_DECODERS[name].decode(data)
    except (msgspec.ValidationError, RecursionError):
        decoded = _decode_items(where, name, rel, data, warnings, record=record)
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        raise BundleError(f"{where}: {_short(exc)}") from None
    _check_kind(where, name, getattr(decoded, "kind", ""))
    items: tuple[Any, ...] = tuple(getattr(decoded, "items", ()))
    return items


def _check_kind(where: str, name: str, kind: str) -> None:
    if kind and not kind.endswith("List"):
        raise BundleError(
            f"{where}: expected a List (kubectl get {name} -A -o json), found kind {kind!r}"
        )


def _load_pieces(lst: ListFile, name: str, rel: str, warnings: list[str],
                 budget: _Budget, *, record: SkippedItems | None = None) -> tuple[Any, ...]:
    """A large list decoded piece by piece (pieces.py), its memory checked after each piece."""
    _check_kind(lst.where, name, lst.kind)
    items: list[Any] = []
    skips = _Skips(rel, record)
    seen, pos = 0, lst.start
    while pos < lst.end:
        piece = lst.piece(pos)
        budget.reserve(lst.where, seen, piece.data)
        try:
            batch, count = _decode_piece(piece, name, seen, skips, warnings)
        except (msgspec.DecodeError, UnicodeDecodeError) as exc:
            if piece.exact:
                raise lst.malformed(piece, exc) from None
            piece = lst.piece(pos, exact=True)  # the cut fell inside an item: cut item by item
            try:
                batch, count = _decode_piece(piece, name, seen, skips, warnings)
            except (msgspec.DecodeError, UnicodeDecodeError) as again:
                raise lst.malformed(piece, again) from None
        if count == 0 and (seen or piece.next < lst.end):
            raise BundleError(f"{lst.where}: JSON is malformed: an empty item (byte {piece.offset})")
        items.extend(batch)
        seen += count
        pos = piece.next
        budget.check(lst.where, seen)
    skips.close(warnings)
    return tuple(items)


def _decode_piece(piece: Piece, name: str, first: int, skips: _Skips,
                  warnings: list[str]) -> tuple[list[Any], int]:
    """(items kept, items read) of one piece; a piece that is not JSON raises DecodeError."""
    try:
        batch: list[Any] = _PIECE_DECODERS[name].decode(piece.data)
        return batch, len(batch)
    except (msgspec.ValidationError, RecursionError):
        pass
    try:
        raw = _RAW_ITEMS.decode(piece.data)
    except RecursionError:
        raise BundleError(f"{skips.rel}: nested too deeply") from None
    return _item_by_item(raw, first, name, skips, warnings), len(raw)


def _decode_items(where: str, name: str, rel: str, data: bytes, warnings: list[str], *,
                  record: SkippedItems | None = None) -> _RawList:
    """Each item on its own: a malformed one is skipped with a warning naming file, index
    and field. Quantities written as numbers (hand-made bundles from YAML) are read as strings."""
    try:
        raw = _RAW_LIST.decode(data)
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else _short(exc)
        raise BundleError(f"{where}: {why}") from None
    skips = _Skips(rel, record)
    items = _item_by_item(raw.items, 0, name, skips, warnings)
    skips.close(warnings)
    return _RawList(kind=raw.kind, items=items)


def _item_by_item(raw: list[msgspec.Raw], first: int, name: str, skips: _Skips,
                  warnings: list[str]) -> list[Any]:
    decoder, item_type = _ITEM_DECODERS[name], RESOURCES[name]
    items: list[Any] = []
    for index, item in enumerate(raw, first):
        try:
            items.append(decoder.decode(item))
            continue
        except msgspec.ValidationError as exc:
            problem = _short(exc)
        except RecursionError:
            problem = "nested too deeply"
        fixed = _quantities_as_strings(item, item_type) if problem != "nested too deeply" else None
        if fixed is not None:
            items.append(fixed)
            continue
        skips.add(index, problem, warnings, item)
    return items


def _quantities_as_strings(item: bytes, item_type: type[msgspec.Struct]) -> Any:
    """The item with numeric resource quantities written as strings, or None if still invalid."""
    try:
        obj = msgspec.json.decode(item)
    except (msgspec.DecodeError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    for holder in _quantity_holders(obj):
        for key in ("limits", "requests", "capacity", "allocatable"):
            values = holder.get(key)
            if isinstance(values, dict):
                holder[key] = {k: _quantity_text(v) for k, v in values.items()}
    try:
        return msgspec.convert(obj, item_type)
    except (msgspec.ValidationError, RecursionError):
        return None


def _quantity_holders(obj: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    spec, status = obj.get("spec"), obj.get("status")
    if isinstance(status, dict):
        out.append(status)
    if isinstance(spec, dict):
        for key in ("containers", "initContainers"):
            for container in spec.get(key) or ():
                if isinstance(container, dict) and isinstance(container.get("resources"), dict):
                    out.append(container["resources"])
    return out


def _quantity_text(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return str(int(value)) if float(value).is_integer() else str(value)
    return value


def _load_version(source: BundleSource, warnings: list[str]) -> dict[str, str]:
    """The API server's /version answer; a damaged one is a warning (versions stay unknown)."""
    rel = "cluster/version.json"
    try:
        data = _read_doc(source, rel)
    except BundleError as exc:
        warnings.append(f"{rel}: ignored: {str(exc).rpartition(': ')[2]}")
        return {}
    if data is None:
        return {}
    try:
        raw = msgspec.json.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        warnings.append(f"{rel}: ignored: {_short(exc)}")
        return {}
    except RecursionError:
        warnings.append(f"{rel}: ignored: nested too deeply")
        return {}
    if not isinstance(raw, dict):
        warnings.append(f"{rel}: ignored: expected an object")
        return {}
    return {str(k): str(v) for k, v in raw.items() if isinstance(v, str | int | float | bool)}


def _read_doc(source: BundleSource, rel: str) -> bytes | None:
    """A small JSON document of the bundle (manifest, version), refused beyond MAX_DOC_BYTES."""
    data = source.read(rel, MAX_DOC_BYTES + 1)
    if data is not None and len(data) > MAX_DOC_BYTES:
        raise BundleError(f"{source.location}/{rel}: larger than {MAX_DOC_BYTES >> 20} MiB "
                          "(the limit for this file)")
    return data


def _short(exc: Exception) -> str:
    return str(exc).splitlines()[0]


def read_node_observations(facts: ClusterFacts, node: str) -> NodeObservations:
    """Read one node's command output, files, metrics and its stack pods' logs."""
    source = facts.source
    prefix = f"nodes/{node}/"
    tables: dict[str, dict[str, str]] = {"cmd": {}, "files": {}, "metrics": {}}
    wanted: list[tuple[str, str, str]] = []
    for rel in facts.node_files.get(node, ()):  # listed once for the whole bundle
        kind, _, name = rel[len(prefix) :].partition("/")
        if kind in tables and name:
            wanted.append((kind, name, rel))
    left = MAX_NODE_BYTES  # shared: a file gets at most what the files before it left
    read = source.read
    for kind, name, rel in wanted:  # a file cut at its limit (a cut XML then fails to parse: unknown)
        text = (read(rel, min(MAX_NODE_FILE_BYTES, left)) or b"").decode("utf-8", errors="replace")
        tables[kind][name] = text
        left -= len(text)
    logs = _node_logs(facts, node)
    parsed = facts.ahead.parsed(node, tables["cmd"]) if facts.ahead is not None else {}
    if parsed:
        return NodeObservations(node, tables["cmd"], tables["files"], tables["metrics"], logs, parsed)
    return NodeObservations(node, tables["cmd"], tables["files"], tables["metrics"], logs)


def _node_logs(facts: ClusterFacts, node: str) -> dict[tuple[str, str], tuple[LogFile, ...]]:
    """The logs of the node's stack pods and of its GPU workloads (what NCCL or CUDA said
    there is evidence of the node's stack, docs/bundle-format.md)."""
    logged = facts.logged_workloads_by_node.get(node, ())
    workloads = [(p.metadata.namespace, p.metadata.name) for p in logged] if logged else []
    if node not in facts.logged_nodes and not workloads:
        return {}  # most nodes: no pod on them has a log in the bundle
    stack = (sp.key for pods in facts.pods_by_node.get(node, {}).values() for sp in pods)
    return _pod_logs(facts, (*stack, *workloads))


def _pod_logs(facts: ClusterFacts,
              keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], tuple[LogFile, ...]]:
    wanted: dict[tuple[str, str], list[str]] = {}
    for key in keys:
        paths = facts.log_index.get(key, [])
        if paths:
            wanted[key] = paths
    share = _LogShare(sum(len(paths) for paths in wanted.values()))
    return {key: tuple(_log_file(facts.source, p, share) for p in paths) for key, paths in wanted.items()}


class _LogShare:
    """The logs read at once (one node's) share MAX_NODE_LOG_BYTES and MAX_NODE_LOG_LINES:
    each takes at most an even share of what is left (short lines cost ~57 bytes each
    held, so a 4 MiB log of empty lines would hold 114 MiB)."""

    def __init__(self, logs: int) -> None:
        self.logs, self.bytes, self.lines = logs, MAX_NODE_LOG_BYTES, MAX_NODE_LOG_LINES

    def take(self) -> tuple[int, int]:
        left = max(1, self.logs)
        return min(MAX_LOG_BYTES, self.bytes // left), self.lines // left

    def used(self, size: int, lines: int) -> None:
        self.logs, self.bytes, self.lines = self.logs - 1, self.bytes - size, self.lines - lines


def _log_file(source: BundleSource, rel: str, share: _LogShare) -> LogFile:
    _, namespace, pod, filename = rel.split("/")
    previous = filename.endswith(".previous.log")
    container = filename.removesuffix(".log").removesuffix(".previous")
    size, most = share.take()
    data = _tail(source, rel, size)
    text = data.decode("utf-8", errors="replace").splitlines()
    lines = tuple(cut_line(line) for line in (text[-most:] if most else ()))
    share.used(len(data), len(lines))
    return LogFile(rel, namespace, pod, container, previous, lines)


def _tail(source: BundleSource, rel: str, size: int) -> bytes:
    """The last ``size`` bytes of a file (a log of gigabytes is never read whole)."""
    opened = source.open(rel)
    if opened is None:
        return b""
    handle, total = opened
    with handle:
        try:
            handle.seek(max(0, total - size))
            return handle.read(size)
        except (OSError, EOFError, tarfile.TarError) as exc:
            raise BundleError(f"{source.location}/{rel}: cannot read: {exc}") from None
