"""Prometheus text exposition (dcgm-exporter, node_exporter scrapes)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import chain
from typing import Literal

import msgspec

from gpunode.errors import ParseError
from gpunode.relazy import lazy_compile


class Sample(msgspec.Struct, frozen=True):
    """One sample; ``name`` is exactly as exposed (``..._total`` kept on counters)."""

    name: str
    labels: dict[str, str]
    value: float


def parse_prometheus_text(text: str) -> list[Sample]:
    """All samples in exposition order, named as the exporter wrote them.

    The client library strips ``_total`` from counter family names and *adds* it to
    counter samples that lack it (dcgm-exporter's counters have no suffix), so each
    sample name is mapped back to the name found in the text.
    """
    fast = _parse_plain(text)
    if fast is not None:
        return fast
    # the client library only for text the fast path declines (imported here: start-up)
    from prometheus_client.parser import text_string_to_metric_families

    exposed = _exposed_names(text)
    try:
        return [
            Sample(
                name=_as_exposed(sample.name, exposed),
                labels=dict(sample.labels),
                value=float(sample.value),
            )
            for family in text_string_to_metric_families(text)
            for sample in family.samples
        ]
    except (ValueError, TypeError, IndexError) as exc:
        raise ParseError(f"invalid Prometheus text: {exc}") from None


_SAMPLE_NAME = lazy_compile(r"^\s*([a-zA-Z_:][a-zA-Z0-9_:]*)", re.MULTILINE)
_PLAIN_LINE = lazy_compile(
    r"([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^{}\\]*)\})? ([-+]?(?:[0-9][0-9.eE+-]*|Inf|NaN))(?: -?[0-9]+)?")
_PLAIN_LABEL = lazy_compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"(?:,|$)')
_METRIC_NAME = lazy_compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_TYPES = frozenset({"counter", "gauge", "histogram", "summary", "untyped"})


def _parse_plain(text: str) -> list[Sample] | None:
    """The samples of plain exposition text (no escapes or quotes in comments, single
    spaces, known types) exactly as the client library reads them, or None to leave
    anything less plain to the library.

    Exporters write this common form; the library's character-by-character parser
    costs several times more on it.
    """
    samples: list[Sample] = []
    counters: list[str] = []
    for line in text.splitlines():
        if not line:
            continue
        if line[0] == "#":
            if not _plain_comment(line, counters):
                return None
            continue
        sample = _plain_sample(line)
        if sample is None:
            return None
        samples.append(sample)
    if counters and _renamed_counter(counters, samples):
        return None
    return samples


def _plain_sample(line: str) -> Sample | None:
    match = _PLAIN_LINE.fullmatch(line)
    if match is None:
        return None
    name, body, value = match.groups()
    labels: dict[str, str] = {}
    if body:
        known = _LABELS.get(body)
        if known is None:
            known = _LABELS[body] = _plain_labels(body)
            if len(_LABELS) > _LABELS_MAX:
                _LABELS.clear()
        if known is False:
            return None
        labels = dict(known)
    try:
        return Sample(name, labels, float(value))
    except ValueError:
        return None


def _plain_labels(body: str) -> dict[str, str] | Literal[False]:
    """The labels of a plain label body; False where it is not plain."""
    pairs = _PLAIN_LABEL.findall(body)
    # (each pair is k="v", then a comma: summed in C, no generator for each label body)
    if sum(map(len, chain.from_iterable(pairs))) + 4 * len(pairs) - (not body.endswith(",")) != len(body):
        return False
    labels = dict(pairs)
    return labels if len(labels) == len(pairs) else False


#: Label bodies read (a scrape repeats each GPU's labels in every family), bounded; each
#: sample gets its own copy of the labels.
_LABELS: dict[str, dict[str, str] | Literal[False]] = {}
_LABELS_MAX = 4096


def _plain_comment(line: str, counters: list[str]) -> bool:
    """Whether a comment line is one the fast path reads as the library does (HELP and
    TYPE lines repeat from scrape to scrape: each is read once, bounded)."""
    known = _COMMENTS.get(line)
    if known is None:
        found: list[str] = []
        known = _COMMENTS[line] = (_read_comment(line, found), found[0] if found else None)
        if len(_COMMENTS) > _LABELS_MAX:
            _COMMENTS.clear()
    if known[1] is not None:
        counters.append(known[1])
    return known[0]


#: Comment lines read, with what they say (bounded as ``_LABELS``).
_COMMENTS: dict[str, tuple[bool, str | None]] = {}
_COMMENT_NAMES: dict[str, str] = {}


def _read_comment(line: str, counters: list[str]) -> bool:
    if '"' in line or "\\" in line:
        return False
    parts = line.split(None, 3)
    if len(parts) < 2 or parts[1] not in ("HELP", "TYPE"):
        return True
    if len(parts) < 3 or not _METRIC_NAME.fullmatch(parts[2]):
        return False
    if parts[1] == "TYPE":
        if len(parts) < 4 or parts[3] not in _TYPES:
            return False
        if parts[3] == "counter" and not parts[2].endswith("_total"):
            counters.append(parts[2])
    return True


def _renamed_counter(counters: list[str], samples: list[Sample]) -> bool:
    """A counter ``x`` next to samples named ``x_total``: the library names ``x``'s
    samples ``x_total`` there (see ``_as_exposed``); leave such text to it."""
    names = {s.name for s in samples}
    return any(f"{c}_total" in names for c in counters)


def _exposed_names(text: str) -> set[str]:
    """Metric names at the start of sample lines (comment lines start with '#')."""
    return set(_SAMPLE_NAME.findall(text))


def _as_exposed(name: str, exposed: set[str]) -> str:
    """Undo the library's ``_total`` suffix when the text did not have it."""
    if name not in exposed and name.endswith("_total") and name[: -len("_total")] in exposed:
        return name[: -len("_total")]
    return name


def samples_named(samples: Iterable[Sample], name: str) -> list[Sample]:
    """Samples whose exposed name is ``name``."""
    return [sample for sample in samples if sample.name == name]


def split_families(text: str) -> dict[str, str]:
    """Exposition text grouped by metric name, without parsing any value.

    A scrape of 8 GPUs holds dozens of families; a check that reads two of them
    parses only those two (parsing is the expensive part on large fleets).
    HELP/TYPE lines go with the family they name, sample lines with their name.
    """
    groups: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.startswith("#"):
            name = _COMMENT_NAMES.get(line)
            if name is None:
                parts = line.split(None, 3)
                name = parts[2] if len(parts) > 2 and parts[1] in ("HELP", "TYPE") else ""
                if len(_COMMENT_NAMES) >= _LABELS_MAX:
                    _COMMENT_NAMES.clear()
                _COMMENT_NAMES[line] = name
        else:
            match = _SAMPLE_NAME.match(line)
            name = match.group(1) if match else ""
        if name:
            groups.setdefault(name, []).append(line)
    return {name: "\n".join(lines) + "\n" for name, lines in groups.items()}
