"""What every command shares: the console it writes to, how a report is emitted, and the
offline path from a bundle to a report. It sits below gpunode.cli and watch, which use it,
so no lower module imports the command line.

Start-up matters: modules that load bundles or diagnose are imported inside the functions.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, cast

from gpunode.commands.output import ReportFormat

if TYPE_CHECKING:
    from rich.console import Console

    from gpunode.diagnose import Reuse
    from gpunode.model import Report
    from gpunode.report import Reporter
    from gpunode.report.options import RenderOptions


def console() -> Console:
    """Rich on a terminal; piped, plain text whose lines carry no trailing padding."""
    from rich.console import Console

    if sys.stdout.isatty():
        return Console(soft_wrap=False, highlight=False)
    from gpunode.report.plain import PlainWriter

    return Console(file=cast("TextIO", PlainWriter(sys.stdout)), soft_wrap=False, highlight=False)


def build_report(bundle: Path, nodes: list[str] | None, selector: str | None = None,
                 reuse: Reuse | None = None, name: str | None = None, *, live: bool = False) -> Report:
    """Load a bundle and diagnose it (the offline path shared by several commands); ``reuse``:
    node reports a live collection already judged from the same facts. No GPU node found
    while the node or pod list could not be read is SourceUnreachable (exit 3; ``name``: the
    source as the message names it, else the bundle's path), never an empty report. Every
    evidence gets what opens it: the bundle path, or ``live`` the kubectl command."""
    import msgspec

    from gpunode.bundle.load import gc_paused, keep_facts, loaded_reading_ahead, read_node_observations
    from gpunode.diagnose import diagnose
    from gpunode.leftout import selection_of
    from gpunode.report.openref import exists_in, with_open
    from gpunode.selector import bundle_node_labels, select_nodes
    from gpunode.unread import refuse_empty

    # The facts only grow until the report is built (gc_paused: no collection pass over
    # millions of objects of a large bundle, before or after).
    with gc_paused(keep=True), loaded_reading_ahead(bundle) as loaded:
        facts = keep_facts(loaded)
        wanted = select_nodes(bundle_node_labels(facts), nodes or (), selector, str(bundle))
        report = diagnose(facts, read_node_observations, wanted, reuse=reuse)
        if not report.nodes:
            refuse_empty(name or str(bundle), facts.manifest)
        selection = selection_of(facts, wanted, nodes or (), selector)
        report = with_open(report, live=live, exists=exists_in(facts.source))
        return report if selection is None else msgspec.structs.replace(report, selection=selection)


def emit(report: Report, reporters: dict[str, Reporter], output: ReportFormat, options: RenderOptions,
         failed: bool | None = None) -> int:
    """Warnings about missing data first, on stderr; then the report on stdout; the exit code
    (``failed``: the whole report's verdict where the report shown is narrowed by a filter).

    JSON is the Report struct as it is for every command (report JSON v1): written from the
    encoding the terminal-safety pass made anyway, without a console (rich) to write through."""
    from gpunode.leftout import warn_first
    from gpunode.safety import safe_encoded, safe_struct

    if output == ReportFormat.json:
        from gpunode.report.jsonout import formatted, write_json

        report, encoded = safe_encoded(report, type(report))  # no terminal escapes from collected data
        warn_first(report)
        sys.stderr.flush()
        write_json(stdout(), formatted(encoded))
        return 1 if (report.has_failures if failed is None else failed) else 0
    report = safe_struct(report, type(report))
    warn_first(report)
    sys.stderr.flush()
    reporters[output.value](report, console(), options)
    return 1 if (report.has_failures if failed is None else failed) else 0


def stdout() -> TextIO:
    """Standard output as the console would write to it (a wrapper dropping trailing blanks
    when piped), for output written without a console."""
    if sys.stdout.isatty():
        return sys.stdout
    from gpunode.report.plain import PlainWriter

    return cast("TextIO", PlainWriter(sys.stdout))
