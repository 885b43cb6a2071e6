"""Read ``nvidia-smi -q -x`` output by string search when it has nvidia-smi's own shape.

ElementTree builds an element for each of the ~250 tags of a GPU (about 2/3 of the
parse) although a report reads about forty. nvidia-smi prints one element per line,
indented one unit (a tab, or a fixed run of spaces) per level, with no comments, CDATA,
processing instructions or namespaces; in such a document a line starting with ``\\n``
+ *k* units + ``<`` is a tag at depth *k*, so "first child X of this element" is a
bounded ``str.find`` of ``\\n`` + units + ``<X``, and the element's content ends at the
first ``\\n`` + units + ``</X>`` after it.

That reading is sound only when the document really has that shape, and whatever the
tree parser rejects must still be rejected, so the fast path answers only after compiled
regular expressions have matched every character of the document against the shape: the
XML header (and optionally a DOCTYPE with an external id, no internal subset), then each
line is a text line (no ``<``), an element on one line (``<x>text</x>``, same name), a
self-closing ``<x/>``, or a start tag whose end tag, with the same name, is the next
line at the same indentation. Character classes admit only XML characters, the only
attribute is ``id="…"`` on ``<gpu>``, ``&`` must start one of the five predefined
entities (unescaped here exactly as expat does) and ``]]>`` is refused. A match proves
the document well formed, so expat accepts it too, and proves that indentation is depth.
The root's children and each GPU's children are matched with ``re.split``, which both
validates them and hands over each child's text, indexed by name.

Anything else makes ``read`` answer ``None``: another indentation, a comment or CDATA, a
character reference, another attribute, a ``<gpu>`` without an id, a repeated child name
the path must go through, nesting deeper than ``MAX_DEPTH``. The caller then runs the
tree parser, which stays the reference: it raises its own error for a malformed document
and reads a valid but unusual one. So this module changes speed only; the tests compare
both readers on every recorded nvidia-smi file and on generated variants, and check
that the recorded files do take this path.
"""

from __future__ import annotations

import re
from functools import lru_cache

#: Deepest element admitted below the root (nvidia-smi's deepest is 6, in
#: ``mig_devices``); a deeper document is left to the tree parser.
MAX_DEPTH = 9

_NAME = r"[A-Za-z_][A-Za-z0-9_.\-]*+"
#: XML characters but ``<``, line ends (expat would normalise a CR) and ``>`` (so that
#: ``]]>``, refused in text, cannot occur): no C0 controls, lone surrogates, U+FFFE/F.
_TEXT = r"[^<>\n\r\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]*+"
_ID = r"[^\"<>&\n\r\t\x00-\x1f\ud800-\udfff\ufffe\uffff]*+"
_HEADER = re.compile(
    r'<\?xml version="1\.0"(?: encoding="UTF-8")? ?\?>\n'
    r'(?:<!DOCTYPE nvidia_smi_log SYSTEM "[A-Za-z0-9_.\-]++">\n)?'
    r"<nvidia_smi_log>" + _TEXT + r"(?=\n([ \t]++)<)"
)
_ROOT_CLOSE = "</nvidia_smi_log>"
_ENTITIES = ("&lt;", "&gt;", "&quot;", "&apos;", "&amp;")
_UNITS = frozenset(["\t", *(" " * n for n in range(1, 9))])
_NAME_ENDS = frozenset(">/ ")


class NotCanonical(Exception):
    """The document is not in the shape read here; the tree parser decides."""


@lru_cache(maxsize=len(_UNITS))
def _shape(unit: str) -> tuple[re.Pattern[str], re.Pattern[str], tuple[str, ...]]:
    """For one indentation unit: the root's content (from the newline ending its start
    tag), a GPU's children by name, and the child-line prefix at each depth."""
    indent = re.escape(unit)
    text_line = rf"{_TEXT}\n"
    inner = text_line
    for depth in range(MAX_DEPTH, 0, -1):
        name, lead = f"n{depth}", rf"(?:{indent}){{{depth}}}"
        element = (
            rf"{lead}<(?P<{name}>{_NAME})(?: (?:(?<=<gpu )id=\"{_ID}\")?)?"
            rf"(?:>(?:{_TEXT}</(?P={name})>|{_TEXT}\n(?:{inner})*+{lead}</(?P={name})>)"
            rf"{_TEXT}\n|/>{_TEXT}\n)"
        )
        inner = f"{element}|{text_line}"
    content = re.compile(rf"\n(?:{inner})*+")
    children = re.compile(rf"\n{indent}{indent}<({_NAME})")
    seps = tuple("\n" + unit * depth + "<" for depth in range(MAX_DEPTH + 2))
    return content, children, seps


def _unescape(text: str) -> str:
    """The five predefined entities, ``&amp;`` last so ``&amp;lt;`` stays ``&lt;``."""
    for entity, char in zip(_ENTITIES, "<>\"'&", strict=True):
        text = text.replace(entity, char)
    return text


def _text_at(text: str, gt: int) -> str | None:
    """ElementTree's ``.text`` of the element whose start tag ends at ``gt``: the
    characters up to the next tag (trailing whitespace aside: every reader strips)."""
    if text[gt - 1] == "/":
        return None
    end = text.find("<", gt + 1)
    value = text[gt + 1 :] if end < 0 else text[gt + 1 : end]
    return _unescape(value) if "&" in value else value


def _tag(key: str) -> str:
    """The name in a start tag's inside (``x``, ``x/``, ``x /``, ``gpu id="…"``)."""
    return key.split(" ", 1)[0].removesuffix("/")


_STEPS: dict[str, tuple[str, ...]] = {}


def _steps(path: str) -> tuple[str, ...]:
    steps = _STEPS.get(path)
    if steps is None:
        steps = _STEPS[path] = tuple(path.split("/"))
    return steps


def _content_end(text: str, gt: int, close: str, hi: int) -> int:
    """Where the children of the element whose start tag ends at ``gt`` end: at its
    end-tag line ``close`` (``gt`` itself for ``<x/>`` and ``<x>text</x>``)."""
    if text[gt - 1] == "/":
        return gt
    line_end = text.find("\n", gt, hi)
    if text.find("<", gt, hi if line_end < 0 else line_end) >= 0:
        return gt
    end = text.find(close, gt, hi)
    if end < 0:
        raise NotCanonical(close)
    return end


def _locate(  # noqa: PLR0917 - a hot loop; keyword arguments cost a dict per call
    text: str, seps: tuple[str, ...], steps: tuple[str, ...], index: int, lo: int, hi: int,
    depth: int,
) -> int:
    """End of the start tag of the first element matching ``steps[index:]`` among the
    children (lines starting with ``seps[depth]``) in ``text[lo:hi]``, trying each
    same-named one in document order as ``find`` does; -1 when there is none."""
    if depth > MAX_DEPTH:
        raise NotCanonical("deeper than the shape")
    name = steps[index]
    needle = seps[depth] + name
    pos = text.find(needle, lo, hi)
    while pos >= 0:
        after = pos + len(needle)
        if text[after : after + 1] in _NAME_ENDS:
            gt = text.find(">", after)
            if index == len(steps) - 1:
                return gt
            end = _content_end(text, gt, f"{seps[depth]}/{name}>", hi)
            found = _locate(text, seps, steps, index + 1, gt, end, depth + 1)
            if found >= 0:
                return found
            after = end
        pos = text.find(needle, after, hi)
    return -1


class Element:
    """An element of a validated document: ``text[lo:hi]`` holds its children, the
    lines starting with ``seps[depth]``."""

    __slots__ = ("_depth", "_hi", "_lo", "_seps", "_text")

    def __init__(self, text: str, lo: int, hi: int, depth: int, seps: tuple[str, ...]) -> None:
        self._text, self._lo, self._hi, self._depth, self._seps = text, lo, hi, depth, seps

    def value(self, path: str) -> str | None:
        """``.text`` of ``find(path)``; None when absent or without text."""
        gt = _locate(self._text, self._seps, _steps(path), 0, self._lo, self._hi, self._depth)
        return None if gt < 0 else _text_at(self._text, gt)

    def sub(self, path: str) -> Element | None:
        """``find(path)``."""
        steps = _steps(path)
        text, seps = self._text, self._seps
        gt = _locate(text, seps, steps, 0, self._lo, self._hi, self._depth)
        if gt < 0:
            return None
        depth = self._depth + len(steps) - 1
        end = _content_end(text, gt, f"{seps[depth]}/{steps[-1]}>", self._hi)
        return Element(text, gt, end, depth + 1, seps)

    def children(self, tag: str) -> list[tuple[str, str | None]] | None:
        """(tag, text) of each child of ``find(tag)``; None when there is none."""
        table = self.sub(tag)
        return None if table is None else table._child_tags()

    def _child_tags(self) -> list[tuple[str, str | None]]:
        text, sep, hi = self._text, self._seps[self._depth], self._hi
        found = []
        pos = text.find(sep, self._lo, hi)
        while pos >= 0:
            begin = pos + len(sep)
            if text[begin] != "/":
                gt = text.find(">", begin)
                found.append((_tag(text[begin:gt]), _text_at(text, gt)))
            pos = text.find(sep, begin, hi)
        return found


class Gpu:
    """A ``<gpu>``: its children are indexed by name in one ``re.split`` (each child
    held as its text from just after its name); deeper steps are searched."""

    __slots__ = ("_children", "_names", "_repeated", "_seps")

    def __init__(self, text: str, children: re.Pattern[str], seps: tuple[str, ...]) -> None:
        parts = children.split(text)
        names, rests = parts[1::2], parts[2::2]
        self._children = dict(zip(reversed(names), reversed(rests), strict=True))
        self._repeated = len(self._children) != len(names)
        self._names, self._seps = names, seps

    def value(self, path: str) -> str | None:
        steps = _steps(path)
        child = self._first(steps)
        if child is None:
            return None
        gt = child.find(">")
        if len(steps) > 1:
            gt = _locate(child, self._seps, steps, 1, gt, len(child), 3)
            if gt < 0:
                return None
        return _text_at(child, gt)

    def sub(self, path: str) -> Element | None:
        steps = _steps(path)
        child = self._first(steps)
        if child is None:
            return None
        gt = child.find(">")
        top = Element(child, gt, gt if child[gt - 1] == "/" else len(child), 3, self._seps)
        return top if len(steps) == 1 else top.sub("/".join(steps[1:]))

    def children(self, tag: str) -> list[tuple[str, str | None]] | None:
        table = self.sub(tag)
        return None if table is None else table._child_tags()

    def _first(self, steps: tuple[str, ...]) -> str | None:
        """The first child named ``steps[0]``. ``find`` would look into a later one
        of the same name when a deeper step is missing in the first, so going through
        a repeated name is left to the tree parser."""
        child = self._children.get(steps[0])
        through = child is not None and len(steps) > 1
        if through and self._repeated and self._names.count(steps[0]) > 1:
            raise NotCanonical(f"<{steps[0]}> repeats")
        return child


def _entities_are_predefined(text: str) -> bool:
    return text.count("&") == sum(text.count(entity) for entity in _ENTITIES)


def read(text: str) -> tuple[dict[str, str | None], list[tuple[str, Gpu]]] | None:
    """The root's first text of each child name and each ``<gpu>`` as (id, element);
    None when the tree parser must decide."""
    header = _HEADER.match(text)
    footer = text.rfind(_ROOT_CLOSE)
    if header is None or footer < header.end() or header.group(1) not in _UNITS:
        return None
    if text[footer + len(_ROOT_CLOSE) :].strip(" \t\n"):
        return None
    content = text[header.end() : footer]
    if "&" in content and not _entities_are_predefined(content):
        return None
    shape, children, seps = _shape(header.group(1))
    if shape.fullmatch(content) is None:
        return None
    try:
        return _read_root(content, children, seps)
    except NotCanonical:
        return None


def _read_root(
    content: str, children: re.Pattern[str], seps: tuple[str, ...]
) -> tuple[dict[str, str | None], list[tuple[str, Gpu]]]:
    values: dict[str, str | None] = {}
    gpus: list[tuple[str, Gpu]] = []
    for piece in content.split(seps[1])[1:]:
        if piece[0] == "/":
            continue
        gt = piece.find(">")
        key = piece[:gt]
        name = _tag(key)
        if name == "gpu":
            if not key.startswith('gpu id="') or key[-1] != '"' or len(key) == 9:
                raise NotCanonical("a <gpu> without a plain id")
            gpus.append((key[8:-1], Gpu(piece, children, seps)))
        elif name not in values:
            values[name] = _text_at(piece, gt)
    return values, gpus
