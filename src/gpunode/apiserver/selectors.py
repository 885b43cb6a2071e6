"""Label and field selectors, parsed and matched the way the API server does.

Pure functions: a selector string becomes a tuple of requirements, and a
requirement is tested against a mapping. Parse errors raise ``SelectorError``
so the server can answer 400 like the real one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from gpunode.relazy import lazy_compile


class SelectorError(ValueError):
    """The selector string is malformed (the API answers 400 BadRequest)."""


@dataclass(frozen=True)
class Requirement:
    """``key <op> values``; op is one of = != in notin exists !exists gt lt."""

    key: str
    op: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        return _OPS[self.op](labels.get(self.key), self.values)


def _gt(value: str | None, values: tuple[str, ...]) -> bool:
    return value is not None and _as_int(value) > _as_int(values[0])


def _lt(value: str | None, values: tuple[str, ...]) -> bool:
    return value is not None and _as_int(value) < _as_int(values[0])


def _as_int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        return 0


_OPS: dict[str, Callable[[str | None, tuple[str, ...]], bool]] = {
    "=": lambda v, vals: v is not None and v == vals[0],
    "!=": lambda v, vals: v is None or v != vals[0],
    "in": lambda v, vals: v is not None and v in vals,
    "notin": lambda v, vals: v is None or v not in vals,
    "exists": lambda v, _vals: v is not None,
    "!exists": lambda v, _vals: v is None,
    "gt": _gt,
    "lt": _lt,
}

_SET_RE = lazy_compile(r"^\s*(!?)\s*([A-Za-z0-9._/-]+)\s*(?:(notin|in)\s*\(([^)]*)\))?\s*$")
_EQ_RE = lazy_compile(r"^\s*([A-Za-z0-9._/-]+)\s*(==|!=|=|>|<)\s*([A-Za-z0-9._-]*)\s*$")
_KEY_RE = lazy_compile(
    r"^([A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?/)?[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$")


def parse_label_selector(text: str) -> tuple[Requirement, ...]:
    """Parse ``a=b,c in (x,y),!d`` into requirements (empty string: match all)."""
    return tuple(_parse_label_term(term) for term in _split_terms(text))


def _split_terms(text: str) -> list[str]:
    """Split on commas that are not inside parentheses."""
    terms: list[str] = []
    depth = start = 0
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    stripped = [t.strip() for t in terms]
    return [] if stripped == [""] else stripped


def _parse_label_term(term: str) -> Requirement:
    eq = _EQ_RE.match(term)
    if eq:
        key, op, value = eq.groups()
        op = {"==": "=", ">": "gt", "<": "lt"}.get(op, op)
        return Requirement(_checked_key(key), op, (value,))
    st = _SET_RE.match(term)
    if not st:
        raise SelectorError(f"unable to parse requirement: {term!r}")
    neg, key, op, values = st.groups()
    if op is None:
        return Requirement(_checked_key(key), "!exists" if neg else "exists")
    if neg:
        raise SelectorError(f"unable to parse requirement: {term!r}")
    return Requirement(_checked_key(key), op, tuple(v.strip() for v in values.split(",")))


def _checked_key(key: str) -> str:
    if not _KEY_RE.match(key):
        raise SelectorError(f"invalid label key {key!r}")
    return key


def parse_field_selector(text: str) -> tuple[Requirement, ...]:
    """Parse ``spec.nodeName=x,metadata.namespace!=y`` (only = == != exist for fields)."""
    return tuple(_parse_field_term(t) for t in _split_unescaped(text, ",") if t)


def _parse_field_term(term: str) -> Requirement:
    for op in ("!=", "==", "="):
        parts = _split_unescaped(term, op, maxsplit=1)
        if len(parts) == 2:
            kind = "!=" if op == "!=" else "="
            return Requirement(parts[0].strip(), kind, (_unescape(parts[1]),))
    raise SelectorError(f"invalid selector: {term!r}; can't understand it")


def _split_unescaped(text: str, sep: str, maxsplit: int = -1) -> list[str]:
    """Split on ``sep`` unless it follows a backslash (field values escape , = and \\)."""
    parts: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            current.append(text[i : i + 2])
            i += 2
        elif text.startswith(sep, i) and (maxsplit < 0 or len(parts) < maxsplit):
            parts.append("".join(current))
            current, i = [], i + len(sep)
        else:
            current.append(text[i])
            i += 1
    parts.append("".join(current))
    return parts


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


def matches_all(requirements: tuple[Requirement, ...], values: Mapping[str, str]) -> bool:
    return all(req.matches(values) for req in requirements)
