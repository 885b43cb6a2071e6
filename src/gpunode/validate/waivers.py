"""``validate --waivers FILE``: findings accepted until a date stop failing CI, and say so.

The file is a YAML list; each entry names a check id, the nodes it covers (a list of names,
a label selector as a string, or absent for every node), a reason and an expiry date::

    - check: gpu-health.ecc
      nodes: [gpu-wk-07]
      reason: RMA open, ticket 4711
      expires: 2026-07-01

A waiver applies to a check's result when the result is not a pass and every node it names
is covered (a cluster-wide result: only by a waiver without nodes). The result keeps its
verdict and gains ``waived`` (the reason); it counts as passed. An entry past its expiry date
(the date itself still counts) is ignored and named as expired. A malformed file is one line
naming the file and the entry, exit 2, before anything is read from the cluster.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from gpunode.errors import UsageError
from gpunode.validation import (
    CheckResult,
    ValidationReport,
    Verdict,
    WaiverUse,
    category_result,
    cluster_verdict,
)

#: A waiver file is a short list written by hand: anything larger is not one.
MAX_WAIVER_BYTES = 1024 * 1024
_FIELDS = ("check", "nodes", "reason", "expires")
_SELECTOR_MARKS = ("=", "!", "(")


@dataclass(frozen=True)
class Waiver:
    """One entry as written: ``selector`` or ``names`` (neither: every node)."""

    entry: int
    check: str
    reason: str
    expires: dt.date
    selector: str | None = None
    names: tuple[str, ...] = ()


def load_waivers(path: Path, known_checks: Sequence[str]) -> tuple[Waiver, ...]:
    """The file's entries, or UsageError (exit 2) naming the file and the entry at fault."""
    import yaml

    try:
        if path.stat().st_size > MAX_WAIVER_BYTES:
            raise UsageError(f"--waivers {path}: larger than {MAX_WAIVER_BYTES // 1024} KiB; "
                             "not a waiver file")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--waivers {path}: cannot read it ({exc.__class__.__name__})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise UsageError(f"--waivers {path}: not YAML{where}") from None
    if data is None:
        return ()
    if not isinstance(data, list):
        raise UsageError(f"--waivers {path}: expected a list of waivers (check, nodes, reason, expires)")
    return tuple(_entry(path, i, item, known_checks) for i, item in enumerate(data, 1))


def _entry(path: Path, index: int, item: Any, known: Sequence[str]) -> Waiver:
    def bad(why: str) -> UsageError:
        return UsageError(f"--waivers {path}: entry {index}: {why}")

    if not isinstance(item, dict):
        raise bad("expected a mapping with check, nodes, reason, expires")
    extra = sorted(str(k) for k in item if k not in _FIELDS)
    if extra:
        raise bad(f"unknown field {', '.join(extra)} (fields: {', '.join(_FIELDS)})")
    check = item.get("check")
    if not isinstance(check, str) or not check:
        raise bad("check: a check id is required (gpunode validate --list-checks)")
    if check not in known:
        raise bad(f"check {check!r}: no such check (gpunode validate --list-checks)")
    reason = item.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise bad("reason: say why the finding is accepted")
    selector, names = _nodes(item.get("nodes"), bad)
    return Waiver(index, check, reason.strip(), _date(item.get("expires"), bad), selector, names)


def _date(value: Any, bad: Any) -> dt.date:
    """YAML reads an unquoted 2026-07-01 as a date; a quoted one is parsed the same way."""
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value.strip())
        except ValueError:
            pass
    raise bad(f"expires: a date (YYYY-MM-DD) is required, got {value!r}")


def _nodes(value: Any, bad: Any) -> tuple[str | None, tuple[str, ...]]:
    """A list of names; a string with a selector's marks (=, !, parentheses) is a label
    selector, else comma-separated names; absent: every node."""
    if value is None:
        return None, ()
    if isinstance(value, list) and value and all(isinstance(v, str) and v for v in value):
        return None, tuple(value)
    if isinstance(value, str) and value.strip():
        if any(mark in value for mark in _SELECTOR_MARKS):
            from gpunode.selector import parse_selector

            try:
                parse_selector(value)
            except UsageError:
                raise bad(f"nodes: cannot parse the selector {value!r}") from None
            return value, ()
        return None, tuple(n.strip() for n in value.split(",") if n.strip())
    raise bad("nodes: a list of node names or a label selector string")


def apply_waivers(report: ValidationReport, waivers: Sequence[Waiver],
                  labels: Mapping[str, Mapping[str, str]], today: dt.date | None = None
                  ) -> ValidationReport:
    """The report with waived results marked, categories and verdict folded again, and each
    entry's use (applied, expired, unused) recorded."""
    if not waivers:
        return report
    today = today or dt.datetime.now(dt.UTC).date()
    live = [w for w in waivers if w.expires >= today]
    applied: dict[int, list[CheckResult]] = {w.entry: [] for w in live}
    categories = []
    for cat in report.categories:
        checks = tuple(_waive(c, live, labels, applied) for c in cat.checks)
        categories.append(category_result(cat.name, checks))
    uses = tuple(_use(w, today, applied.get(w.entry, []), report, labels) for w in waivers)
    return msgspec.structs.replace(report, categories=tuple(categories),
                                   verdict=cluster_verdict(categories), waivers=uses)


def covered(waiver: Waiver, labels: Mapping[str, Mapping[str, str]]) -> set[str] | None:
    """The nodes a waiver covers; None: every node."""
    if waiver.selector is not None:
        from gpunode.selector import parse_selector

        matches = parse_selector(waiver.selector)
        return {name for name, node_labels in labels.items() if matches(node_labels)}
    return set(waiver.names) if waiver.names else None


def _covers(waiver: Waiver, result: CheckResult, labels: Mapping[str, Mapping[str, str]]) -> bool:
    if waiver.check != result.id or result.verdict in (Verdict.PASS, Verdict.SKIP):
        return False
    nodes = covered(waiver, labels)
    if nodes is None:
        return True
    return bool(result.nodes) and set(result.nodes) <= nodes


def _waive(result: CheckResult, live: Sequence[Waiver], labels: Mapping[str, Mapping[str, str]],
           applied: dict[int, list[CheckResult]]) -> CheckResult:
    for waiver in live:
        if _covers(waiver, result, labels):
            applied[waiver.entry].append(result)
            return msgspec.structs.replace(result, waived=waiver.reason)
    return result


def _use(waiver: Waiver, today: dt.date, results: list[CheckResult], report: ValidationReport,
         labels: Mapping[str, Mapping[str, str]]) -> WaiverUse:
    state, note, nodes = "applied", "", tuple(sorted({n for r in results for n in r.nodes}))
    if waiver.expires < today:
        state, note = "expired", f"expired {waiver.expires.isoformat()}; its findings count again"
    elif not results:
        state, note = "unused", _unused_note(waiver, report, labels)
    return WaiverUse(waiver.entry, waiver.check, waiver.reason, waiver.expires.isoformat(), state,
                     waiver.selector, waiver.names, nodes, note)


def _unused_note(waiver: Waiver, report: ValidationReport, labels: Mapping[str, Mapping[str, str]]) -> str:
    """Why a live waiver accepted nothing: its check passed, or the check also fails elsewhere."""
    result = next((c for c in report.checks() if c.id == waiver.check), None)
    if result is None:
        return "its check did not run"
    if result.verdict in (Verdict.PASS, Verdict.SKIP):
        return f"its check is {result.verdict.value}"
    nodes = covered(waiver, labels) or set()
    outside = [n for n in result.nodes if n not in nodes]
    if not result.nodes:
        return "the check's finding is cluster-wide; a waiver for it names no nodes"
    return f"the check is {result.verdict.value} also on {', '.join(outside)}, which it does not cover"
