"""Shared factors: what the nodes failing with one cause have in common and the others lack.

For every root cause found on at least ``MIN_FAILING`` nodes and every factor (kernel, OS
image, container runtime and kubelet versions, driver and CUDA versions, VBIOS, the stack's
images, node pool, instance type, GPU product, zone), the nodes are split by the factor's
value (nodes where it is unknown stay out of that factor). A value is named when at least
``MIN_FAILING`` of its nodes fail with the cause, it holds at least half of the failing
nodes, the cause is more common on it than off it, and some nodes do not have it. Its score
is the failing nodes with it over the nodes with it or failing without it: 1.0 when exactly
the value's nodes fail. Values are ranked by score, then by how many failing nodes they
cover; a value that holds every node tells nothing and is never named.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from itertools import chain

from gpunode.fleet.model import Correlation
from gpunode.fleet.profile import Profile

MIN_FAILING = 2
MIN_SCORE = 0.5
#: Values named per cause, best first.
PER_CAUSE = 3
#: Factor names as a person reads them, in the order ties are broken.
FACTOR_WORDS = {
    "kernel": "kernel",
    "os": "OS image",
    "driver": "driver",
    "image.driver": "driver image",
    "cuda": "CUDA",
    "image.container-toolkit": "toolkit image",
    "image.device-plugin": "device plugin image",
    "image.gfd": "GFD image",
    "image.dcgm-exporter": "DCGM exporter image",
    "image.mig-manager": "MIG manager image",
    "runtime": "container runtime",
    "kubelet": "kubelet",
    "vbios": "VBIOS",
    "pool": "node pool",
    "instance_type": "instance type",
    "gpu_product": "GPU",
    "zone": "zone",
}
_RANK = {name: i for i, name in enumerate(FACTOR_WORDS)}


def find(profiles: Sequence[Profile]) -> list[Correlation]:
    """Named factors for every cause on enough nodes, best first."""
    failing: dict[str, list[Profile]] = defaultdict(list)
    for p in profiles:
        for cause in p.causes:
            failing[cause].append(p)
    causes = [c for c, nodes in failing.items() if len(nodes) >= MIN_FAILING]
    if not causes:
        return []
    totals = _value_totals(profiles)
    out: list[Correlation] = []
    for cause in sorted(causes):
        found = [c for factor, counts in totals.items()
                 if (c := _best(factor, counts, failing[cause], cause)) is not None]
        found.sort(key=_order)
        out.extend(found[:PER_CAUSE])
    out.sort(key=_order)
    return out


def _value_totals(profiles: Sequence[Profile]) -> dict[str, Counter[str]]:
    """How many nodes hold each value of each factor (counted once for every cause). The
    (factor, value) pairs of all nodes are counted in one C loop, then grouped by factor
    (each factor and value in the order first seen, as one Python loop would give)."""
    pairs: Counter[tuple[str, str]] = Counter(chain.from_iterable(p.factors.items() for p in profiles))
    totals: dict[str, Counter[str]] = defaultdict(Counter)
    for (factor, value), count in pairs.items():
        totals[factor][value] = count
    return totals


def _best(factor: str, counts: Counter[str], failing: list[Profile], cause: str) -> Correlation | None:
    """The factor's value that best marks the failing nodes, if one does."""
    if len(counts) < 2:
        return None  # every node (with a known value) has the same one
    hit = Counter(p.factors[factor] for p in failing if factor in p.factors)
    known_failing = sum(hit.values())
    known = sum(counts.values())
    best: Correlation | None = None
    for value, with_failing in hit.items():
        nodes_with = counts[value]
        without_failing = known_failing - with_failing
        nodes_without = known - nodes_with
        if with_failing < MIN_FAILING or 2 * with_failing < known_failing or nodes_without == 0:
            continue
        if with_failing * nodes_without <= without_failing * nodes_with:
            continue  # no more common on this value than off it
        score = with_failing / (nodes_with + without_failing)
        if score < MIN_SCORE:
            continue
        text = (f"{FACTOR_WORDS.get(factor, factor)} {value}: {with_failing} of {nodes_with} nodes on it "
                f"fail {cause}; {without_failing} of {nodes_without} others")
        found = Correlation(factor, value, cause, with_failing, nodes_with, without_failing,
                            nodes_without, round(score, 3), text)
        if best is None or _order(found) < _order(best):
            best = found
    return best


def _order(c: Correlation) -> tuple[float, int, int, str, str]:
    return (-c.score, -c.failing_with, _RANK.get(c.factor, len(_RANK)), c.cause, c.value)
