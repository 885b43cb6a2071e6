"""``gpunode explain``: name the known causes in any text a user has.

Reads a file (``.gz`` is decompressed) or standard input line by line, with a
cap on line length, so memory stays bounded on multi-GB inputs. Exit 1 when a
cause was recognised, 0 when none was, 2 when the input cannot be read.
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated

import msgspec
import typer

from gpunode.commands.output import DocFormat, DocFormatOpt, write_json

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.table import Table

    from gpunode.explain import CauseMatch, Explanation, XidSighting
    from gpunode.model import Status

STDIN = "-"


class QuotedLineOut(msgspec.Struct, frozen=True):
    line_no: int
    text: str


class MatchOut(msgspec.Struct, frozen=True):
    """One recognised cause in ``gpunode explain -o json`` (schema gpunode.explain/v1)."""

    cause: str
    component: str
    layer: int
    title: str
    status: str
    specificity: int
    count: int
    lines: tuple[QuotedLineOut, ...]
    explanation: str
    fix: str
    next_steps: tuple[str, ...]
    references: tuple[str, ...]


class XidOut(msgspec.Struct, frozen=True):
    code: int
    count: int
    mnemonic: str
    meaning: str
    cause_class: str
    action: str
    device_plugin_ignores: bool
    known: bool


class ExplainReport(msgspec.Struct, frozen=True):
    """``gpunode explain -o json``: best match first, the rest support it."""

    schema: str
    source: str
    component: str | None
    lines_read: int
    matched: bool
    matches: tuple[MatchOut, ...]
    xids: tuple[XidOut, ...]


def register(app: typer.Typer) -> None:
    @app.command("explain")
    def explain_cmd(
        source: Annotated[
            str, typer.Argument(help="Text file to read ('-' = standard input; .gz is decompressed).")
        ] = STDIN,
        component: Annotated[
            str | None, typer.Option("--component", help="Only this component's signatures (catalog id).")
        ] = None,
        output: DocFormatOpt = DocFormat.table,
    ) -> None:
        """Name the known causes in a log, kubectl describe output or dmesg dump (exit 1 if any)."""
        from gpunode.cli import stdout_console
        from gpunode.errors import UsageError
        from gpunode.explain import explain_stream

        _check_component(component)
        try:
            with _open_bytes(source) as stream:
                result = explain_stream(stream, component=component)
        except OSError as exc:
            raise UsageError(f"{source}: cannot read: {exc.strerror or exc}") from None
        report = to_report(result, source, component)
        RENDERERS[output.value](report, stdout_console())
        raise typer.Exit(1 if result.problems else 0)


def _check_component(component: str | None) -> None:
    from gpunode.catalog import load_catalog
    from gpunode.errors import UsageError

    ids = load_catalog().ids
    if component is not None and component not in ids:
        raise UsageError(f"unknown component {component!r}; known: {', '.join(ids)}")


def _open_bytes(source: str) -> IO[bytes] | gzip.GzipFile:
    """The raw bytes of a file (decompressed if .gz) or stdin; decoded per line later."""
    if source == STDIN:
        return sys.stdin.buffer
    path = Path(source)
    if path.is_dir():
        raise IsADirectoryError(21, "is a directory")
    if path.exists() and not path.is_file():  # a FIFO or device never ends: refuse it
        raise OSError(22, "not a regular file (pipe it in with '-' to read a stream)")
    if path.suffix == ".gz":
        return gzip.open(path, "rb")
    return path.open("rb")


def to_report(result: Explanation, source: str, component: str | None) -> ExplainReport:
    from gpunode.parse.pasted import names_from_path

    path_names = {} if source == STDIN else names_from_path(source)
    return ExplainReport(
        schema="gpunode.explain/v1",
        source=source,
        component=component,
        lines_read=result.lines_read,
        matched=result.matched,
        matches=tuple(_match_out(m, result.step_values(m, path_names)) for m in result.matches),
        xids=tuple(_xid_out(x) for x in result.xids),
    )


def _match_out(m: CauseMatch, values: dict[str, str]) -> MatchOut:
    from gpunode.kb import render_steps
    from gpunode.safety import strip_controls

    cause = m.cause
    return MatchOut(
        cause=cause.code,
        component=cause.component,
        layer=m.layer,
        title=cause.title,
        status=cause.status,
        specificity=cause.specificity,
        count=m.count,
        lines=tuple(QuotedLineOut(q.line_no, strip_controls(q.text)) for q in m.quotes),
        explanation=cause.explanation,
        fix=cause.fix,
        next_steps=render_steps(cause, values),
        references=cause.references,
    )


def _xid_out(x: XidSighting) -> XidOut:
    info = x.info
    return XidOut(
        code=info.code,
        count=x.count,
        mnemonic=info.mnemonic,
        meaning=info.meaning,
        cause_class=info.cause_class,
        action=info.action,
        device_plugin_ignores=info.device_plugin_ignores,
        known=info.known,
    )


# -- rendering ------------------------------------------------------------------------


def render_json(report: ExplainReport, console: Console) -> None:
    write_json(console, report)


def render_table(report: ExplainReport, console: Console) -> None:
    from rich.text import Text

    console.print(Text.assemble(("gpunode explain", "bold"), f" — {_summary(report)}"))
    for i, m in enumerate(report.matches):
        console.print(_match_panel(m, best=i == 0, framed=console.is_terminal))
        _steps(m, console)
    if report.xids:
        console.print(_xid_table(report.xids, console))


def _summary(report: ExplainReport) -> str:
    scope = f", {report.component} signatures only" if report.component else ""
    found = len(report.matches)
    what = (
        f"{found} known cause{'s' if found != 1 else ''} recognised" if found else "no known cause recognised"
    )
    return f"{report.lines_read:,} lines read from {report.source}{scope}: {what}"


def _match_panel(m: MatchOut, best: bool, framed: bool = True) -> RenderableType:
    """A framed panel on a terminal; piped, the title line and the body without line art."""
    from rich.console import Group
    from rich.padding import Padding
    from rich.panel import Panel
    from rich.text import Text

    from gpunode.report.style import STATUS_STYLE, layer_label

    body: list[RenderableType] = [Text(m.title, style="bold"), Text(m.explanation, style="dim")]
    body.append(Text(f"matching lines ({m.count})", style="underline"))
    body.extend(Padding(Text.assemble((f"{q.line_no}: ", "cyan"), q.text), (0, 2)) for q in m.lines)
    if m.count > len(m.lines):
        body.append(Padding(Text(f"… and {m.count - len(m.lines)} more", style="dim"), (0, 2)))
    body.append(Text.assemble(("fix  ", "underline"), m.fix))
    rank = "best match" if best else "also matched"
    title = f"{rank}: {m.cause} — {m.component} ({layer_label(m.layer)})"
    if not framed:
        return Group(Text(title, style="bold"), Padding(Group(*body), (0, 2)), Text(""))
    return Panel(Group(*body), title=title, title_align="left", border_style=STATUS_STYLE[_status(m.status)])


def _steps(m: MatchOut, console: Console) -> None:
    """Next steps below the panel as plain shell lines, never wrapped, so they copy as printed."""
    from rich.text import Text

    if not m.next_steps:
        return
    console.print(Text("  next", style="underline"))
    for step in m.next_steps:
        console.print(Text.assemble(("  $ ", "dim"), (_noted(step), "green")), soft_wrap=True)
    console.print()


def _noted(step: str) -> str:
    """A command that only runs on the node (or reaches it over ssh) says so."""
    from gpunode.report.fleet import node_only

    return f"{step}  # on the node" if node_only(step) else step


def _status(status: str) -> Status:
    """A benign cause is drawn as ok: it is evidence, not a problem."""
    from gpunode.model import Status

    return Status.OK if status == "benign" else Status(status)


def _xid_table(xids: tuple[XidOut, ...], console: Console) -> Table:
    from rich.table import Table

    from gpunode.report.style import table_box

    table = Table(title="Xids seen", title_justify="left", box=table_box(console), pad_edge=False)
    for column in ("Xid", "count", "name", "class", "action", "device plugin"):
        table.add_column(column)
    for x in xids:
        plugin = "ignores (app error)" if x.device_plugin_ignores else "marks GPU unhealthy"
        name = x.mnemonic if x.known else "not in catalog"
        table.add_row(str(x.code), str(x.count), name, x.cause_class, x.action, plugin)
    return table


def render_markdown(report: ExplainReport, console: Console) -> None:
    out = [f"# gpunode explain\n\n{_summary(report)}.\n"]
    for i, m in enumerate(report.matches):
        out.append(_match_markdown(m, best=i == 0))
    if report.xids:
        out.append(_xid_markdown(report.xids))
    console.file.write("\n".join(out))


def _match_markdown(m: MatchOut, best: bool) -> str:
    rank = "best match" if best else "also matched"
    lines = "\n".join(f"    {q.line_no}: {q.text}" for q in m.lines)
    more = f"\n\n…and {m.count - len(m.lines)} more matching lines." if m.count > len(m.lines) else ""
    steps = "\n".join(f"    {_noted(step)}" for step in m.next_steps)
    return (
        f"## `{m.cause}` ({rank}) — {m.title}\n\n"
        f"Component `{m.component}`, layer {m.layer}, {m.status}.\n\n{m.explanation}\n\n"
        f"Matching lines ({m.count}):\n\n{lines}{more}\n\n**Fix:** {m.fix}\n\nNext:\n\n{steps}\n"
    )


def _xid_markdown(xids: tuple[XidOut, ...]) -> str:
    rows = [
        f"| {x.code} | {x.count} | {x.mnemonic} | {x.cause_class} | {x.action} | "
        f"{'yes' if x.device_plugin_ignores else 'no'} |"
        for x in xids
    ]
    header = "| Xid | count | name | class | action | ignored by device plugin |\n|---|---|---|---|---|---|"
    return "## Xids seen\n\n" + header + "\n" + "\n".join(rows) + "\n"


RENDERERS = {"table": render_table, "json": render_json, "markdown": render_markdown}
