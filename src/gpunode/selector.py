"""Kubernetes label selectors (``-l``/``--selector``), matched against node labels.

The syntax kubectl accepts: ``k=v``, ``k==v``, ``k!=v``, ``k``, ``!k``,
``k in (a,b)``, ``k notin (a,b)``, joined by commas (all must hold).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from gpunode.errors import UsageError

Requirement = Callable[[Mapping[str, str]], bool]

_SET = re.compile(r"^\s*(?P<key>[^\s!=(),]+)\s+(?P<op>in|notin)\s*\((?P<values>[^)]*)\)\s*$")
_EQ = re.compile(r"^\s*(?P<key>[^\s!=(),]+)\s*(?P<op>==|=|!=)\s*(?P<value>[^\s!=(),]*)\s*$")
_EXISTS = re.compile(r"^\s*(?P<neg>!?)\s*(?P<key>[^\s!=(),]+)\s*$")


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
