"""Recognise knowledge-base signatures in any text a user has, streaming.

``gpunode explain`` is fed pod logs, ``kubectl describe`` output, dmesg dumps or
a pasted mix, possibly gigabytes of it. The matcher is pure over an iterable of
lines and keeps only a bounded summary (a few quoted lines per cause), so memory
does not grow with the input.

Speed comes from a prefilter: the lines are joined into blocks and one combined
regex (all signatures as alternatives) is searched over each block in C; only
the lines it stops on are checked against each signature. The prefilter can stop
on a line no signature matches (its alternatives may run across line breaks),
never skip one that does, because the search resumes at the next line.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from re import _constants as _sre  # type: ignore[attr-defined]
from re import _parser as _sre_parse  # type: ignore[attr-defined]
from typing import Any, Protocol

import msgspec

from gpunode import re2scan
from gpunode.catalog import load_catalog
from gpunode.decisive import decisive_line, lenient_line, message_of, stated_class, stated_line
from gpunode.job_errors import job_error
from gpunode.kb import Cause, KnowledgeBase, Match, MatchSource, load_kb
from gpunode.parse.pasted import NAME_HEADS, NEEDLES, PastedNames
from gpunode.state_lines import state_line
from gpunode.xid import SXID_LINE, XID_LINE_PATTERNS, XidInfo, classify, sxid_fatal, xids_in_line

# Sources whose patterns describe free text a user may paste. node_file patterns
# describe configuration files and would misfire on arbitrary text.
EXPLAIN_SOURCES: frozenset[MatchSource] = frozenset(
    {"log", "event", "waiting", "node_cmd", "node_condition", "text"}
)
MAX_QUOTES = 3
#: How much of the end of each source is kept to find its decisive line in.
TAIL_CHARS = 256 * 1024
MAX_LINE_CHARS = 400
BLOCK_LINES = 8192
#: Longer lines are read (and numbered) in pieces of this many characters.
MAX_LINE_PIECE = 1 << 20
#: Bytes read at a time by ``explain_stream``.
CHUNK_BYTES = 8 << 20
_NAME_HEADS = tuple(h.encode() for h in NAME_HEADS)
#: NEEDLES as prefilter patterns: a needle after a newline is a line head.
_NAME_LINES = tuple("^" + re.escape(n[1:]) if n.startswith("\n") else re.escape(n) for n in NEEDLES)
_PCI_NEEDLE = next(n.encode() for n in NEEDLES if not n.startswith("\n"))


@dataclass(frozen=True)
class QuotedLine:
    """A matching input line (1-based number in its source), trimmed for display."""

    line_no: int
    text: str
    source: str = ""  # the file it is in, where several were read


@dataclass(frozen=True)
class FileEvidence:
    """A key of a config file that a cause follows from (``gpunode explain`` on config files)."""

    source: str  # the file as given
    node_path: str | None  # where it lies on the node, when known
    key: str
    detail: str


@dataclass
class CauseMatch:
    """One recognised cause: the first few matching lines and how many there were, and
    the config keys it follows from when config files decided it."""

    cause: Cause
    layer: int
    quotes: list[QuotedLine] = field(default_factory=list)
    count: int = 0
    files: list[FileEvidence] = field(default_factory=list)
    order: int = 0  # which source its first line is in

    def add(self, line_no: int, line: str, max_quotes: int, source: str = "") -> None:
        self.add_quote(QuotedLine(line_no, line.strip()[:MAX_LINE_CHARS], source), max_quotes)

    def add_quote(self, quote: QuotedLine, max_quotes: int = MAX_QUOTES) -> None:
        self.count += 1
        if len(self.quotes) < max_quotes:
            self.quotes.append(quote)


@dataclass(frozen=True)
class XidSighting:
    """How often one Xid code appeared, with what the catalog says about it."""

    info: XidInfo
    count: int


@dataclass(frozen=True)
class Explanation:
    """The causes recognised, best first (most specific, then lowest layer)."""

    matches: tuple[CauseMatch, ...]
    xids: tuple[XidSighting, ...]
    lines_read: int
    names: PastedNames = field(default_factory=PastedNames)
    #: The text's decisive line (``gpunode.decisive``) and the class it falls in.
    decisive: QuotedLine | None = None
    decisive_class: str | None = None

    def step_values(self, match: CauseMatch, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """What the text names for ``match``'s next steps (node, namespace, pod, GPU), over
        ``base`` (names the input's path gives)."""
        return self.names.values(match.quotes[0].text if match.quotes else "", base)

    @property
    def matched(self) -> bool:
        return bool(self.matches)

    @property
    def runtime_down(self) -> bool:
        """The text says the container runtime is down (what a config clash is judged under)."""
        return any(m.cause.code == "container_runtime_down" for m in self.matches)

    def with_matches(self, extra: Iterable[CauseMatch]) -> Explanation:
        """This explanation plus causes found otherwise (config files); a cause found both
        ways keeps its lines and gains the file evidence."""
        found = {m.cause.code: m for m in self.matches}
        for m in extra:
            if m.cause.code in found:
                found[m.cause.code].files.extend(m.files)
            else:
                found[m.cause.code] = m
        return Explanation(rank(found.values()), self.xids, self.lines_read, self.names,
                           self.decisive, self.decisive_class)

    @property
    def problems(self) -> bool:
        """A recognised cause that is a problem (not a benign one such as an application Xid):
        the same verdict ``diagnose`` gives it (``Cause.severity``)."""
        return any(m.cause.is_problem for m in self.matches)


def candidate_matchers(kb: KnowledgeBase, component: str | None = None) -> list[tuple[Cause, Match]]:
    """Signatures to look for: every explainable one, or only ``component``'s."""
    return [
        (cause, m)
        for cause in kb.causes
        if component is None or cause.component == component
        for m in cause.match
        if m.source in EXPLAIN_SOURCES
    ]


_NVSWITCH_FATAL = "nvswitch_fatal_error"


class Matcher:
    """Scans lines against signatures; feed it blocks, then ask for the result."""

    def __init__(self, matchers: Sequence[tuple[Cause, Match]], max_quotes: int = MAX_QUOTES,
                 max_line: int = MAX_LINE_PIECE, kb: KnowledgeBase | None = None) -> None:
        self._matchers = list(matchers)
        self._max_quotes = max_quotes
        #: The NVSwitch fatal error's cause where it is a candidate: an SXid line without its
        #: severity word names it by its number's class in the SXid catalog (xid.sxid_fatal).
        self._sxid_cause = next((c for c, _ in self._matchers if c.code == _NVSWITCH_FATAL), None)
        self._patterns = tuple([*(m.pattern for _, m in self._matchers),
                                *(p.pattern for p in XID_LINE_PATTERNS),
                                *((SXID_LINE.pattern,) if self._sxid_cause is not None else ())])
        self._prefilter = build_prefilter(tuple(m.pattern for _, m in self._matchers)
                                          + ((SXID_LINE.pattern,) if self._sxid_cause is not None else ()))
        #: Each signature's regex and the literals one of which its every match holds (none
        #: known: always tried); a line is searched only by the signatures it can match.
        self._checks = [(cause, m.regex, required_literals(m.pattern)) for cause, m in self._matchers]
        self._literals = tuple(sorted(frozenset().union(*(needs for _, _, needs in self._checks))))
        self._max_line = max_line
        self._layers = {c.id: c.layer for c in load_catalog().components}
        self._found: dict[str, CauseMatch] = {}
        #: each cause's last counted line and source: a second signature of the same cause on
        #: the same line counts once, also after the cause's quotes are full
        self._last_counted: dict[str, tuple[int, str]] = {}
        self._names = PastedNames()
        self._xids: Counter[tuple[int, str]] = Counter()
        self.lines_read = 0
        self._source, self._order, self._base = "", 0, 0
        self._kb = kb
        self._tail = ""  # the end of the current source, where its decisive line is looked for
        self._decisive: QuotedLine | None = None
        self._decisive_class: Cause | None = None
        #: The line a content-free decisive line is read with (``decisive.in_context``), if any.
        self._context: QuotedLine | None = None
        #: The last source's line that only a warning or a retry says failed (``lenient_line``).
        self._lenient: QuotedLine | None = None
        #: The last source's line that shows a failed state without an error word (``state_line``).
        self._state: tuple[QuotedLine, str | None] | None = None
        #: The last source's line that a library's error code says failed (``job_errors``),
        #: where no line reads as an error ("NVMLError_GpuIsLost: GPU is lost").
        self._coded: QuotedLine | None = None

    def begin(self, source: str, order: int) -> None:
        """Lines fed from now on are ``source``'s (numbered from 1), the ``order``-th read."""
        self._close_source()
        self._source, self._order, self._base = source, order, self.lines_read

    def _keep_tail(self, text: str) -> None:
        """The last ``TAIL_CHARS`` of the source (whole lines, each ending in a newline)."""
        self._tail = (self._tail + text)[-TAIL_CHARS:]

    def _close_source(self) -> None:
        """The decisive line of the source just read, if it has one: the latest source's wins."""
        tail, self._tail = self._tail, ""
        if not tail or self._kb is None:
            return
        lines = tail.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if len(tail) >= TAIL_CHARS and lines:
            lines.pop(0)  # cut at the front: not a whole line
        found = decisive_line(lines, self._kb.class_of)
        total = self.lines_read - self._base
        if found is not None:
            line_no = total - (len(lines) - found.line_no)
            self._decisive = QuotedLine(line_no, found.line[:MAX_LINE_CHARS], self._source)
            self._decisive_class = self._kb.line_class(found.message)
            self._context = None
            if found.context:  # the reading of the two lines may be a catalogued cause no line is
                self._context = QuotedLine(line_no - (found.line_no - found.context_no),
                                           found.context[:MAX_LINE_CHARS], self._source)
                self._decisive_class = (self._kb.catalogued_elsewhere("*", found.message)
                                        or self._decisive_class)
        elif (coded := _last_coded(lines)) is not None:
            self._coded = QuotedLine(total - (len(lines) - coded), lines[coded - 1].strip()[:MAX_LINE_CHARS],
                                     self._source)
        elif (weak := lenient_line(lines) or stated_line(lines)) is not None:
            line_no = total - (len(lines) - weak.line_no)
            self._lenient = QuotedLine(line_no, weak.line[:MAX_LINE_CHARS], self._source)
        elif (shows := state_line(lines)) is not None:
            line_no = total - (len(lines) - shows.line_no)
            self._state = QuotedLine(line_no, shows.line[:MAX_LINE_CHARS], self._source), shows.line_class

    def feed(self, lines: Sequence[str]) -> None:
        """Scan one block of consecutive lines (numbered after those fed before)."""
        first = self.lines_read + 1
        self.lines_read += len(lines)
        block = "\n".join(lines)
        self._keep_tail(block + "\n")
        self._names.feed(block)
        for offset, line in _candidate_lines(self._prefilter, block):
            self._check_line(first + offset, line)

    def feed_bytes(self, data: bytes, *, last: bool = False) -> None:
        """Scan whole lines of UTF-8 ``data`` (ending in ``\\n`` unless ``last``), as
        ``feed`` would scan the lines ``read_lines`` makes of them.

        The RE2 prefilter runs over the bytes; only the lines it stops on are decoded.
        Where a line may be longer than ``max_line`` characters (read in pieces by
        ``read_lines``), or RE2 left some pattern to Python, the block goes the str way.
        """
        program, rejected = re2scan.compile_prefilter(self._patterns)
        if program is None or rejected or _may_hold_long_line(data, self._max_line):
            self.feed(_pieces(data.decode("utf-8", errors="replace"), self._max_line, last))
            return
        tail_text = data[-TAIL_CHARS:].decode("utf-8", errors="replace")
        self._keep_tail(tail_text if tail_text.endswith("\n") else tail_text + "\n")
        # One pass finds the lines a signature may match and those that may name a pod,
        # node or GPU (for PastedNames), instead of one more pass per name needle.
        program, _ = re2scan.compile_prefilter(self._patterns + _NAME_LINES)
        first = self.lines_read + 1
        self.lines_read += data.count(b"\n") + (1 if last and data else 0)
        line_index, counted_to = 0, 0
        for start in re2scan.line_starts(program, data):
            line_index += data.count(b"\n", counted_to, start)
            counted_to = start
            end = data.find(b"\n", start)
            line = data[start : len(data) if end < 0 else end]
            text = line.decode("utf-8", errors="replace")
            if line.startswith(_NAME_HEADS) or _PCI_NEEDLE in line:
                self._names.line(text)
            self._check_line(first + line_index, text)

    def _check_line(self, line_no: int, line: str) -> None:
        """Every signature the line can match, in order: one whose required literals are
        all absent cannot match (a line the prefilter stopped on for one signature's literal
        was searched by all two hundred)."""
        present = {lit for lit in self._literals if lit in line}
        for cause, regex, needs in self._checks:
            if needs and needs.isdisjoint(present):
                continue
            if regex.search(line):
                self._record(cause, line_no, line)
        for code, rest in xids_in_line(line):
            self._xids[(code, classify(code, rest).action)] += 1
        if self._sxid_cause is not None and "SXid" in line and sxid_fatal(line) is not None:
            self._record(self._sxid_cause, line_no, line)

    def _record(self, cause: Cause, line_no: int, line: str) -> None:
        found = self._found.get(cause.code)
        line_no -= self._base
        if found is None:
            layer = self._layers.get(cause.component, 0)
            found = self._found[cause.code] = CauseMatch(cause, layer, order=self._order)
        elif self._last_counted.get(cause.code) == (line_no, self._source):
            return  # a second signature of the same cause on the same line
        self._last_counted[cause.code] = (line_no, self._source)
        found.add(line_no, line, self._max_quotes, self._source)

    def result(self) -> Explanation:
        """What was recognised; where no problem cause was, the decisive line's class
        stands as the cause (a failure never explained by silence)."""
        self._close_source()
        found = list(self._found.values())
        decisive, cause = self._decisive, self._decisive_class
        if decisive is not None and cause is not None and not any(m.cause.is_problem for m in found):
            cause = self._table_cause(decisive.text) or cause
            match = CauseMatch(cause, self._layers.get(cause.component, 0), order=self._order)
            if self._context is not None:  # what was attempted, then that it failed
                match.add_quote(self._context)
            match.add_quote(decisive)
            found.append(match)
        if decisive is None and self._kb is not None:
            decisive, cause = self._catalogued_line(found, self._kb)
            if decisive is not None:  # a library's code on that line names its cause, as above
                cause = self._table_cause(decisive.text) or cause
        if decisive is None and self._kb is not None and self._coded is not None:
            # no line reads as an error, yet a library's error code names the layer
            decisive = self._coded
            cause = self._table_cause(decisive.text) or self._kb.line_class(message_of(decisive.text))
        if decisive is None and self._kb is not None and self._lenient is not None:
            # no line reads as an error and nothing catalogued matched: what a warning or a
            # retry says failed is still the text's decisive line (never silence)
            decisive = self._lenient
            named = stated_class(decisive.text)  # a waiting reason names its cause
            cause = (self._kb.get(named) if named is not None
                     else self._kb.line_class(message_of(decisive.text)))
        if decisive is None and self._kb is not None and self._state is not None:
            # no error word at all, yet the text shows a state that fails (a port down, a
            # resource at zero, the CRI plugin disabled): that line, in its class
            decisive, code = self._state
            cause = self._kb.get(code) if code is not None else self._kb.line_class(decisive.text)
        return Explanation(rank(found), _xid_summary(self._xids), self.lines_read, self._names,
                           decisive, cause.code if cause is not None else None)

    def _table_cause(self, line: str) -> Cause | None:
        """The cause the job-error table gives a decisive line no signature matched (a CUDA
        error by its number, an NVML code in pynvml's words), as a job's log is read."""
        entry = job_error(line) if self._kb is not None else None
        if self._kb is None or entry is None or not entry.cause:
            return None
        return self._kb.get(entry.cause)

    @staticmethod
    def _catalogued_line(found: list[CauseMatch],
                         kb: KnowledgeBase) -> tuple[QuotedLine | None, Cause | None]:
        """No line reads as an error (an Xid, a kernel or config line the program did not
        mark), yet a problem cause was recognised: its first quoted line is the decisive
        one, in the class its words fall in."""
        best = next((m for m in rank(found) if m.cause.is_problem and m.quotes), None)
        if best is None:
            return None, None
        quote = best.quotes[0]
        return quote, kb.line_class(message_of(quote.text))


def _last_coded(lines: Sequence[str]) -> int | None:
    """The number (from 1) of the last line a library's error code is on (``job_errors``)."""
    return next((i + 1 for i in range(len(lines) - 1, -1, -1) if job_error(lines[i]) is not None), None)


def rank(matches: Iterable[CauseMatch]) -> tuple[CauseMatch, ...]:
    """Best first: most specific, then lowest layer, then first seen."""
    return tuple(sorted(
        matches,
        key=lambda f: (-f.cause.specificity, f.layer, f.order, f.quotes[0].line_no if f.quotes else 0),
    ))


@dataclass(frozen=True)
class Prefilter:
    """What a block is searched for: required literals, plus patterns that have none."""

    literals: tuple[str, ...]
    fallback: re.Pattern[str] | None

    def line_starts(self, block: str) -> set[int]:
        """Offsets of the lines in ``block`` that may match some signature. ASCII text (its
        byte offsets are its character offsets) is searched for every literal in one RE2
        pass: one ``str.find`` per literal read a 64 MB line two hundred times."""
        program = re2scan.compile_literals(self.literals) if block.isascii() else None
        if program is not None:
            starts = set(re2scan.line_starts(program, block.encode("ascii")))
        else:
            starts = {start for lit in self.literals for start in _literal_line_starts(lit, block)}
        if self.fallback is not None:
            starts.update(_regex_line_starts(self.fallback, block))
        return starts


@cache
def build_prefilter(patterns: tuple[str, ...]) -> Prefilter:
    """Longest required literal set per pattern (str.find is fastest on long needles)."""
    literals: set[str] = set()
    without: list[str] = []
    for pattern in dict.fromkeys([*patterns, *(p.pattern for p in XID_LINE_PATTERNS)]):
        required = required_literals(pattern)
        if required:
            literals |= required
        else:
            without.append(pattern)
    fallback = re.compile("|".join(f"(?:{p})" for p in without), re.MULTILINE) if without else None
    return Prefilter(_minimal(literals), fallback)


def _minimal(literals: set[str]) -> tuple[str, ...]:
    """Drop literals containing a shorter one: wherever they occur, it occurs too."""
    kept: list[str] = []
    for lit in sorted(literals, key=len):
        if not any(shorter in lit for shorter in kept):
            kept.append(lit)
    return tuple(kept)


def _candidate_lines(prefilter: Prefilter, block: str) -> Iterator[tuple[int, str]]:
    """(index, text) of every line the prefilter stops on, in order, each once."""
    line_index, counted_to = 0, 0
    for start in sorted(prefilter.line_starts(block)):
        line_index += block.count("\n", counted_to, start)
        counted_to = start
        end = block.find("\n", start)
        yield line_index, block[start : len(block) if end < 0 else end]


def _literal_line_starts(literal: str, block: str) -> Iterator[int]:
    at = block.find(literal)
    while at >= 0:
        yield block.rfind("\n", 0, at) + 1
        end = block.find("\n", at)
        if end < 0:
            return
        at = block.find(literal, end + 1)


def _regex_line_starts(scanner: re.Pattern[str], block: str) -> Iterator[int]:
    """A hit may run across line ends, so the search resumes at the next line."""
    pos = 0
    while (hit := scanner.search(block, pos)) is not None:
        yield block.rfind("\n", 0, hit.start()) + 1
        end = block.find("\n", hit.start())
        if end < 0:
            return
        pos = end + 1


# --- required literals: plain strings one of which every match must contain ---

_MIN_LITERAL = 4
_REPEATS = (_sre.MAX_REPEAT, _sre.MIN_REPEAT, getattr(_sre, "POSSESSIVE_REPEAT", _sre.MAX_REPEAT))


@cache
def required_literals(pattern: str) -> frozenset[str]:
    """Strings of which any match of ``pattern`` contains at least one; empty when unknown.

    Walks the parsed regex: a run of literal characters is required, a group or a
    repetition of at least one is required if its content is, an alternation is
    required as the union of its branches. Of the candidates, the one whose
    shortest string is longest is kept; too short a set is useless and dropped.
    """
    parsed = _sre_parse.parse(pattern)
    if parsed.state.flags & re.IGNORECASE:
        return frozenset()
    best = _sequence_literals(list(parsed))
    return best if _quality(best) >= _MIN_LITERAL else frozenset()


def _sequence_literals(items: list[tuple[Any, Any]]) -> frozenset[str]:
    options: list[frozenset[str]] = []
    run: list[str] = []
    for op, av in items:
        if op is _sre.LITERAL:
            run.append(chr(av))
            continue
        if run:
            options.append(frozenset({"".join(run)}))
            run = []
        options.append(_item_literals(op, av))
    if run:
        options.append(frozenset({"".join(run)}))
    return max(options, key=_quality, default=frozenset())


def _item_literals(op: Any, av: Any) -> frozenset[str]:
    if op is _sre.SUBPATTERN:
        _group, add_flags, _del_flags, sub = av
        return frozenset() if add_flags & re.IGNORECASE else _sequence_literals(list(sub))
    if op is _sre.BRANCH:
        branches = [_sequence_literals(list(branch)) for branch in av[1]]
        return frozenset().union(*branches) if all(branches) else frozenset()
    if op in _REPEATS and av[0] >= 1:
        return _sequence_literals(list(av[2]))
    return frozenset()


def _quality(literals: frozenset[str]) -> int:
    return min((len(s) for s in literals), default=0)


def _xid_summary(counts: Counter[tuple[int, str]]) -> tuple[XidSighting, ...]:
    """One entry per code; Xid 154 lines differ in action, the most demanding is kept."""
    merged: dict[int, XidSighting] = {}
    for (code, action), n in sorted(counts.items(), key=lambda kv: _ACTION_RANK.index(kv[0][1])):
        previous = merged.get(code)
        info = msgspec.structs.replace(classify(code), action=action)
        merged[code] = XidSighting(info, n + (previous.count if previous else 0))
    return tuple(sorted(merged.values(), key=lambda s: s.info.code))


_ACTION_RANK = ("none", "restart_workload", "reset_gpu", "reboot_node", "drain_and_repair")


def explain_lines(
    lines: Iterable[str],
    kb: KnowledgeBase | None = None,
    component: str | None = None,
    max_quotes: int = MAX_QUOTES,
) -> Explanation:
    """Every cause whose signature appears in ``lines``, in one streaming pass."""
    kb = kb or load_kb()
    matcher = Matcher(candidate_matchers(kb, component), max_quotes, kb=kb)
    batch: list[str] = []
    for line in lines:
        batch.append(line.rstrip("\r\n"))
        if len(batch) >= BLOCK_LINES:
            matcher.feed(batch)
            batch = []
    if batch:
        matcher.feed(batch)
    return matcher.result()


class ByteStream(Protocol):
    """A binary file, stdin's buffer or a gzip stream."""

    def read(self, size: int, /) -> bytes: ...


def explain_stream(
    stream: ByteStream,
    kb: KnowledgeBase | None = None,
    component: str | None = None,
    max_quotes: int = MAX_QUOTES,
) -> Explanation:
    """``explain_lines`` over raw bytes (a file, stdin), read in large chunks.

    Gives what ``explain_lines`` gives for the lines of the text opened with universal
    newlines (``\\r\\n`` and a lone ``\\r`` end a line) and read in pieces of at most
    ``MAX_LINE_PIECE`` characters, without making a Python string of every line.
    """
    return explain_streams([("", stream)], kb, component, max_quotes)


def explain_streams(
    streams: Iterable[tuple[str, ByteStream]],
    kb: KnowledgeBase | None = None,
    component: str | None = None,
    max_quotes: int = MAX_QUOTES,
) -> Explanation:
    """``explain_stream`` over several named sources in turn, lines numbered per source and
    quoted with its name (the name is left out of quotes when it is ``""``)."""
    kb = kb or load_kb()
    matcher = Matcher(candidate_matchers(kb, component), max_quotes, MAX_LINE_PIECE, kb=kb)
    for order, (name, stream) in enumerate(streams):
        matcher.begin(name, order)
        _feed_stream(matcher, stream)
    return matcher.result()


def _feed_stream(matcher: Matcher, stream: ByteStream) -> None:
    carry = b""
    while chunk := stream.read(CHUNK_BYTES):
        lines, carry = _whole_lines(carry + chunk)
        if lines:
            matcher.feed_bytes(lines)
    if carry:
        matcher.feed_bytes(_universal(carry), last=not carry.endswith(b"\r"))


def _whole_lines(data: bytes) -> tuple[bytes, bytes]:
    """Complete lines (universal newlines made ``\\n``) and the rest, kept for the next chunk.

    A final ``\\r`` waits: the next chunk may start with its ``\\n``.
    """
    hold = b""
    if data.endswith(b"\r"):
        data, hold = data[:-1], b"\r"
    data = _universal(data)
    cut = data.rfind(b"\n") + 1
    return data[:cut], data[cut:] + hold


def _universal(data: bytes) -> bytes:
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n") if b"\r" in data else data


def _may_hold_long_line(data: bytes, max_line: int) -> bool:
    """Whether some line may be longer than ``max_line`` characters: a line of more than
    ``max_line`` bytes covers a whole aligned window of half that size."""
    window = max(1, max_line // 2)
    return any(data.find(b"\n", at, at + window) < 0
               for at in range(0, len(data) - window + 1, window))


def _pieces(text: str, max_line: int, last: bool) -> list[str]:
    """The lines of ``text`` as ``readline(max_line)`` returns them (newline counted)."""
    lines = text.split("\n")
    if not last or lines[-1] == "":
        lines.pop()  # text ends with its line break
        ended = [line + "\n" for line in lines]
    else:
        ended = [line + "\n" for line in lines[:-1]] + [lines[-1]]
    out: list[str] = []
    for line in ended:
        out += [line[i : i + max_line].rstrip("\n") for i in range(0, len(line), max_line)]
    return out
