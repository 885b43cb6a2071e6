"""Read ``nvidia-smi -q -x`` output by the lines of a document of the same shape read before.

The nodes of a pool print the same document but for a few values (the timestamp, each
GPU's serial, UUID, temperatures and power draw): the same lines, in the same order,
with other text between a leaf's tags. The string reader (``_nvidia_smi_fast``) proves
each document's shape with a regular expression over every line and then searches each
field's text; here a document that the string reader has read is kept, by its number of
lines, and the next one with as many lines is compared with it line by line (in C:
``map(operator.ne)``). When every line that differs is, in both, a leaf of the same
name at the same indentation (``<x>text</x>``, the kept one's line in the simple form
below) and the new text is plain XML text without ``&``, the new document has the kept
one's shape, so it is well formed too, and every field is read from the line that holds
it in the kept one: an index of line numbers made once per kept document.

The index is made only for a document in a simple form of the string reader's shape:
every line below the root is ``<x>`` (maybe with text after it), ``</x>``, ``<x/>``,
``<x />``, ``<x>text</x>``, the root's ``<gpu id="…">`` or a line of text (texts without
``&``). Its answers are ElementTree's: ``find(path)`` of a
plain child path is the first element in document order whose tags from the GPU down
are the path's (each candidate parent is tried in document order, and every element
under an earlier parent comes before those under a later one); the text of an element
is the string reader's (up to the next tag). A path below a section that repeats is
left to the other readers (``NotCanonical``). Anything else answers ``None``, and the
caller reads the document as before; the tests compare this reader with the tree
parser on every recorded file, with its values changed and its lines edited.
"""

from __future__ import annotations

from itertools import compress, count
from operator import ne

from gpunode.parse._nvidia_smi_fast import NotCanonical
from gpunode.relazy import lazy_compile

_NAME = r"[A-Za-z_][A-Za-z0-9_.\-]*+"
#: One line below the root in the simple form: its indentation, then a start tag (of
#: ``<gpu>`` with its id), an end tag, an empty element or a leaf with its text.
_LINE = lazy_compile(
    rf"(?P<lead>[ \t]*+)<(?:/(?P<end>{_NAME})>"
    rf"|(?P<name>{_NAME})(?: id=\"(?P<id>[^\"<>&\n\r\t\x00-\x1f\ud800-\udfff\ufffe\uffff]++)\")?"
    rf"(?:>(?P<text>[^<>&\n\r\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]*+)(?P<leaf></(?P=name)>)?"
    rf"|(?P<empty> ?/)>))"
)
#: A leaf's new text: XML characters but markup, ``&`` and line ends (as the string
#: reader's text class, less ``&``, so no entity needs reading).
_PLAIN = lazy_compile(r"[^<>&\n\r\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]*+")
_ROOT_OPEN, _ROOT_CLOSE = "<nvidia_smi_log>", "</nvidia_smi_log>"
#: Documents kept by number of lines, the most recently read first: at most these many
#: of each count, and these many characters in all (a longer document is not kept).
_PER_COUNT, _CHARS = 4, 4 << 20


class _Shape:
    """The index of one GPU's lines: its ``<gpu>`` line, the first line of each path
    from the GPU down, the paths held by more than one element, each line's tag and
    each element's children's lines."""

    __slots__ = ("children", "line", "paths", "repeated", "tags")

    def __init__(self, line: int) -> None:
        self.line = line
        self.paths: dict[str, int] = {}
        self.repeated: set[str] = set()
        self.tags: dict[int, str] = {}
        self.children: dict[int, list[int]] = {}


class Index:
    """What a kept document's lines hold: each line's text (the string reader's), the
    leaf lines whose text may differ in a document of the same shape (line → text's
    start and end), the root's first line of each child name and each GPU's shape."""

    __slots__ = ("gpus", "leaves", "made", "root", "texts")

    def __init__(self, texts: list[str | None], leaves: dict[int, tuple[int, int]],
                 root: dict[str, int], gpus: list[tuple[str, _Shape]]) -> None:
        self.texts, self.leaves, self.root, self.gpus = texts, leaves, root, gpus
        #: What the caller made of each GPU of this document (``Reading.made``).
        self.made: list[object] = [None] * len(gpus)


class _Kept:
    """A document the string reader has read: its lines, its length, its pieces split at
    each line of a GPU's child (``sep``) and the line each piece starts, and their index
    once asked (``indexed``; ``None`` when the document is not in the simple form)."""

    __slots__ = ("index", "indexed", "lines", "pieces", "sep", "size", "starts")

    def __init__(self, text: str) -> None:
        self.lines, self.size, self.sep = text.split("\n"), len(text), _separator(text)
        self.pieces = text.split(self.sep)
        self.starts = [0]
        for piece in self.pieces[:-1]:
            self.starts.append(self.starts[-1] + piece.count("\n") + 1)
        self.index: Index | None = None
        self.indexed = False


def _separator(text: str) -> str:
    """A line end, two units of the document's indentation and a tag: where a GPU's child
    starts. (Any separator would do: it only decides how large the pieces compared are.)"""
    at = text.find(_ROOT_OPEN + "\n") + len(_ROOT_OPEN) + 1
    head = text[at : at + 16]
    unit = head[: len(head) - len(head.lstrip(" \t"))] or "\t"
    return "\n" + unit * 2 + "<"


#: The documents kept by separator and number of pieces.
_KEPT: dict[str, dict[int, list[_Kept]]] = {}
_SIZE = [0]  # characters of the documents kept


def remember(text: str) -> None:
    """Keep a document the string reader has read."""
    size = len(text)
    if size > _CHARS:
        return
    if _SIZE[0] + size > _CHARS:
        _KEPT.clear()
        _SIZE[0] = 0
    known = _Kept(text)
    kept = _KEPT.setdefault(known.sep, {}).setdefault(len(known.pieces), [])
    kept.insert(0, known)
    _SIZE[0] += size - sum(old.size for old in kept[_PER_COUNT:])
    del kept[_PER_COUNT:]


class Reading:
    """A document read by a kept one's line numbers: the root's first text of each child
    name, each GPU as (id, element), the lines that differ from the kept document's, and
    for each GPU what the caller made of the kept document's (``made``, shared by every
    document read by it) and a reader of the kept document's GPU that notes the lines it
    reads (``noting``)."""

    __slots__ = ("changed", "gpus", "index", "values")

    def __init__(self, values: dict[str, str | None], gpus: list[tuple[str, Section]], changed: list[int],
                 index: Index) -> None:
        self.values, self.gpus, self.changed, self.index = values, gpus, changed, index

    @property
    def made(self) -> list[object]:
        return self.index.made

    def noting(self, gpu: int, seen: set[int]) -> Section:
        """The kept document's GPU ``gpu``, adding to ``seen`` each line whose text it answers."""
        return gpu_section(self.index.texts, self.index.gpus[gpu][1], seen)


def read(text: str) -> Reading | None:
    """The document ``text`` as the string reader would read it, when a kept document has
    its lines but for leaf texts; else None."""
    for sep, by_count in _KEPT.items():
        pieces = text.split(sep)
        for kept in by_count.get(len(pieces), ()):
            found = _texts(kept, pieces)
            if found is not None:
                texts, changed = found
                index = kept.index
                assert index is not None  # (_texts answers only from an index)
                values = {name: texts[line] for name, line in index.root.items()}
                gpus = [(bus_id, gpu_section(texts, shape)) for bus_id, shape in index.gpus]
                return Reading(values, gpus, changed, index)
    return None


def _texts(kept: _Kept, pieces: list[str]) -> tuple[list[str | None], list[int]] | None:
    """Each line's text in a document (its ``pieces``, split at ``kept.sep``, as many as
    ``kept``'s), and the lines that differ from ``kept``'s, when they differ in leaf texts
    only. The pieces are compared first (in C), then the lines of each piece that differs:
    as many pieces, and as many lines in each that differs, put every line of both
    documents at the same place."""
    differing = list(compress(count(), map(ne, kept.pieces, pieces)))
    index = _index_of(kept)
    if index is None or not differing:
        return None if index is None else (index.texts, [])
    leaves, lines, head = index.leaves, kept.lines, kept.sep[1:]
    texts = index.texts.copy()
    changed: list[int] = []
    for piece in differing:
        olds, news = kept.pieces[piece].split("\n"), pieces[piece].split("\n")
        if len(olds) != len(news):
            return None
        for at in compress(count(), map(ne, olds, news)):
            new = news[at] if at or not piece else head + news[at]
            at += kept.starts[piece]  # noqa: PLW2901 - the line in the whole document
            bounds = leaves.get(at)
            if bounds is None:
                return None
            start, tail = bounds
            old = lines[at]
            end = len(new) - tail
            if (end < start or new[:start] != old[:start] or new[end:] != old[len(old) - tail:]
                    or _PLAIN.fullmatch(new, start, end) is None):
                return None
            texts[at] = new[start:end]
            changed.append(at)
    return texts, changed


def _index_of(kept: _Kept) -> Index | None:
    if not kept.indexed:
        kept.index, kept.indexed = _index(kept.lines), True
    return kept.index


def _index(lines: list[str]) -> Index | None:  # noqa: C901, PLR0911, PLR0912 - one pass over the lines
    """The index of a document read by the string reader, or None when it is not in the
    simple form."""
    try:
        top = lines.index(_ROOT_OPEN)
    except ValueError:
        return None
    texts: list[str | None] = [None] * len(lines)
    leaves: dict[int, tuple[int, int]] = {}
    root: dict[str, int] = {}
    gpus: list[tuple[str, _Shape]] = []
    unit = ""
    # (tag, path from the GPU, line, the GPU's shape or None outside a GPU) of each open element
    stack: list[tuple[str, str, int, _Shape | None]] = []
    for at in range(top + 1, len(lines)):
        line = lines[at]
        if line == _ROOT_CLOSE:
            if stack or any(rest.strip(" \t") for rest in lines[at + 1 :]):
                return None
            return Index(texts, leaves, root, gpus)
        match = _LINE.fullmatch(line)
        if match is None:
            if "<" in line or ">" in line:
                return None
            continue  # a text line (``None`` in an empty section): part of a text
        lead, end = match["lead"], match["end"]
        unit = unit or lead
        if not unit or lead != unit * (len(stack) + (end is None)):
            return None
        if end is not None:
            if stack.pop()[0] != end:
                return None
            continue
        name, bare = match["name"], match["leaf"] is None and match["empty"] is None
        if (match["id"] is not None) != (not stack and name == "gpu"):
            return None
        if not stack and name == "gpu":
            if not bare:
                return None
            gpu = _Shape(at)
            gpus.append((match["id"], gpu))
            stack.append((name, "", at, gpu))
            continue
        path, shape = name, None
        if not stack:
            root.setdefault(name, at)
        else:
            _, parent, parent_at, shape = stack[-1]
            path = f"{parent}/{name}" if parent else name
            if shape is not None:
                if path in shape.paths:
                    shape.repeated.add(path)
                else:
                    shape.paths[path] = at
                shape.tags[at] = name
                shape.children.setdefault(parent_at, []).append(at)
        if bare:
            texts[at] = match["text"] + _text_after(lines, at)
            stack.append((name, path, at, shape))
        elif match["leaf"] is not None:
            texts[at] = match["text"]
            leaves[at] = (match.start("text"), len(line) - match.end("text"))
    return None


def _text_after(lines: list[str], at: int) -> str:
    """The text after a start tag ending line ``at``: up to the next tag, which starts
    a later line (every line from the root's start tag to its end tag but text lines
    holds one)."""
    after = at + 1
    while "<" not in lines[after]:
        after += 1
    return "\n".join(["", *lines[at + 1 : after], lines[after][: lines[after].index("<")]])


def gpu_section(texts: list[str | None], shape: _Shape, seen: set[int] | None = None) -> Section:
    """A ``<gpu>`` read by line numbers: ``value``, ``sub``, ``children`` and ``leaves``
    answer as ElementTree's element would (the string reader's texts); ``seen``, given,
    gets each line whose text is answered."""
    return Section(texts, shape, shape.line, "", seen)


class Section:
    """An element read by line numbers, ``path`` from its GPU (``""``: the GPU itself)."""

    __slots__ = ("_line", "_path", "_prefix", "_seen", "_shape", "_texts")

    def __init__(self, texts: list[str | None], shape: _Shape, line: int, path: str,
                 seen: set[int] | None) -> None:
        self._texts, self._shape, self._line, self._path, self._seen = texts, shape, line, path, seen
        self._prefix = f"{path}/" if path else ""

    def value(self, path: str) -> str | None:
        if self._path in self._shape.repeated:
            raise NotCanonical(f"<{self._path}> repeats")
        line = self._shape.paths.get(self._prefix + path)
        if line is None:
            return None
        if self._seen is not None:
            self._seen.add(line)
        return self._texts[line]

    def sub(self, path: str) -> Section | None:
        if self._path in self._shape.repeated:
            raise NotCanonical(f"<{self._path}> repeats")
        full = self._prefix + path
        line = self._shape.paths.get(full)
        return None if line is None else Section(self._texts, self._shape, line, full, self._seen)

    def children(self, tag: str) -> list[tuple[str, str | None]] | None:
        table = self.sub(tag)
        return None if table is None else table.children_of()

    def leaves(self) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        for tag, text in self.children_of():
            out.setdefault(tag, text)
        return out

    def children_of(self) -> list[tuple[str, str | None]]:
        """(tag, text) of each child, in order."""
        shape, texts = self._shape, self._texts
        lines = shape.children.get(self._line, ())
        if self._seen is not None:
            self._seen.update(lines)
        return [(shape.tags[line], texts[line]) for line in lines]
