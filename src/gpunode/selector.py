"""Kubernetes label selectors (``-l``/``--selector``), matched against node labels.

The syntax kubectl accepts: ``k=v``, ``k==v``, ``k!=v``, ``k``, ``!k``,
``k in (a,b)``, ``k notin (a,b)``, joined by commas (all must hold).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from gpunode.errors import UsageError
from gpunode.relazy import lazy_compile

if TYPE_CHECKING:
    from gpunode.facts import ClusterFacts

Requirement = Callable[[Mapping[str, str]], bool]

_SET = lazy_compile(r"^\s*(?P<key>[^\s!=(),]+)\s+(?P<op>in|notin)\s*\((?P<values>[^)]*)\)\s*$")
_EQ = lazy_compile(r"^\s*(?P<key>[^\s!=(),]+)\s*(?P<op>==|=|!=)\s*(?P<value>[^\s!=(),]*)\s*$")
_EXISTS = lazy_compile(r"^\s*(?P<neg>!?)\s*(?P<key>[^\s!=(),]+)\s*$")


def parse_selector(text: str) -> Requirement:
    """A predicate over a label mapping; UsageError (exit 2) on a malformed selector."""
    requirements = [_requirement(part, text) for part in _split(text)]
    return lambda labels: all(req(labels) for req in requirements)


def _split(text: str) -> list[str]:
    """Commas separate requirements except inside ``( … )``."""
    parts, depth, current = [], 0, ""
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return [p for p in parts if p.strip()]


def _requirement(part: str, whole: str) -> Requirement:
    if m := _SET.match(part):
        key, values = m["key"], {v.strip() for v in m["values"].split(",") if v.strip()}
        if m["op"] == "in":
            return lambda labels: labels.get(key) in values
        return lambda labels: labels.get(key) not in values
    if m := _EQ.match(part):
        key, value = m["key"], m["value"]
        if m["op"] == "!=":
            return lambda labels: labels.get(key) != value
        return lambda labels: labels.get(key) == value
    if m := _EXISTS.match(part):
        key = m["key"]
        if m["neg"]:
            return lambda labels: key not in labels
        return lambda labels: key in labels
    raise UsageError(f"--selector {whole!r}: cannot parse {part.strip()!r}")


def select_nodes(
    labels: Mapping[str, Mapping[str, str]], names: Sequence[str], selector: str | None, where: str
) -> list[str]:
    """The nodes a command is about: the names given, narrowed by ``selector``; ``[]`` means
    every node. Unknown names or a selector that matches nothing: UsageError (exit 2)."""
    unknown = [n for n in names if n not in labels]
    if unknown:
        raise UsageError(f"{where}: no node named {', '.join(unknown)}")
    wanted = list(names)
    if selector is None:
        return wanted
    matches = parse_selector(selector)
    chosen = [name for name, node_labels in labels.items() if matches(node_labels)]
    wanted = [n for n in wanted if n in chosen] if wanted else chosen
    if not wanted:
        raise UsageError(f"{where}: no node matches --selector {selector!r}")
    return wanted


def bundle_node_labels(facts: ClusterFacts) -> dict[str, Mapping[str, str]]:
    """Every node a bundle knows, with its labels (a node seen only by its folder has none)."""
    labels: dict[str, Mapping[str, str]] = {n: node.metadata.labels for n, node in facts.nodes.items()}
    labels.update({name: {} for name in facts.node_dirs if name not in labels})
    return labels
