"""``diagnose --watch``: re-evaluate on an interval and say what changed since the last look."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime

import msgspec

from gpunode.commands.output import ReportFormat
from gpunode.model import Report
from gpunode.report.options import RenderOptions
from gpunode.safety import strip_controls

Key = tuple[str, str, str]
#: What a filter shows of a report (``diagnose --component/--layer``) and the line saying
#: what it hid (None: nothing hidden).
View = Callable[[Report], tuple[Report, str | None]]


def _whole(report: Report) -> tuple[Report, str | None]:
    return report, None


class _Looker:
    """Each evaluation: the whole report (its verdict is the exit code) and what the filter
    shows of it; the filter's line goes to stderr whenever it says something new."""

    def __init__(self, evaluate: Callable[[], Report], view: View) -> None:
        self.evaluate, self.view = evaluate, view
        self.said: str | None = None

    def look(self) -> tuple[Report, Report]:
        whole = self.evaluate()
        shown, line = self.view(whole)
        if line and line != self.said:
            print(f"diagnose: {line}", file=sys.stderr, flush=True)
        self.said = line
        return whole, shown


def root_causes(report: Report) -> dict[Key, str]:
    """(node, component, cause) -> title, for every root cause in the report."""
    out = {("(cluster)", rc.component, rc.cause): rc.title for rc in report.cluster.root_causes}
    out.update({(n.name, rc.component, rc.cause): rc.title for n in report.nodes for rc in n.root_causes})
    return out


def changes(before: dict[Key, str], after: dict[Key, str]) -> list[str]:
    """Lines for root causes that appeared (+) or went away (-)."""
    new = sorted(after.keys() - before.keys())
    lines = [f"+ {n}  {comp}  {cause} — {after[(n, comp, cause)]}" for n, comp, cause in new]
    lines += [f"- {n}  {comp}  {cause} (resolved)" for n, comp, cause in sorted(before.keys() - after.keys())]
    return [strip_controls(line) for line in lines]


def watch_reports(
    evaluate: Callable[[], Report],
    output: ReportFormat,
    options: RenderOptions,
    *,
    interval: float,
    count: int,
    view: View = _whole,
) -> int:
    """The full report once, then what changed at each evaluation; the last exit code.

    ``view`` narrows each refreshed report as ``--component``/``--layer`` narrow one report:
    what is shown and compared is the narrowed report, the exit code the whole one's.

    As ``kubectl get -w``: ``-o json`` writes one compact report JSON document per evaluation
    and line (JSON lines, for ``jq -c`` or a log shipper), ``-o yaml`` one YAML document per
    evaluation (``---`` between); the other formats print the report once and then one
    stamped block of changes."""
    looker = _Looker(evaluate, view)
    if output in (ReportFormat.json, ReportFormat.yaml):
        return _documents(looker, output, interval=interval, count=count)
    from gpunode.commands.common import emit
    from gpunode.report import DIAGNOSE_REPORTERS

    whole, report = looker.look()
    code = emit(report, DIAGNOSE_REPORTERS, output, options, failed=whole.has_failures)
    seen = root_causes(report)
    done = 1
    while count == 0 or done < count:
        time.sleep(interval)
        whole, report = looker.look()
        current = root_causes(report)
        stamp = datetime.now(UTC).strftime("%H:%M:%SZ")
        shown = " shown" if options.narrowed else ""
        lines = changes(seen, current) or [f"no change ({len(current)} root causes{shown})"]
        print(f"--- {stamp}", *lines, sep="\n", flush=True)
        seen, code, done = current, 1 if whole.has_failures else 0, done + 1
    sys.stdout.flush()
    return code


def _documents(looker: _Looker, output: ReportFormat, *, interval: float, count: int) -> int:
    """One report per evaluation (as the filter shows it): a JSON line, or a YAML document."""
    from gpunode.leftout import warn_first
    from gpunode.safety import safe_encoded

    done, code = 0, 0
    while count == 0 or done < count:
        if done:
            time.sleep(interval)
        whole, shown = looker.look()
        report, encoded = safe_encoded(shown, Report)
        warn_first(report)
        sys.stderr.flush()
        if output == ReportFormat.json:
            sys.stdout.write(encoded.decode() + "\n")
        else:
            import yaml

            sys.stdout.write(("---\n" if done else "") + yaml.safe_dump(
                msgspec.json.decode(encoded), sort_keys=False, allow_unicode=True))
        sys.stdout.flush()
        code, done = 1 if whole.has_failures else 0, done + 1
    return code
