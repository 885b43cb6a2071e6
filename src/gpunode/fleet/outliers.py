"""Peer outliers: the node that differs from the nodes it should be like, without an error.

Nodes are put in classes by what should make them alike (``profile.CLASS_KEYS``: GPU
product, node pool, instance type, MIG and sharing configuration). A node missing some
of those (a node whose GFD labels are gone has no product) joins the one class its known
keys fit, if exactly one does. Within a class, every compared aspect has a *peers' value*
only when a clear majority holds it (at least ``MIN_PEERS`` nodes and ``MAJORITY`` of those
with a known value); then a node without any root cause whose value is fewer (GPUs, link
width, NVLinks), another (versions, images), more than ``DEVIATION`` off (power limit), or
that lacks keys the peers have (labels, DCGM series) is flagged. A fleet split evenly (a
rolling upgrade half done, two node shapes without a pool label) has no majority and no
flags; a node that fails is left to its root cause.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from itertools import chain, repeat
from operator import attrgetter
from typing import Any

from gpunode.fleet.model import Outlier
from gpunode.fleet.profile import Profile

MIN_PEERS = 3
MAJORITY = 0.75
DEVIATION = 0.05
#: Keys listed by name in an outlier's value before "(+N more)".
KEYS_SHOWN = 4

_COUNT_WORDS = {
    "gpus.nvml": "fewer GPUs in NVML",
    "gpus.capacity": "fewer nvidia.com/gpu in capacity",
    "gpus.allocatable": "fewer allocatable nvidia.com/gpu",
    "gpus.labelled": "fewer GPUs in nvidia.com/gpu.count",
    "pcie.width": "narrower PCIe link (lowest GPU)",
    "nvlinks": "fewer active NVLinks",
}
_VERSION_WORDS = {
    "driver": "another driver version",
    "cuda": "another CUDA version",
    "kernel": "another kernel",
    "os": "another OS image",
    "runtime": "another container runtime version",
    "kubelet": "another kubelet version",
    "vbios": "another VBIOS",
}
_MEASURE_WORDS = {"power.limit": "another power limit (W, lowest GPU)"}
_SET_WORDS = {
    "labels.nvidia": "missing nvidia.com labels (GFD, operator)",
    "labels.nfd": "missing NFD labels",
    "metrics.dcgm": "missing DCGM series",
}
_KEY_WORDS = {"pool": "pool ", "instance_type": "", "mig": "MIG ", "sharing": "sharing ", "product": ""}


def version_words(aspect: str) -> str:
    if aspect.startswith("image."):
        return f"another {aspect.removeprefix('image.')} image"
    return _VERSION_WORDS.get(aspect, f"another {aspect}")


def find(profiles: Sequence[Profile]) -> list[Outlier]:
    """Every silent deviation, class by class, in the nodes' order."""
    order = {p.name: i for i, p in enumerate(profiles)}
    found = [o for label, members in classes(profiles) for o in _in_class(label, members)]
    return sorted(found, key=lambda o: (order[o.node], o.aspect))


def classes(profiles: Sequence[Profile]) -> list[tuple[str, list[Profile]]]:
    """The peer classes: nodes grouped by their class keys, nodes with unknown keys folded
    into the one class their known keys fit (when exactly one does)."""
    groups: dict[tuple[str | None, ...], list[Profile]] = defaultdict(list)
    names: tuple[str, ...] = ()
    for p in profiles:
        names = tuple(p.keys)
        groups[tuple(p.keys.values())].append(p)
    for key in sorted(groups, key=_known_count):
        if key not in groups or None not in key:
            continue
        fits = [other for other in groups if other != key and _fits(key, other)]
        if len(fits) == 1:
            groups[fits[0]].extend(groups.pop(key))
    return [(_label(names, key), members) for key, members in groups.items()]


def _known_count(key: tuple[str | None, ...]) -> int:
    return sum(v is not None for v in key)


def _fits(partial: tuple[str | None, ...], other: tuple[str | None, ...]) -> bool:
    """``other`` agrees with every known key of ``partial`` and knows more of them."""
    return (all(a is None or a == b for a, b in zip(partial, other, strict=True))
            and _known_count(other) > _known_count(partial))


def _label(names: tuple[str, ...], key: tuple[str | None, ...]) -> str:
    parts = [f"{_KEY_WORDS.get(n, n + ' ')}{v}" for n, v in zip(names, key, strict=True) if v is not None]
    return ", ".join(parts) or "all GPU nodes"


def _in_class(label: str, members: list[Profile]) -> Iterator[Outlier]:
    if len(members) <= MIN_PEERS:
        return
    yield from _counts(label, members)
    yield from _versions(label, members)
    yield from _measures(label, members)
    yield from _sets(label, members)


def _majority(values: Sequence[object]) -> tuple[object, int, bool] | None:
    """The value a clear majority of the known (not None) ``values`` holds, how many hold
    it, and whether every known value is that one: then no member differs, and the loop
    over a class's members is spared (most aspects of a pool of like nodes)."""
    tally = Counter(values)
    tally.pop(None, None)
    if not tally:
        return None
    value, held = tally.most_common(1)[0]
    known = held if len(tally) == 1 else sum(tally.values())
    if held < MIN_PEERS or held < MAJORITY * known:
        return None
    return value, held, held == known


def _aspects(members: list[Profile], table: str) -> list[str]:
    """Every aspect any member has in ``table``, in the order they first appear."""
    return list(dict.fromkeys(chain.from_iterable(map(attrgetter(table), members))))


def _values(tables: list[dict[str, Any]], aspect: str) -> list[Any]:
    """Each member's value of ``aspect`` in its table (None where it has none: no value is
    None), read once for finding the majority and the members that differ from it."""
    return list(map(dict.get, tables, repeat(aspect)))


def _counts(label: str, members: list[Profile]) -> Iterator[Outlier]:
    tables = [p.counts for p in members]
    for aspect in _aspects(members, "counts"):
        values = _values(tables, aspect)
        found = _majority(values)
        if found is None or found[2]:
            continue
        peers_value, held, _ = found
        assert isinstance(peers_value, int)
        for p, value in zip(members, values, strict=True):
            if value is not None and value < peers_value and not p.failing:
                yield Outlier(p.name, label, aspect, _COUNT_WORDS.get(aspect, f"fewer {aspect}"),
                              str(peers_value), str(value), held, len(members))


def _versions(label: str, members: list[Profile]) -> Iterator[Outlier]:
    tables = [p.versions for p in members]
    for aspect in _aspects(members, "versions"):
        values = _values(tables, aspect)
        found = _majority(values)
        if found is None or found[2]:
            continue
        peers_value, held, _ = found
        for p, value in zip(members, values, strict=True):
            if value is not None and value != peers_value and not p.failing:
                yield Outlier(p.name, label, f"version.{aspect}", version_words(aspect),
                              str(peers_value), value, held, len(members))


def _measures(label: str, members: list[Profile]) -> Iterator[Outlier]:
    tables = [p.measures for p in members]
    for aspect in _aspects(members, "measures"):
        values = _values(tables, aspect)
        found = _majority(values)
        if found is None or found[2]:
            continue
        peers_value, held, _ = found
        assert isinstance(peers_value, float)
        for p, value in zip(members, values, strict=True):
            if value is None or p.failing or abs(value - peers_value) <= DEVIATION * abs(peers_value):
                continue
            yield Outlier(p.name, label, aspect, _MEASURE_WORDS.get(aspect, f"another {aspect}"),
                          f"{peers_value:g}", f"{value:g}", held, len(members))


def _sets(label: str, members: list[Profile]) -> Iterator[Outlier]:
    for aspect in _aspects(members, "sets"):
        having = Counter(p.sets[aspect] for p in members if aspect in p.sets)  # few distinct sets
        known = sum(having.values())
        if known <= MIN_PEERS or len(having) == 1:  # (one set: every member that has it holds it)
            continue
        frequency: Counter[str] = Counter()
        for keys, times in having.items():
            for key in keys:
                frequency[key] += times
        least = max(MIN_PEERS, MAJORITY * known)
        expected = frozenset(k for k, n in frequency.items() if n >= least)
        for p in members:
            held = p.sets.get(aspect)
            if held is None or p.failing or expected <= held:
                continue
            missing = sorted(expected - held)
            shown = ", ".join(missing[:KEYS_SHOWN]) + (
                f" (+{len(missing) - KEYS_SHOWN} more)" if len(missing) > KEYS_SHOWN else "")
            yield Outlier(p.name, label, aspect, _SET_WORDS.get(aspect, f"missing {aspect}"),
                          f"{len(expected)} present", f"{len(missing)} missing: {shown}",
                          min(frequency[k] for k in missing), len(members))
