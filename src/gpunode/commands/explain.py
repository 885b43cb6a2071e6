"""``gpunode explain``: name the known causes in any text a user has.

Reads files (``.gz`` is decompressed) or standard input line by line, with a
cap on line length, so memory stays bounded on multi-GB inputs. containerd config
files among several sources are also read whole and judged together
(``gpunode.explain_config``), since some causes follow from a pair of files.
Exit 1 when a cause was recognised, 0 when none was, 2 when an input cannot be read.
"""

from __future__ import annotations

import gzip
import io
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated

import msgspec
import typer

from gpunode.commands.output import DocFormat, DocFormatOpt, write_json, write_yaml

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.table import Table

    from gpunode.explain import ByteStream, CauseMatch, Explanation, FileEvidence, XidSighting
    from gpunode.explain_config import ConfigFile, ConfigRead
    from gpunode.model import Status

STDIN = "-"


class QuotedLineOut(msgspec.Struct, frozen=True, omit_defaults=True):
    """A quoted line; ``source`` (the file it is in) only where several files were read."""

    line_no: int
    text: str
    source: str = ""


class FileKeyOut(msgspec.Struct, frozen=True):
    """A config key a cause follows from: the file as given, its place on the node, the key."""

    source: str
    node_path: str | None
    key: str
    detail: str


class ConfigFileOut(msgspec.Struct, frozen=True):
    """A containerd config among the sources: its role and whether containerd loads it
    (null: cannot be told)."""

    source: str
    node_path: str | None
    role: str
    loaded: bool | None


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
    files: tuple[FileKeyOut, ...] = ()


class XidOut(msgspec.Struct, frozen=True):
    code: int
    count: int
    mnemonic: str
    meaning: str
    cause_class: str
    action: str
    device_plugin_ignores: bool
    known: bool


class DecisiveOut(msgspec.Struct, frozen=True):
    """The text's decisive line (its last telling error) and the class it falls in."""

    line_no: int
    text: str
    line_class: str | None
    source: str = ""


class ExplainReport(msgspec.Struct, frozen=True):
    """``gpunode explain -o json``: best match first, the rest support it."""

    schema: str
    source: str
    component: str | None
    lines_read: int
    matched: bool
    matches: tuple[MatchOut, ...]
    xids: tuple[XidOut, ...]
    sources: tuple[str, ...] = ()
    configs: tuple[ConfigFileOut, ...] = ()
    decisive: DecisiveOut | None = None


def register(app: typer.Typer) -> None:
    @app.command("explain")
    def explain_cmd(
        sources: Annotated[
            list[str] | None,
            typer.Argument(
                help="Text files to read ('-' = standard input; .gz is decompressed). containerd "
                "configs among them (under an etc/containerd/ path or TOML naming containerd "
                "plugins) are judged together, root config with its drop-ins.",
                show_default=False,
            ),
        ] = None,
        component: Annotated[
            str | None, typer.Option("--component", help="Only this component's signatures (catalog id).")
        ] = None,
        output: DocFormatOpt = DocFormat.table,
    ) -> None:
        """Name the known causes in logs, kubectl describe output, dmesg dumps or containerd
        configs (exit 1 if any)."""
        from gpunode.commands.common import console as stdout_console

        names = _sources(sources)
        _check_component(component)
        result, configs = explain_sources(names, component)
        report = to_report(result, names, component, configs)
        RENDERERS[output.value](report, stdout_console())
        raise typer.Exit(1 if result.problems else 0)


def _sources(given: list[str] | None) -> list[str]:
    from gpunode.errors import UsageError

    names = given or [STDIN]
    if names.count(STDIN) > 1:
        raise UsageError("'-' (standard input) can be read only once")
    return names


def explain_sources(names: list[str], component: str | None) -> tuple[Explanation, tuple[ConfigRead, ...]]:
    """Every source's lines in turn, then the containerd configs among them judged together."""
    from gpunode.errors import ParseError, UsageError
    from gpunode.explain import explain_streams
    from gpunode.explain_config import judge
    from gpunode.kb import load_kb

    kb = load_kb()
    configs: list[ConfigFile] = []
    try:
        result = explain_streams(_streams(names, configs), kb, component=component)
        judged = judge(configs, kb, runtime_down=result.runtime_down)
    except ParseError as exc:
        raise UsageError(str(exc)) from None
    if component is not None:
        judged_matches = [m for m in judged.matches if m.cause.component == component]
    else:
        judged_matches = list(judged.matches)
    return result.with_matches(judged_matches), judged.files


def _streams(names: list[str], configs: list[ConfigFile]) -> Iterator[tuple[str, ByteStream]]:
    """Each source opened in turn (named in quotes only when there are several); a
    containerd config candidate is read whole and kept in ``configs`` as well."""
    from gpunode.errors import UsageError
    from gpunode.explain_config import is_candidate, recognise

    for name in names:
        label = name if len(names) > 1 else ""
        try:
            with _open_bytes(name) as stream:
                if name == STDIN or not is_candidate(name):
                    yield label, _Reader(name, stream)
                    continue
                data = _read_config(name, stream)
        except OSError as exc:
            raise UsageError(f"{name}: cannot read: {exc.strerror or exc}") from None
        config = recognise(name, data.decode("utf-8", errors="replace"))
        if config is not None:
            configs.append(config)
        yield label, io.BytesIO(data)


class _Reader:
    """A source's stream whose read errors name the source (they surface in the matcher)."""

    def __init__(self, name: str, stream: IO[bytes] | gzip.GzipFile) -> None:
        self._name, self._stream = name, stream

    def read(self, size: int, /) -> bytes:
        from gpunode.errors import UsageError

        try:
            return self._stream.read(size)
        except OSError as exc:
            raise UsageError(f"{self._name}: cannot read: {exc.strerror or exc}") from None


def _read_config(name: str, stream: IO[bytes] | gzip.GzipFile) -> bytes:
    """A config candidate whole, as large as ``diagnose`` reads a node file at most."""
    from gpunode.errors import UsageError
    from gpunode.limits import MAX_NODE_FILE_BYTES

    data = stream.read(MAX_NODE_FILE_BYTES + 1)
    if len(data) > MAX_NODE_FILE_BYTES:
        limit = MAX_NODE_FILE_BYTES >> 20
        raise UsageError(f"{name}: more than {limit} MiB, too large for a containerd config")
    return data


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


def to_report(
    result: Explanation, sources: str | list[str], component: str | None, configs: tuple[ConfigRead, ...] = ()
) -> ExplainReport:
    """``source`` is the one source's name, or all of them joined by ", " (``sources`` lists them)."""
    from gpunode.parse.pasted import names_from_path

    names = [sources] if isinstance(sources, str) else sources
    path_names: dict[str, str] = {}
    for name in reversed(names):  # the first file's names win
        path_names |= {} if name == STDIN else names_from_path(name)
    return ExplainReport(
        schema="gpunode.explain/v1",
        source=", ".join(names),
        component=component,
        lines_read=result.lines_read,
        matched=result.matched,
        matches=tuple(_match_out(m, result.step_values(m, path_names)) for m in result.matches),
        xids=tuple(_xid_out(x) for x in result.xids),
        sources=tuple(names),
        configs=tuple(ConfigFileOut(c.source, c.node_path, c.role, c.loaded) for c in configs),
        decisive=_decisive_out(result),
    )


def _decisive_out(result: Explanation) -> DecisiveOut | None:
    from gpunode.safety import strip_controls

    quote = result.decisive
    if quote is None:
        return None
    return DecisiveOut(quote.line_no, strip_controls(quote.text), result.decisive_class, quote.source)


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
        lines=tuple(QuotedLineOut(q.line_no, strip_controls(q.text), q.source) for q in m.quotes),
        explanation=cause.explanation,
        fix=cause.fix,
        next_steps=render_steps(cause, values),
        references=cause.references,
        files=tuple(_file_out(f) for f in m.files),
    )


def _file_out(f: FileEvidence) -> FileKeyOut:
    from gpunode.safety import strip_controls

    return FileKeyOut(f.source, f.node_path, strip_controls(f.key), strip_controls(f.detail))


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


def render_yaml(report: ExplainReport, console: Console) -> None:
    write_yaml(console, report)


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
    known = [m for m in report.matches if m.component != "*"]
    found = len(known)
    what = (
        f"{found} known cause{'s' if found != 1 else ''} recognised" if found else "no known cause recognised"
    )
    if not found and report.decisive is not None and report.decisive.line_class:
        what += f"; the decisive line is {report.decisive.line_class}"
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
    body.extend(Padding(Text.assemble((f"{_where(q)}: ", "cyan"), q.text), (0, 2)) for q in m.lines)
    if m.count > len(m.lines):
        body.append(Padding(Text(f"… and {m.count - len(m.lines)} more", style="dim"), (0, 2)))
    if m.files:
        body.append(Text("config keys", style="underline"))
        body.extend(Padding(Text.assemble((f"{_file_key(f)}: ", "cyan"), f.detail), (0, 2)) for f in m.files)
    body.append(Text.assemble(("fix  ", "underline"), m.fix))
    rank = "best match" if best else "also matched"
    where = "class of the decisive line" if m.component == "*" else f"{m.component} ({layer_label(m.layer)})"
    title = f"{rank}: {m.cause} — {where}"
    if not framed:
        return Group(Text(title, style="bold"), Padding(Group(*body), (0, 2)), Text(""))
    return Panel(Group(*body), title=title, title_align="left", border_style=STATUS_STYLE[_status(m.status)])


def _where(q: QuotedLineOut) -> str:
    """``12`` for the one source read, ``file:12`` where several were."""
    return f"{q.source}:{q.line_no}" if q.source else str(q.line_no)


def _file_key(f: FileKeyOut) -> str:
    """The file as given, its node path when that differs, and the key."""
    given = "/" + f.source.replace("\\", "/").lstrip("/")
    placed = f" ({f.node_path})" if f.node_path and not given.endswith(f.node_path) else ""
    return f"{f.source}{placed} [{f.key}]"


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
    lines = "\n".join(f"    {_where(q)}: {q.text}" for q in m.lines)
    keys = "".join(f"\n    {_file_key(f)}: {f.detail}" for f in m.files)
    keys = f"\n\nConfig keys:\n{keys}" if keys else ""
    more = f"\n\n…and {m.count - len(m.lines)} more matching lines." if m.count > len(m.lines) else ""
    steps = "\n".join(f"    {_noted(step)}" for step in m.next_steps)
    return (
        f"## `{m.cause}` ({rank}) — {m.title}\n\n"
        f"Component `{m.component}`, layer {m.layer}, {m.status}.\n\n{m.explanation}\n\n"
        f"Matching lines ({m.count}):\n\n{lines}{more}{keys}\n\n**Fix:** {m.fix}\n\nNext:\n\n{steps}\n"
    )


def _xid_markdown(xids: tuple[XidOut, ...]) -> str:
    rows = [
        f"| {x.code} | {x.count} | {x.mnemonic} | {x.cause_class} | {x.action} | "
        f"{'yes' if x.device_plugin_ignores else 'no'} |"
        for x in xids
    ]
    header = "| Xid | count | name | class | action | ignored by device plugin |\n|---|---|---|---|---|---|"
    return "## Xids seen\n\n" + header + "\n" + "\n".join(rows) + "\n"


RENDERERS = {"table": render_table, "json": render_json, "yaml": render_yaml, "markdown": render_markdown}
