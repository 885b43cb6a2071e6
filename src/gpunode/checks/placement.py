"""Where a DaemonSet puts pods, and why a node got none: its pod template's nodeSelector
and required node affinity read against the node's labels, as the scheduler reads them.

A DaemonSet that does not select a GPU node because a label is absent is not that
component's failure when another component should have set the label: NFD's
``feature.node.kubernetes.io/*``, GFD's ``nvidia.com/gpu.product`` and the like, the GPU
Operator's ``nvidia.com/gpu.present`` / ``gpu.deploy.*`` (which it sets only where NFD
labelled an NVIDIA PCI device). Who sets which label is catalog data (``sets_labels``).
Pure functions: the checks call them with the facts.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gpunode.bundle.kube import DaemonSet, SelectorRequirement, TemplateSpec
from gpunode.catalog import Catalog
from gpunode.checks.operator import classed_form_passed_over, has_nvidia_pci_label


@dataclass(frozen=True)
class Unmet:
    """One requirement of a DaemonSet's placement that the node's labels do not meet."""

    key: str
    #: the requirement as written ("key=value", "key In (a, b)", "key Exists")
    wanted: str
    #: the node's value of the label; None when the node lacks it
    has: str | None


def unmet(template: TemplateSpec, labels: Mapping[str, str]) -> tuple[Unmet, ...]:
    """What keeps the template off a node with ``labels``; empty when it selects the node.
    Of several affinity terms (alternatives) the one with the fewest unmet requirements is
    given, the first among equals (a chart lists its usual term first)."""
    selector = template.node_selector.items()
    out = [Unmet(k, f"{k}={v}", labels.get(k)) for k, v in selector if labels.get(k) != v]
    terms = template.affinity.terms if template.affinity else ()
    if terms:
        misses: list[list[Unmet]] = [
            [m for req in term.match_expressions if (m := _unmet(req, labels)) is not None] for term in terms]
        if all(misses):
            fewest: list[Unmet] = min(misses, key=len)
            out.extend(fewest)
    return tuple(out)


def selects(template: TemplateSpec, labels: Mapping[str, str]) -> bool:
    """Whether the template's nodeSelector and required node affinity select the node."""
    if any(labels.get(k) != v for k, v in template.node_selector.items()):
        return False
    terms = template.affinity.terms if template.affinity else ()
    return not terms or any(all(_unmet(r, labels) is None for r in t.match_expressions) for t in terms)


def _unmet(req: SelectorRequirement, labels: Mapping[str, str]) -> Unmet | None:
    has = labels.get(req.key)
    op, values = req.operator, req.values
    shown = f"{req.key} {op} ({', '.join(values)})" if values else f"{req.key} {op}"
    if op == "In":
        ok = has is not None and has in values
    elif op == "NotIn":
        ok = has is None or has not in values
    elif op == "Exists":
        ok = has is not None
    elif op == "DoesNotExist":
        ok = has is None
    elif op in ("Gt", "Lt") and len(values) == 1:
        ok = _compare(has, values[0], op)
    else:
        return None  # an operator this reading does not know: not held against the node
    return None if ok else Unmet(req.key, shown, has)


def _compare(has: str | None, bound: str, op: str) -> bool:
    try:
        value, limit = int(has or ""), int(bound)
    except ValueError:
        return False
    return value > limit if op == "Gt" else value < limit


def _operator_reads_gpu(labels: Mapping[str, str]) -> bool:
    """NFD labelled an NVIDIA PCI device in a form the operator in use reads: not only in a
    class+vendor form it did not take up (``classed_form_passed_over``)."""
    return has_nvidia_pci_label(labels) and not classed_form_passed_over(labels)


def setter(catalog: Catalog, key: str, labels: Mapping[str, str]) -> str | None:
    """The component that sets label ``key`` on a node (``sets_labels`` in the catalog).
    The GPU Operator sets its labels only where NFD labelled an NVIDIA PCI device: with
    that label absent, NFD is the one that has not done its part."""
    if key in _SET_WHERE:
        needed = _SET_WHERE[key]
        if labels.get(needed) != "true":
            return None  # the operator deliberately leaves it off this node
        return "gpu-operator" if _operator_reads_gpu(labels) else "nfd"
    for component in catalog.components:
        if any(fnmatch.fnmatchcase(key, pattern) for pattern in component.sets_labels):
            if component.id == "gpu-operator" and not _operator_reads_gpu(labels):
                return "nfd"
            if component.id == "nfd" and not _nfd_owes(key, labels):
                return None
            return component.id
    return None


#: The GPU Operator's state labels it sets only where another label says the node needs that
#: operand: the MIG manager's where GFD labelled a MIG-capable GPU (the operator's
#: hasMIGCapableGPU, nvidia.com/mig.capable=true). Elsewhere its absence is the operator's choice.
_SET_WHERE = {"nvidia.com/gpu.deploy.mig-manager": "nvidia.com/mig.capable"}


def _nfd_owes(key: str, labels: Mapping[str, str]) -> bool:
    """Whether NFD should have set ``key`` on this GPU node: any of its labels when it has
    set none at all (it never labelled the node), else only an NVIDIA PCI label (the node
    has NVIDIA GPUs); another absent feature label (a Mellanox NIC's ``pci-15b3``) is a
    feature the node does not have."""
    if not any(k.startswith(_NFD_PREFIX) for k in labels):
        return True
    return key.startswith(f"{_NFD_PREFIX}pci-") and "10de" in key


_NFD_PREFIX = "feature.node.kubernetes.io/"


@dataclass(frozen=True)
class Awaited:
    """A DaemonSet kept off a node only by labels another component should set."""

    daemonset: DaemonSet
    setter: str
    unmet: tuple[Unmet, ...]

    @property
    def evidence(self) -> str:
        ds = self.daemonset.metadata
        wanted = ", ".join(u.wanted for u in self.unmet)
        has = "; ".join(f"node has {u.key}={u.has}" for u in self.unmet if u.has is not None)
        return f"daemonset {ds.namespace}/{ds.name} selects {wanted}{f' ({has})' if has else ''}"


def awaited(catalog: Catalog, daemonsets: Sequence[DaemonSet], labels: Mapping[str, str]) -> Awaited | None:
    """The first of ``daemonsets`` that misses the node only for labels one known component
    sets and has not set (absent, not another value: a label set to "false" is a choice)."""
    for ds in daemonsets:
        missing = unmet(ds.spec.template.spec, labels)
        if not missing or any(u.has is not None for u in missing):
            continue
        setters = {setter(catalog, u.key, labels) for u in missing}
        if len(setters) == 1 and (who := setters.pop()) is not None:
            return Awaited(ds, who, missing)
    return None
