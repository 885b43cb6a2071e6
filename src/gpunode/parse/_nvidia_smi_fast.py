"""Read ``nvidia-smi -q -x`` output by string search when it has nvidia-smi's own shape.

ElementTree builds an element for each of the ~250 tags of a GPU (about 2/3 of the
parse) although a report reads about forty. nvidia-smi prints one element per line,
indented one unit (a tab, or a fixed run of spaces) per level, with no comments, CDATA,
processing instructions or namespaces. In such a document a line starting with ``\\n``
+ *k* units + ``<`` is a tag at depth *k*: the first child X of an element is a
``str.find`` of ``\\n`` + units + ``<X`` (followed by ``>``, a space or ``/``, so
``<gpu_temp_tlimit>`` is not ``<gpu_temp>``) within the element's text, which ends at
the first ``\\n`` + units + ``</X>`` after its start. A deeper element of the same name
(``<fb_memory_usage>`` of a MIG device under ``<mig_devices>``) has more indentation
and is never taken for the GPU's own.

That is sound only for a document of that shape, and what the tree parser rejects must
still be rejected, so ``read`` answers only after one compiled regular expression has
matched every character of the document: the XML header (optionally a DOCTYPE with an
external id and no internal subset), then lines that are text (no ``<`` or ``>``), an
element on one line (``<x>text</x>``, the same name twice), a self-closing ``<x/>``, or
a start tag whose end tag, the same name, is the next line at the same indentation, down
to ``MAX_DEPTH``. Its character classes admit only XML characters (no C0 controls but
tab, no CR, no lone surrogates, U+FFFE or U+FFFF); the only attribute admitted is
``id="…"`` on ``<gpu>``; ``&`` must start one of the five predefined entities, unescaped
here as expat does. A match proves the document well formed, so expat accepts it too,
and that indentation is depth. There is no corruption this path accepts and the tree
parser rejects: a truncated, doubled, interleaved or garbled document fails the match.

Anything else answers ``None`` and the caller runs the tree parser, which stays the
reference: it raises its own error for a malformed document and reads a valid but
unusual one (another indentation, a comment, a character reference, an attribute
elsewhere, a ``<gpu>`` without an id, a repeated child that a path must look past).
So this module changes speed only; the tests compare both readers on every recorded
nvidia-smi file and on mutated documents, and check that recorded files take this path.
"""

from __future__ import annotations

import re
from functools import lru_cache

from gpunode.relazy import lazy_compile

#: Deepest element admitted below the root (nvidia-smi's deepest is 6, in
#: ``mig_devices``); a deeper document is left to the tree parser.
MAX_DEPTH = 9

_NAME = r"[A-Za-z_][A-Za-z0-9_.\-]*+"
#: XML characters but ``<``, line ends (expat would normalise a CR) and ``>`` (so that
#: ``]]>``, refused in text, cannot occur): no C0 controls, lone surrogates, U+FFFE/F.
_TEXT = r"[^<>\n\r\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]*+"
_ID = r"[^\"<>&\n\r\t\x00-\x1f\ud800-\udfff\ufffe\uffff]*+"
_HEADER = lazy_compile(
    r'<\?xml version="1\.0"(?: encoding="UTF-8")? ?\?>\n'
    r'(?:<!DOCTYPE nvidia_smi_log SYSTEM "[A-Za-z0-9_.\-]++">\n)?'
    r"<nvidia_smi_log>" + _TEXT + r"(?=\n([ \t]++)<)"
)
_ROOT_CLOSE = "</nvidia_smi_log>"
_ENTITIES = ("&lt;", "&gt;", "&quot;", "&apos;", "&amp;")
_UNITS = frozenset(["\t", *(" " * n for n in range(1, 9))])
_NAME_ENDS = frozenset(">/ ")
_ODD = "<odd>"  # a text holds no "<": never a child's text
#: Per child-line prefix: (name, text) of each plain child ``<x>text``.
_CHILD_TEXTS: dict[str, re.Pattern[str]] = {}


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
        name, lead = f"n{depth}", re.escape(unit * depth)  # (a literal: fewer steps than a counted repeat)
        element = (
            rf"{lead}<(?P<{name}>{_NAME})(?: (?:(?<=<gpu )id=\"{_ID}\")?)?"
            rf"(?:>(?:{_TEXT}</(?P={name})>|{_TEXT}\n(?:{inner})*+{lead}</(?P={name})>)"
            rf"{_TEXT}\n|/>{_TEXT}\n)"
        )
        inner = f"{element}|{text_line}"
    content = re.compile(rf"\n(?:{inner})*+")
    children = re.compile(rf"\n{indent}{indent}<({_NAME})")
    seps = tuple("\n" + unit * depth + "<" for depth in range(MAX_DEPTH + 2))
    for sep in seps:
        _CHILD_TEXTS[sep] = re.compile(re.escape(sep) + rf"({_NAME})>([^<]*+)")
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


def path_steps(path: str) -> tuple[str, ...]:
    """``a/b/c`` as ``("a", "b", "c")``, split once per path (forty paths read per GPU)."""
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
        gt = _locate(self._text, self._seps, path_steps(path), 0, self._lo, self._hi, self._depth)
        return None if gt < 0 else _text_at(self._text, gt)

    def sub(self, path: str) -> Element | None:
        """``find(path)``."""
        steps = path_steps(path)
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

    def leaves(self) -> dict[str, str | None]:
        """``.text`` of each child by tag, the first of each name (``value(tag)`` of each)."""
        out: dict[str, str | None] = {}
        for tag, text in self._child_tags():
            out.setdefault(tag, text)
        return out

    def _child_tags(self) -> list[tuple[str, str | None]]:
        text, sep, lo, hi = self._text, self._seps[self._depth], self._lo, self._hi
        if all(text.find(odd, lo, hi) < 0 for odd in ("/>", " >", "&", "<gpu ")):
            return _CHILD_TEXTS[sep].findall(text, lo, hi)
        found = []
        pos = text.find(sep, lo, hi)
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

    __slots__ = ("_children", "_names", "_parents", "_repeated", "_seps")

    def __init__(self, text: str, children: re.Pattern[str], seps: tuple[str, ...]) -> None:
        parts = children.split(text)
        names, rests = parts[1::2], parts[2::2]
        self._children = dict(zip(reversed(names), reversed(rests), strict=True))
        self._repeated = len(self._children) != len(names)
        self._names, self._seps = names, seps
        self._parents: dict[str, Element | None] = {}

    def value(self, path: str) -> str | None:
        steps = _STEPS.get(path) or path_steps(path)  # (path_steps and _first inlined: forty reads a GPU)
        child = self._children.get(steps[0])
        if child is None:
            return None
        if len(steps) > 1 and self._repeated and self._names.count(steps[0]) > 1:
            raise NotCanonical(f"<{steps[0]}> repeats")
        if len(steps) == 2:  # most reads: a leaf of a section, one search
            found = self._leaf(child, steps[1])
            if found != _ODD:
                return found
        elif len(steps) > 2:
            # The first element on the path's parent steps, kept for the other leaves
            # read there: when it holds the leaf, that is find()'s answer too (no
            # earlier candidate has the parent steps at all); else search them all.
            parent_path, _, leaf = path.rpartition("/")
            parents = self._parents
            parent = parents[parent_path] if parent_path in parents else self._parent(parent_path)
            found = None if parent is None else parent.value(leaf)
            if found is not None:
                return found
        gt = child.find(">")
        if len(steps) > 1:
            gt = _locate(child, self._seps, steps, 1, gt, len(child), 3)
            if gt < 0:
                return None
        return _text_at(child, gt)

    def leaves(self) -> dict[str, str | None]:
        """``value(tag)`` of each child tag (the first of each name, as ``value`` reads)."""
        return {name: _text_at(rest, rest.find(">")) for name, rest in self._children.items()}

    def _leaf(self, child: str, name: str) -> str | None:
        """Text of the first ``<name>text`` child line of ``child``; None when there is
        none, ``_ODD`` when it is ``<name/>`` or ``<name …>`` (read by ``_locate``)."""
        needle = self._seps[3] + name
        pos = child.find(needle)
        while pos >= 0:
            end = pos + len(needle)
            if child[end] == ">":
                value = child[end + 1 : child.find("<", end)]
                return _unescape(value) if "&" in value else value
            if child[end] in _NAME_ENDS:
                return _ODD
            pos = child.find(needle, end)
        return None

    def _parent(self, path: str) -> Element | None:
        parent = self._parents[path] = self.sub(path)
        return parent

    def sub(self, path: str) -> Element | None:
        steps = path_steps(path)
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
    None when the tree parser must decide. Any ``<!`` past the header (``<!ENTITY``
    included, which the tree parser refuses) fails the shape."""
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
