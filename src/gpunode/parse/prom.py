"""Prometheus text exposition (dcgm-exporter, node_exporter scrapes)."""

from __future__ import annotations

import re
from collections.abc import Iterable

import msgspec
from prometheus_client.parser import text_string_to_metric_families

from gpunode.errors import ParseError


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


_SAMPLE_NAME = re.compile(r"^\s*([a-zA-Z_:][a-zA-Z0-9_:]*)", re.MULTILINE)


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
            parts = line.split(None, 3)
            name = parts[2] if len(parts) > 2 and parts[1] in ("HELP", "TYPE") else ""
        else:
            match = _SAMPLE_NAME.match(line)
            name = match.group(1) if match else ""
        if name:
            groups.setdefault(name, []).append(line)
    return {name: "\n".join(lines) + "\n" for name, lines in groups.items()}
