"""A one-pass prefilter over bytes with RE2: where in a block any signature may match.

Python's ``re`` tries an alternation of a hundred signatures branch by branch at
every position; RE2 runs them together as one automaton over UTF-8 bytes. RE2's
classes are ASCII (``\\d``, ``\\w``, ``\\s``, ``\\b``) where Python's are Unicode, so
patterns are widened first (``re2_pattern``): the prefilter may stop on a line no
signature matches, never skip one that a signature matches. Lines it stops on are
then checked with the Python patterns themselves.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import cache
from typing import Any

from gpunode.relazy import lazy_compile

try:
    import re2  # type: ignore[import-untyped]  # google-re2 ships no type information
except ImportError:  # pragma: no cover - the dependency is declared; stay usable without it
    re2 = None

#: Python's Unicode classes as RE2 classes that hold at least the same characters.
#: RE2 falls back to a slow engine when its automaton outgrows this; the widened
#: classes need room (8 MiB, the default, made a 20 MB log take seconds, not 0.1 s).
_MAX_MEM = 256 << 20
_WIDE = {"d": r"\p{Nd}", "w": r"\p{L}\p{N}_", "s": r"\s\v\x1c-\x1f\x85\p{Z}"}


#: ``.{0,N}``: within a line, ``.*`` matches wherever it does (and RE2 builds N states for it).
_BOUNDED_GAP = lazy_compile(r"\.\{0,[0-9]+\}")
#: A counted repetition ``{m,n}`` (``{n}``) of any atom: RE2 builds a copy of the atom for each
#: count up to n, and a widened class (``\w`` as every Unicode letter and digit) is hundreds of
#: states itself, so ``[\w.]{1,200}`` alone took 33 MiB. Past ``_KEPT_COUNT`` the bound becomes
#: ``{m,}``: a prefilter may match more than the pattern, never less.
_COUNTED = lazy_compile(r"\{([0-9]+)(?:,([0-9]*))?\}")
_KEPT_COUNT = 8


def available() -> bool:
    return re2 is not None


def re2_pattern(pattern: str) -> str:
    """``pattern`` (Python syntax) for RE2, matching wherever Python's would match.

    ``\\d``/``\\w``/``\\s`` are widened to Unicode outside negated classes (inside a
    negated class RE2's narrower ASCII class already makes the class wider), and
    word boundaries are dropped (an assertion removed only allows more matches), and a
    backreference or a bounded gap ``.{0,N}`` becomes ``.*`` (what it stands for lies
    within the line too), and a repetition counted past ``_KEPT_COUNT`` loses its upper bound.
    """
    out: list[str] = []
    i, in_class, negated, class_start = 0, False, False, 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            escape = pattern[i + 1]
            i += 2
            if escape in "bB" and not in_class:
                continue
            if escape in "123456789" and not in_class:  # a backreference: some text of the line
                out.append(".*")
                continue
            wide = _WIDE.get(escape)
            if wide is None or (in_class and negated):
                out.append("\\" + escape)
            else:
                out.append(wide if in_class else f"[{wide}]")
            continue
        if not in_class and char in ".{" and (loosened := _loosened(pattern, i)):
            out.append(loosened[0])
            i = loosened[1]
            continue
        if in_class:
            if char == "]" and i > class_start:
                in_class = False
        elif char == "[":
            in_class, class_start = True, i + 1
            negated = pattern[i + 1 : i + 2] == "^"
            class_start += negated
        out.append(char)
        i += 1
    return "".join(out)


def _loosened(pattern: str, i: int) -> tuple[str, int] | None:
    """A bounded gap (``.*``: the bound keeps Python linear; to RE2 it is only states) or a
    count past ``_KEPT_COUNT`` (open above) at ``i``, and where it ends; None for neither."""
    if gap := _BOUNDED_GAP.match(pattern, i):
        return ".*", gap.end()
    counted = _COUNTED.match(pattern, i)
    if counted is None:
        return None
    least, most = counted[1], counted[2]
    bound = int(most) if most else int(least) if most is None else 0
    return (f"{{{least},}}" if bound > _KEPT_COUNT else counted[0]), counted.end()


@cache
def compile_prefilter(patterns: tuple[str, ...]) -> tuple[Any, tuple[str, ...]]:
    """One RE2 program over UTF-8 bytes for the patterns it accepts, and those it does not."""
    if re2 is None:
        return None, patterns
    options = re2.Options()
    options.log_errors = False
    options.max_mem = _MAX_MEM
    accepted, rejected = [], []
    for pattern in dict.fromkeys(patterns):
        try:
            re2.compile(re2_pattern(pattern).encode(), options)
        except re2.error:
            rejected.append(pattern)
        else:
            accepted.append(pattern)
    if not accepted:
        return None, tuple(rejected)
    body = "|".join(f"(?:{re2_pattern(p)})" for p in accepted)
    return re2.compile(f"(?m){body}".encode(), options), tuple(rejected)


@cache
def compile_literals(literals: tuple[str, ...]) -> Any:
    """One RE2 program over ASCII bytes that finds any of ``literals`` (ASCII ones; the
    others cannot occur in ASCII text), or None without RE2. Plain strings need no
    widening: the program matches exactly where ``str.find`` finds one of them, in one
    pass instead of one per literal."""
    if re2 is None:
        return None
    body = "|".join("".join(c if c.isalnum() else f"\\x{ord(c):02x}" for c in lit)
                    for lit in literals if lit.isascii() and lit)
    options = re2.Options()
    options.log_errors = False
    options.max_mem = _MAX_MEM
    return re2.compile(body.encode(), options) if body else _NEVER


#: A program for no literal at all: it finds nothing.
_NEVER = None if re2 is None else re2.compile(rb"[^\x00-\xff]")


def line_starts(program: Any, block: bytes) -> Iterator[int]:
    """Byte offsets of the lines of ``block`` where ``program`` finds a match; a match may
    run across a line end, so the search resumes at the next line."""
    pos = 0
    search = program.search
    while (hit := search(block, pos)) is not None:
        start = hit.start()
        yield block.rfind(b"\n", 0, start) + 1
        end = block.find(b"\n", start)
        if end < 0:
            return
        pos = end + 1


#: RE2's unanchored search, as the binding's ``_Regexp`` asks its C object for it: where the
#: binding has both, ``line_indexes`` calls the C search itself (its ``search`` is a Python
#: generator over it, two Python functions a call, for spans it then only reads).
_UNANCHORED = getattr(getattr(re2, "_Anchor", None), "UNANCHORED", None)


def line_indexes(program: Any, data: bytes) -> list[int]:
    """Indexes of the ``\n``-separated lines of ``data`` where ``program`` finds a match
    start (``kb.candidate_lines`` over bytes)."""
    regexp = getattr(program, "_regexp", None)
    if regexp is None or _UNANCHORED is None:
        return _searched_line_indexes(program, data)
    found: list[int] = []
    pos, line = 0, 0
    match, size = regexp.Match, len(data)
    # the first span is the whole match's, (-1, -1) where there is none
    while (start := match(_UNANCHORED, data, pos, size)[0][0]) >= 0:
        line += data.count(b"\n", pos, start)
        found.append(line)
        end = data.find(b"\n", start)
        if end < 0:
            break
        pos, line = end + 1, line + 1
    return found


def _searched_line_indexes(program: Any, data: bytes) -> list[int]:
    """``line_indexes`` through the binding's ``search``."""
    found: list[int] = []
    pos, line = 0, 0
    search = program.search
    while (hit := search(data, pos)) is not None:
        start = hit.start()
        line += data.count(b"\n", pos, start)
        found.append(line)
        end = data.find(b"\n", start)
        if end < 0:
            break
        pos, line = end + 1, line + 1
    return found


def compiled_all(patterns: Sequence[str]) -> bool:
    """Whether RE2 accepts every pattern (nothing is left to the slower Python fallback)."""
    return not compile_prefilter(tuple(patterns))[1]
