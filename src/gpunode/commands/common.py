"""What every command shares: the console it writes to and how a report is emitted. It sits
below gpunode.cli and watch, which use it, so no lower module imports the command line; the
path from a bundle to a report is gpunode.commands.diagnosis.

Start-up matters: the reporters are imported inside the functions.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TextIO, cast

from gpunode.commands.output import ReportFormat

if TYPE_CHECKING:
    from rich.console import Console

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
