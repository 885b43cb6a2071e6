"""The component catalog: validated data describing the GPU node stack.

The catalog is data (``data/components.toml``) so adding a component is one
entry, and the recogniser, the diagnosis order and the report all follow it.
"""

from __future__ import annotations

import fnmatch
import re
import threading
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources
from operator import attrgetter
from typing import TYPE_CHECKING, Literal

import msgspec

from gpunode.datatoml import load_data_toml
from gpunode.errors import BundleError

if TYPE_CHECKING:
    from gpunode.bundle.kube import Container, OwnerRef


class Component(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One catalog entry; see the header of components.toml for the fields."""

    id: str
    layer: int
    title: str
    purpose: str
    kind: Literal["host", "pod", "cluster"]
    required: bool
    scope: Literal["node", "cluster"] = "node"
    depends_on: tuple[str, ...] = ()
    deployed_by: str | None = None
    host_alternative: bool = False
    daemonsets: tuple[str, ...] = ()
    pod_labels: tuple[str, ...] = ()
    images: tuple[str, ...] = ()
    containers: tuple[str, ...] = ()
    named_by: tuple[str, ...] = ()
    #: node labels this component sets (globs): a DaemonSet kept off a node for want of
    #: one waits for this component (gpunode.checks.placement)
    sets_labels: tuple[str, ...] = ()
    #: components whose job this one does instead on a node where its pod runs (HAMi, the
    #: GKE plugin or the DRA driver in place of NVIDIA's device plugin): the replaced one is
    #: then not-deployed there, not missing (gpunode.checks.context.replaced_by)
    replaces: tuple[str, ...] = ()
    #: the containers of this component's pod that do the replacing (the DRA driver's
    #: ``gpus``; its ``compute-domains`` alone allocates no GPU); empty: any pod does
    replaces_containers: tuple[str, ...] = ()
    #: extended resources (globs) this component advertises to the kubelet: a running pod
    #: with none of them allocatable on its node advertises nothing (gpunode.checks.alternatives)
    advertises: tuple[str, ...] = ()
    #: false: a node where this component is not deployed (no pod, nothing of its own found)
    #: leaves it out of its report instead of listing it not-deployed: a component of a stack
    #: most GPU clusters do not run (the SR-IOV Network Operator's config daemon). Only an
    #: optional pod-run node component.
    reported_absent: bool = True


class _CatalogFile(msgspec.Struct, forbid_unknown_fields=True):
    component: list[Component]


@dataclass(frozen=True)
class Catalog:
    """Components in bottom-up order, plus the indexes the recogniser needs."""

    components: tuple[Component, ...]

    def __post_init__(self) -> None:
        _validate(self.components)

    @cached_property
    def by_id(self) -> Mapping[str, Component]:
        return {c.id: c for c in self.components}

    @cached_property
    def _naming(self) -> tuple[tuple[str, re.Pattern[str]], ...]:
        """Each component's ``named_by`` patterns as one regex, lowest layer first."""
        named = sorted((c for c in self.components if c.named_by), key=lambda c: c.layer)
        return tuple((c.id, re.compile("|".join(f"(?:{p})" for p in c.named_by))) for c in named)

    def named_in(self, line: str) -> str | None:
        """The lowest-layer component an error line names (``named_by``), or None: an
        error raised while creating a container belongs to the layer it names."""
        for cid, pattern in self._naming:
            if pattern.search(line):
                return cid
        return None

    def all_named_in(self, line: str) -> tuple[str, ...]:
        """Every component an error line names (``named_by``), lowest layer first: what a
        component's own operation failing names besides it (``named_in`` takes the first)."""
        return tuple(cid for cid, pattern in self._naming if pattern.search(line))

    def advertisers(self, resource: str) -> tuple[str, ...]:
        """The node components that can advertise the extended resource ``resource`` (their
        ``advertises`` globs): one for volcano.sh/*, several for nvidia.com/gpu."""
        return tuple(c.id for c in self.node_components()
                     if any(fnmatch.fnmatchcase(resource, g) for g in c.advertises))

    @cached_property
    def ids(self) -> tuple[str, ...]:
        """The components' ids, in catalog order (asked once per node)."""
        return tuple([c.id for c in self.components])

    def get(self, component_id: str) -> Component:
        try:
            return self.by_id[component_id]
        except KeyError:
            raise KeyError(f"unknown component id {component_id!r}") from None

    @cached_property
    def unreported_absent(self) -> frozenset[str]:
        """The components a node's report leaves out where they are not deployed
        (``reported_absent = false``)."""
        return frozenset(c.id for c in self.components if not c.reported_absent)

    def node_components(self) -> tuple[Component, ...]:
        return self._node_components

    @cached_property
    def _node_components(self) -> tuple[Component, ...]:
        return tuple(c for c in self.components if c.scope == "node")

    def cluster_components(self) -> tuple[Component, ...]:
        return tuple(c for c in self.components if c.scope == "cluster")

    def dependencies(self, component_id: str) -> frozenset[str]:
        """Every component ``component_id`` depends on, transitively."""
        try:
            return self._dependencies[component_id]
        except KeyError:
            raise KeyError(f"unknown component id {component_id!r}") from None

    @cached_property
    def _dependencies(self) -> dict[str, frozenset[str]]:
        """Every component's transitive dependencies (asked for every node's traced causes)."""
        return {c.id: self._closure(c.id) for c in self.components}

    def _closure(self, component_id: str) -> frozenset[str]:
        out: set[str] = set()
        todo = list(self.get(component_id).depends_on)
        while todo:
            dep = todo.pop()
            if dep not in out:
                out.add(dep)
                todo.extend(self.get(dep).depends_on)
        return frozenset(out)

    def replacers(self, component_id: str) -> tuple[Component, ...]:
        """Components that can do ``component_id``'s job instead (``replaces``)."""
        return self._replacers.get(component_id, ())

    @cached_property
    def _replacers(self) -> dict[str, tuple[Component, ...]]:
        out: dict[str, list[Component]] = {}
        for comp in self.components:
            for target in comp.replaces:
                out.setdefault(target, []).append(comp)
        return {k: tuple(v) for k, v in out.items()}

    def dependents(self, component_id: str) -> tuple[str, ...]:
        """Components that list ``component_id`` in depends_on or deployed_by."""
        return tuple(
            c.id for c in self.components if component_id in c.depends_on or c.deployed_by == component_id
        )


def _validate(components: Sequence[Component]) -> None:
    """Reject duplicate ids, unknown references and cycles: the catalog is a DAG."""
    ids = [c.id for c in components]
    dupes = {i for i in ids if ids.count(i) > 1}
    if dupes:
        raise ValueError(f"duplicate component ids: {sorted(dupes)}")
    known = set(ids)
    for comp in components:
        refs = [*comp.depends_on, *comp.replaces, *([comp.deployed_by] if comp.deployed_by else [])]
        unknown = [r for r in refs if r not in known]
        if unknown:
            raise ValueError(f"component {comp.id!r} refers to unknown {unknown}")
        _validate_replaces(comp, components)
        if not comp.reported_absent and (comp.required or comp.kind != "pod" or comp.scope != "node"):
            raise ValueError(f"component {comp.id!r}: reported_absent = false needs an optional "
                             "pod-run node component")
    topological_order(components)


def _validate_patterns(components: Sequence[Component]) -> None:
    """Every ``images`` and ``named_by`` pattern compiles (``re.error`` where one does not)."""
    for comp in components:
        for pattern in (*comp.images, *comp.named_by):
            re.compile(pattern)


def _validate_replaces(comp: Component, components: Sequence[Component]) -> None:
    """A component replaces only other pod-run node components, never itself, and names
    replacing containers only when it replaces something."""
    if comp.replaces_containers and not comp.replaces:
        raise ValueError(f"component {comp.id!r}: replaces_containers without replaces")
    if not comp.replaces:
        return
    if comp.kind != "pod" or comp.scope != "node":
        raise ValueError(f"component {comp.id!r}: only a pod-run node component replaces another")
    by_id = {c.id: c for c in components}
    for target in comp.replaces:
        other = by_id[target]
        if target == comp.id or other.kind != "pod" or other.scope != "node" or other.replaces:
            raise ValueError(f"component {comp.id!r} cannot replace {target!r}: "
                             "only another pod-run node component that replaces nothing itself")


def topological_order(components: Sequence[Component]) -> list[str]:
    """Ids ordered so every component comes after what it depends on."""
    deps = {c.id: set(c.depends_on) for c in components}
    order: list[str] = []
    ready = sorted((i for i, d in deps.items() if not d), key=lambda i: _layer(components, i))
    while ready:
        current = ready.pop(0)
        order.append(current)
        for cid, needs in deps.items():
            if current in needs:
                needs.discard(current)
                if not needs and cid not in order and cid not in ready:
                    ready.append(cid)
    if len(order) != len(deps):
        cyclic = sorted(set(deps) - set(order))
        raise ValueError(f"dependency cycle among components: {cyclic}")
    return order


def _layer(components: Sequence[Component], cid: str) -> int:
    return next(c.layer for c in components if c.id == cid)


def parse_catalog(text: str, origin: str = "components.toml", *, patterns: bool = True) -> Catalog:
    """Decode and validate catalog TOML; errors name the file. ``patterns``: also compile
    every ``images`` and ``named_by`` pattern on its own."""
    try:
        raw = load_data_toml(text)
        parsed = msgspec.convert(raw, _CatalogFile)
        ordered = sorted(parsed.component, key=lambda c: c.layer)
        if patterns:
            _validate_patterns(ordered)
        return Catalog(tuple(ordered))
    except (tomllib.TOMLDecodeError, msgspec.ValidationError, ValueError, re.error) as exc:
        raise BundleError(f"{origin}: invalid component catalog: {exc}") from exc


def load_catalog() -> Catalog:
    """Read once per process; the lock matters because msgspec builds its type
    information on first use, and doing that from two threads at once can crash
    (server threads of the test API server all call this)."""
    with _LOAD_LOCK:
        return _load_catalog()


_LOAD_LOCK = threading.Lock()


@cache
def _load_catalog() -> Catalog:
    """The catalog shipped with the package (read once per process). Its patterns are
    compiled where they are used (the recogniser's images; ``named_by`` joined, for a
    component's lines), not one by one here: the test suite compiles the shipped ones
    (``parse_catalog``), and doing it at each start cost about 13 ms."""
    text = resources.files("gpunode").joinpath("data/components.toml").read_text("utf-8")
    return parse_catalog(text, patterns=False)


class Recogniser:
    """Maps a pod to the catalog component it belongs to.

    Order of evidence, most reliable first: the owning controller's name, pod
    labels, main container names, then main container images (which survive
    renamed Helm releases). Init containers are ignored: operands share the
    validator image in their init containers.
    """

    def __init__(self, catalog: Catalog) -> None:
        self._owner_globs = sorted(((g, c.id) for c in catalog.components for g in c.daemonsets),
                                   key=_glob_rank)
        self._labels = {_split_label(lbl): c.id for c in catalog.components for lbl in c.pod_labels}
        self._containers = {n: c.id for c in catalog.components for n in c.containers}
        self._images = [(re.compile(p), c.id) for c in catalog.components for p in c.images]
        self._label_items = frozenset(self._labels)
        self._owner_memo: dict[str, str | None] = {}
        self._owners_memo: dict[tuple[OwnerRef, ...], str | None] = {}
        self._image_memo: dict[str, str | None] = {}

    def component_of(
        self,
        owner_names: Iterable[str],
        labels: Mapping[str, str],
        containers: Iterable[tuple[str, str]],
    ) -> str | None:
        """The component id for a pod, or None when it is not part of the stack."""
        containers = list(containers)
        return (
            self._by_owner(owner_names)
            or self._by_labels(labels)
            or self._by_container_names(name for name, _image in containers)
            or self._by_images(image for _name, image in containers)
        )

    def component_of_pod(self, owners: tuple[OwnerRef, ...], labels: Mapping[str, str],
                         containers: Sequence[Container]) -> str | None:
        """``component_of`` for a decoded pod (one call per pod of a 100,000-pod list):
        its owner references (hashable) looked up at once, its labels tested against
        the catalog's with one set operation before they are searched in order."""
        found = self._owners_memo.get(owners, _UNSEEN)
        if found is _UNSEEN:
            found = self._owners_memo[owners] = self._by_owner([_owner_base(o.kind, o.name) for o in owners])
        if found:
            return found
        if not self._label_items.isdisjoint(labels.items()):
            return self._by_labels(labels)
        return (self._by_container_names(map(_NAME, containers))
                or self._by_images(map(_IMAGE, containers)))

    def _by_owner(self, owner_names: Iterable[str]) -> str | None:
        for owner in owner_names:
            cid = self._owner_component(owner)
            if cid:
                return cid
        return None

    def _owner_component(self, owner: str) -> str | None:
        """Glob match, memoised: thousands of pods share a handful of owners."""
        if owner not in self._owner_memo:
            self._owner_memo[owner] = next(
                (cid for glob, cid in self._owner_globs if fnmatch.fnmatchcase(owner, glob)), None
            )
        return self._owner_memo[owner]

    def _by_labels(self, labels: Mapping[str, str]) -> str | None:
        for item in labels.items():
            cid = self._labels.get(item)
            if cid:
                return cid
        return None

    def _by_container_names(self, names: Iterable[str]) -> str | None:
        known = self._containers
        for name in names:
            cid = known.get(name)
            if cid:
                return cid
        return None

    def _by_images(self, images: Iterable[str]) -> str | None:
        for image in images:
            cid = self._image_component(image)
            if cid:
                return cid
        return None

    def _image_component(self, image: str) -> str | None:
        """Pattern search, memoised: a fleet runs a few hundred images at most."""
        if image not in self._image_memo:
            self._image_memo[image] = next((cid for p, cid in self._images if p.search(image)), None)
        return self._image_memo[image]


def _glob_rank(entry: tuple[str, str]) -> tuple[bool, int]:
    """Most specific owner glob first: exact names, then the most literal characters (the
    driver's ``nvidia-*-driver-*`` must not take ``nvidia-dra-driver-gpu-kubelet-plugin``);
    ties keep catalog order (the sort is stable)."""
    glob = entry[0]
    return any(ch in glob for ch in "*?["), -len(glob.replace("*", ""))


#: Not yet looked up (no component id is this).
_UNSEEN = "\0"
#: A decoded container's name and image.
_NAME, _IMAGE = attrgetter("name"), attrgetter("image")


def _owner_base(kind: str, name: str) -> str:
    """ReplicaSet "gpu-operator-5f7d9c" → Deployment-like name "gpu-operator"."""
    if kind == "ReplicaSet" and "-" in name:
        return name.rsplit("-", 1)[0]
    return name


def _split_label(label: str) -> tuple[str, str]:
    key, _, value = label.partition("=")
    return key, value
