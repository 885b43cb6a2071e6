"""NVLink domains judged together: the nodes of one domain (an NVL72 rack's trays, a
partition of it) should all be in it, as many as in the other domains of their GPU product,
with their links up on both sides.

A domain is named as GPU Feature Discovery labels it (``nvidia.com/gpu.clique``:
``<ClusterUUID>.<CliqueId>``); a node's GPUs say the same through the fabric section
(the probe's NVML fabric info, or ``nvidia-smi -q -x``'s ``<fabric>``), carried here in
``Observed.domains``. The rack is the cluster UUID: the GPUs of one NVLink fabric.

Three things are flagged, each naming the node (or the domain's nodes) and the domain:

- ``node_outside_domain``: a node labelled in a domain whose GPUs report no clique or
  another one, or whose GPUs report a clique of their rack that none of its rack peers
  share while at least two of them share one;
- ``domain_short``: fewer nodes than the largest domain of the same GPU product, where at
  least half of that product's other domains have that many;
- ``links_one_sided``: a node of the domain with NVLinks down while every other node of the
  domain has all its links active (its peers' side of the links is up).

Pure functions over facts; a node with nothing known about its domain takes no part.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gpunode.fleet.model import Domain, DomainFlag

#: GPU Feature Discovery's label of a node's NVLink domain (``<ClusterUUID>.<CliqueId>``).
CLIQUE_LABEL = "nvidia.com/gpu.clique"


@dataclass(frozen=True)
class Member:
    """One node as its domain sees it; ``None``: not known."""

    name: str
    #: GFD's clique label, where the node carries one
    label: str | None
    product: str | None
    #: per GPU on a fabric, its ``<ClusterUUID>.<CliqueId>`` ("" for a GPU with no clique)
    gpu_domains: tuple[str, ...] | None
    #: NVLinks active and present on the node, where read
    links: tuple[int, int] | None


def rack_of(domain: str) -> str:
    """The cluster UUID of ``<ClusterUUID>.<CliqueId>`` (the part before the last dot)."""
    return domain.rpartition(".")[0] or domain


def _clique_of(domain: str) -> str:
    return domain.rpartition(".")[2]


def _gpus_say(member: Member) -> str | None:
    """The domain most of the node's GPUs report, or None when none reports one."""
    known = Counter(d for d in member.gpu_domains or () if d)
    return known.most_common(1)[0][0] if known else None


def find(members: Sequence[Member]) -> list[Domain]:
    """Every NVLink domain the nodes are in, its nodes, and what is wrong with it."""
    claimed = {m.name: d for m in members if (d := m.label or _gpus_say(m))}
    flags: dict[str, list[DomainFlag]] = {}
    by_name = {m.name: m for m in members}
    for name, expected in _outside(members, claimed).items():
        claimed[name] = expected
        flags.setdefault(expected, []).append(_outside_flag(by_name[name], expected))
    nodes: dict[str, list[str]] = {}
    for name, domain in sorted(claimed.items()):
        nodes.setdefault(domain, []).append(name)
    products = {d: _product(by_name, names) for d, names in nodes.items()}
    for domain, names in nodes.items():
        flags.setdefault(domain, []).extend(_one_sided(by_name, domain, names))
    usual = _usual_sizes(nodes, products)
    out: list[Domain] = []
    for domain, names in sorted(nodes.items()):
        size = usual.get(domain)
        found = flags.get(domain, [])
        if size is not None and len(names) < size:
            found.insert(0, DomainFlag(
                kind="domain_short", node=None,
                text=(f"NVLink domain {domain} has {len(names)} node(s); the other domains of "
                      f"{products[domain] or 'its GPU product'} have {size}")))
        out.append(Domain(domain=domain, cluster_uuid=rack_of(domain), clique=_clique_of(domain),
                          product=products[domain], nodes=tuple(names), usual_nodes=size,
                          flags=tuple(found)))
    return out


def _outside(members: Sequence[Member], claimed: Mapping[str, str]) -> dict[str, str]:
    """Nodes that should be in a domain their GPUs are not in → that domain."""
    out: dict[str, str] = {}
    for m in members:
        said = m.gpu_domains or ()
        if m.label and said and any(d != m.label for d in said):
            out[m.name] = m.label
    rack_cliques: dict[str, Counter[str]] = {}
    for domain in claimed.values():
        rack_cliques.setdefault(rack_of(domain), Counter())[domain] += 1
    for m in members:
        own = claimed.get(m.name)
        if own is None or m.label or m.name in out:
            continue
        others = rack_cliques[rack_of(own)].copy()
        others[own] -= 1
        peers = +others
        if others[own] == 0 and len(peers) == 1:
            (shared, count), = peers.items()
            if count >= 2:
                out[m.name] = shared
    return out


def _outside_flag(m: Member, expected: str) -> DomainFlag:
    said = sorted({d or "no clique" for d in m.gpu_domains or ()})
    whose = "its label says" if m.label == expected else "its rack peers share"
    return DomainFlag(
        kind="node_outside_domain", node=m.name,
        text=(f"{m.name} is missing from NVLink domain {expected} ({whose} it): "
              f"its GPUs report {', '.join(said)}"))


def _one_sided(by_name: Mapping[str, Member], domain: str, names: Sequence[str]) -> list[DomainFlag]:
    """Nodes with links down while every other node's links in the domain are all up."""
    known = {n: links for n in names if (links := by_name[n].links) is not None}
    all_up = {n for n, (active, present) in known.items() if active == present > 0}
    usual = Counter(present for n, (_, present) in known.items() if n in all_up)
    out: list[DomainFlag] = []
    for name, (active, present) in known.items():
        peers = len(known) - 1
        if active >= present or peers == 0 or len(all_up) < peers:
            continue
        out.append(DomainFlag(
            kind="links_one_sided", node=name,
            text=(f"{name}: {active} of {present} NVLinks active in domain {domain}, while "
                  f"its {peers} peer(s) there have all their links up "
                  f"({usual.most_common(1)[0][0]} each)")))
    return out


def _product(by_name: Mapping[str, Member], names: Sequence[str]) -> str | None:
    known = Counter(p for n in names if (p := by_name[n].product))
    return known.most_common(1)[0][0] if known else None


def _usual_sizes(nodes: Mapping[str, Sequence[str]], products: Mapping[str, str | None]) -> dict[str, int]:
    """Per domain, the node count its product's domains should have: the largest, where at
    least half of the product's other domains have it (none for a product's only domain)."""
    out: dict[str, int] = {}
    for domain, names in nodes.items():
        product = products[domain]
        if product is None:
            continue
        others = [len(n) for d, n in nodes.items() if d != domain and products[d] == product]
        if not others:
            continue
        largest = max(others)
        if largest > len(names) and 2 * sum(1 for s in others if s == largest) >= len(others):
            out[domain] = largest
        elif largest <= len(names):
            out[domain] = max(largest, len(names))
    return out
