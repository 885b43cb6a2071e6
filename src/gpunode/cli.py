"""Command line: thin wrappers that load facts, diagnose, and render.

Exit codes (a contract): 0 no failure found, 1 failures found, 2 bad usage
or bad input, 3 source unreachable or unauthorised (also: nothing could be read, or no
GPU node found while the node or pod list could not be read: gpunode.unread), 4 an
internal error (a bug: one line, the traceback only with ``--debug``). Errors are one
line on stderr.

Start-up matters (``gpunode --help``, ``gpunode probe`` on a node): modules that
load bundles, talk to the API or diagnose are imported inside the commands
that need them, never here.
"""

from __future__ import annotations

import functools
import importlib
import os
import re
import signal
import sys
import tempfile
import threading
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
import typer.core
import typer.main

from gpunode import __version__, cliparams
from gpunode.commands.common import console, emit
from gpunode.commands.diagnosis import build_report
from gpunode.commands.extras import (
    AllNodesOpt,
    DeepOpt,
    RequestTimeoutOpt,
    RunTimeoutOpt,
    extras_policy,
    request_timeout,
    run_timeout,
    whole_run,
)
from gpunode.commands.output import ReportFormat, ReportFormatOpt
from gpunode.errors import GpunodeError, UsageError
from gpunode.relazy import lazy_compile

if TYPE_CHECKING:

    from gpunode.collect.access import ClusterAccess
    from gpunode.diagnose import Reuse
    from gpunode.model import Report
    from gpunode.report.options import RenderOptions

app = typer.Typer(
    name="gpunode",
    help="What is actually running on each GPU node, and which component to check first.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _list_shown_as_item(shown: str | None) -> str | None:
    """``<list[str]>`` is Python's name for a repeatable value: help shows the item, ``<str>...``."""
    if shown is None:
        return None
    match = re.fullmatch(r"<list\[(\w+)\]>(\.\.\.)?", shown)
    return f"<{match.group(1)}>..." if match else shown


def _no_bool_metavar() -> None:
    """Typer's rich help prints ``<bool>`` after flags that take no value; show nothing there."""
    shown_option = typer.core.TyperOption.display_type_rich
    shown_argument = typer.core.TyperArgument.display_type_rich

    def option_type(self: typer.core.TyperOption, ctx: Any) -> str | None:
        return None if self.is_flag else _list_shown_as_item(shown_option(self, ctx))

    def argument_type(self: typer.core.TyperArgument, ctx: Any) -> str | None:
        return _list_shown_as_item(shown_argument(self, ctx))

    typer.core.TyperOption.display_type_rich = option_type  # type: ignore[method-assign]
    typer.core.TyperArgument.display_type_rich = argument_type  # type: ignore[method-assign,assignment]


_no_bool_metavar()
cliparams.install()


def _complete_nodes(ctx: typer.Context, incomplete: str) -> list[str]:
    from gpunode.completion import node_names

    return [n for n in node_names(ctx.params) if n.startswith(incomplete)]


def _complete_contexts(incomplete: str) -> list[str]:
    from gpunode.kubeconfig import context_names

    try:
        return [c for c in context_names() if c.startswith(incomplete)]
    except GpunodeError:
        return []


FromOpt = Annotated[
    Path | None,
    typer.Option("--from", help="Read a saved bundle (directory or .tar.gz) instead of a live cluster."),
]
NodesArg = Annotated[
    list[str] | None,
    typer.Argument(help="Only these nodes (default: every GPU node).", autocompletion=_complete_nodes),
]
SelectorOpt = Annotated[
    str | None,
    typer.Option(
        "-l", "--selector", help="Only nodes whose labels match (kubectl syntax: k=v,k!=v,k in (a,b))."
    ),
]
AllOpt = Annotated[bool, typer.Option("--all", help="List every node of a shared root cause (also -o wide).")]
KubeconfigOpt = Annotated[
    Path | None,
    typer.Option(
        help="kubeconfig to read the live cluster with (default: $KUBECONFIG, ~/.kube/config, in-cluster)."
    ),
]
ContextOpt = Annotated[
    str | None, typer.Option(help="kubeconfig context to use.", autocompletion=_complete_contexts)
]
StackOpt = Annotated[bool, typer.Option("--stack", help="Draw each node's stack after the diagnosis.")]
QuietOpt = Annotated[bool, typer.Option("-q", "--quiet", help="No progress bar on stderr.")]


# For command modules and tests: the same terminal/pipe handling (gpunode.commands.common).
_console = console
stdout_console = console


def render_options(output: ReportFormat, show_all: bool = False, show_stack: bool = False) -> RenderOptions:
    from gpunode.report.options import RenderOptions

    return RenderOptions(expand=show_all or output == ReportFormat.wide, show_stack=show_stack)


def resolve_bundle(
    source: Path | None,
    *,
    kubeconfig: Path | None,
    context: str | None,
    nodes: list[str] | None,
    quiet: bool,
    workdir: Path,
    selector: str | None = None,
    extras: str = "suspect",
    request_timeout_s: float | None = None,
    access: ClusterAccess | None = None,
) -> tuple[Path, Reuse | None]:
    """The bundle to judge: a saved one (a GPU Operator must-gather is converted), or a
    fresh collection from the live cluster into ``workdir`` (``access``: the command's
    cluster, resolved once; without it, the one the other flags name)."""
    if source is not None:
        if kubeconfig is not None or context is not None or request_timeout_s is not None:
            raise UsageError(
                "--from reads a saved bundle; drop --kubeconfig/--context/--request-timeout, or drop --from"
            )
        from gpunode.collect.mustgather import convert_must_gather, is_must_gather

        if source.is_dir() and is_must_gather(source):
            return convert_must_gather(source, workdir / "must-gather"), None
        return source, None
    from gpunode.collect.live import collect_bundle

    result = collect_bundle(
        workdir / "live", kubeconfig=kubeconfig, context=context, nodes=nodes or (), quiet=quiet,
        selector=selector, extras=extras, request_timeout_s=request_timeout_s, access=access,
    )
    return result.path, result.reuse


def report_from(
    source: Path | None,
    kubeconfig: Path | None,
    context: str | None,
    nodes: list[str] | None,
    quiet: bool,
    *,
    selector: str | None = None,
    extras: str = "suspect",
    request_timeout_s: float | None = None,
    since: float | None = None,
) -> Report:
    """Diagnose a saved bundle, or the live cluster (collected into a temporary bundle)."""
    if source is not None and extras != "suspect":
        raise UsageError("--deep/--all-nodes choose what a live collection fetches; drop them with --from")
    access = None
    if source is None:  # one read of the kubeconfig: the collection's, and the context named
        from gpunode.collect.access import ClusterAccess

        access = ClusterAccess(kubeconfig, context, request_timeout_s)
    with tempfile.TemporaryDirectory(prefix="gpunode-") as tmp:
        bundle, reuse = resolve_bundle(
            source, kubeconfig=kubeconfig, context=context, nodes=nodes, quiet=quiet, workdir=Path(tmp),
            selector=selector, extras=extras, request_timeout_s=request_timeout_s, access=access,
        )
        context_used = None if access is None else access.context_name()
        shown = f"cluster (context {context_used or 'current'})" if source is None else str(source)
        report = build_report(bundle, nodes, selector, reuse, shown, live=source is None)
        converted = source is not None and bundle != source
        if converted:  # a must-gather's working copy: evidence opens in the files the user gave
            from gpunode.collect.mustgather import origins_of
            from gpunode.report.openref import with_origins

            report = with_origins(report, *origins_of(bundle))
        if since is not None:  # the agents' histories are in the bundle, gone with it below
            from gpunode.commands.history import with_changes

            report = with_changes(report, bundle, since)
    if source is None:
        return relabel(report, shown, context=context_used)
    return relabel(report, str(source) if converted else report.source.location, path=str(source))


def relabel(report: Report, location: str, *, context: str | None = None, path: str | None = None) -> Report:
    """Name the source of a report as the user gave it (not a deleted temporary directory)."""
    import msgspec

    src = msgspec.structs.replace(report.source, location=location, context=context, path=path)
    return msgspec.structs.replace(report, source=src)


@app.command("diagnose")
def diagnose_cmd(
    nodes: NodesArg = None,
    *,
    source: FromOpt = None,
    selector: SelectorOpt = None,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    output: ReportFormatOpt = ReportFormat.table,
    show_all: AllOpt = False,
    show_stack: StackOpt = False,
    watch: Annotated[
        bool, typer.Option("-w", "--watch", help="Re-evaluate every --interval seconds; show what changed.")
    ] = False,
    interval: Annotated[float, typer.Option(help="Seconds between evaluations with --watch.")] = 30.0,
    count: Annotated[
        int, typer.Option(help="With --watch: stop after this many evaluations (0: until Ctrl-C).")
    ] = 0,
    quiet: QuietOpt = False,
    deep: DeepOpt = False,
    all_nodes: AllNodesOpt = False,
    timeout: RequestTimeoutOpt = None,
    deadline: RunTimeoutOpt = None,
    component: Annotated[
        list[str] | None,
        typer.Option("--component", help="Show only these components (catalog ids, ID[,ID]; exit code "
                     "unchanged)."),
    ] = None,
    layer: Annotated[
        list[str] | None,
        typer.Option("--layer", help="Show only these layers (0 host to 5 cluster control, N[,N]; exit "
                     "code unchanged)."),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option("--since", metavar="WHEN",
                     help="Also say what changed on each node since then (24h, 7d, or an RFC 3339 time), "
                     "from the gpunode agents' histories; no old bundle needed."),
    ] = None,
) -> None:
    """The fleet summary (worst first), then each root cause with evidence and next commands."""
    from gpunode.commands.filters import parse_shown

    options = render_options(output, show_all, show_stack)
    extras = extras_policy(deep, all_nodes)
    timeout_s = request_timeout(timeout)
    run_s = run_timeout(deadline, offline=source is not None)
    shown = parse_shown(component, layer)
    if run_s is not None and watch:
        raise UsageError("--timeout bounds one run; with --watch give each request --request-timeout")
    since_s = None
    if since is not None:
        if watch:
            raise UsageError("--since compares with the past once; --watch shows what changes from now on")
        import time

        from gpunode.commands.history import since_time

        since_s = since_time(since, time.time())

    def evaluate() -> Report:
        return report_from(source, kubeconfig, context, nodes, quiet or watch, selector=selector,
                           extras=extras, request_timeout_s=timeout_s, since=since_s)

    from gpunode.commands.filters import marked, narrow, warn_hidden

    if watch:  # the same filters on each refreshed report; the exit code stays the whole one's
        from gpunode.watch import watch_reports

        raise typer.Exit(watch_reports(evaluate, output, marked(options, shown), interval=interval,
                                       count=count, view=lambda r: narrow(r, shown)))
    from gpunode.report import DIAGNOSE_REPORTERS

    with whole_run(run_s):
        report = evaluate()
        shown_report, hidden = narrow(report, shown)
        warn_hidden(hidden)
        code = emit(shown_report, DIAGNOSE_REPORTERS, output, marked(options, shown),
                    failed=report.has_failures)
        if since_s is not None:
            from gpunode.commands.history import show_changes

            show_changes(shown_report, output.value)
    raise typer.Exit(code)


@app.command()
def stack(
    nodes: NodesArg = None,
    *,
    source: FromOpt = None,
    selector: SelectorOpt = None,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    output: ReportFormatOpt = ReportFormat.table,
    quiet: QuietOpt = False,
    deep: DeepOpt = False,
    all_nodes: AllNodesOpt = False,
    timeout: RequestTimeoutOpt = None,
    deadline: RunTimeoutOpt = None,
) -> None:
    """Every GPU node's stack, layer by layer: full pictures for a few nodes, a grid for a fleet."""
    from gpunode.report import STACK_REPORTERS

    timeout_s, run_s = request_timeout(timeout), run_timeout(deadline, offline=source is not None)
    with whole_run(run_s):
        report = report_from(source, kubeconfig, context, nodes, quiet, selector=selector,
                             extras=extras_policy(deep, all_nodes), request_timeout_s=timeout_s)
        code = emit(report, STACK_REPORTERS, output, render_options(output))
    raise typer.Exit(code)


@app.command()
def demo(
    *,
    scenario: Annotated[str, typer.Option(help="Bundled scenario to run.")] = "falcon-ai-broken",
    list_: Annotated[bool, typer.Option("--list", help="List bundled scenarios.")] = False,
    show_stack: StackOpt = False,
    live: Annotated[
        bool,
        typer.Option("--live", help="Serve the scenario on a loopback test API server and read it live."),
    ] = False,
    output: ReportFormatOpt = ReportFormat.table,
    show_all: AllOpt = False,
) -> None:
    """Diagnose a simulated cluster shipped with gpunode (Falcon AI by default)."""
    from gpunode import sim
    from gpunode.report import DIAGNOSE_REPORTERS

    if list_:
        for name, description in sim.demo_scenarios():
            typer.echo(f"{name:40} {description}")
        raise typer.Exit(0)
    chosen = sim.load_scenario(scenario)
    refused = sim.not_for_demo(chosen)
    if refused:
        raise UsageError(refused)
    with tempfile.TemporaryDirectory(prefix="gpunode-demo-") as tmp:
        bundle = sim.build_bundle(chosen, Path(tmp) / "bundle")
        report = _demo_live(bundle, Path(tmp)) if live else build_report(bundle, None)
    report = relabel(report, f"{'test API server, ' if live else ''}scenario {scenario}")
    raise typer.Exit(emit(report, DIAGNOSE_REPORTERS, output, render_options(output, show_all, show_stack)))


def _demo_live(bundle: Path, workdir: Path) -> Report:
    """The live path end to end: test API server on loopback, real client, collect, diagnose."""
    from gpunode.apiserver import serve_bundle
    from gpunode.collect.live import collect_bundle

    with serve_bundle(bundle) as server:
        result = collect_bundle(workdir / "live", kubeconfig=server.kubeconfig_path, quiet=True)
    return build_report(result.path, None, live=True)


@app.command("sim")
def sim_cmd(
    scenario: Annotated[str, typer.Argument(help="Bundled scenario name or a scenario YAML file.")],
    out: Annotated[Path, typer.Option("-o", "--out", help="Directory to write the bundle into.")],
) -> None:
    """Write a scenario's bundle to disk (format v1)."""
    from gpunode import sim

    path = sim.build_bundle(sim.load_scenario(scenario), out)
    typer.echo(f"wrote {path}")


# Command modules under gpunode/commands/, each with register(app); order = help order.
# They import their heavy modules inside the command functions, so registering is cheap.
COMMAND_MODULES: tuple[str, ...] = (
    "live", "probe", "validate", "diff", "explain", "causes", "agent", "version", "completion",
)


def _register_commands() -> None:
    for name in COMMAND_MODULES:
        importlib.import_module(f"gpunode.commands.{name}").register(app)


_register_commands()


def _version(value: bool) -> None:
    if value:
        typer.echo(f"gpunode {__version__}")
        raise typer.Exit(0)


@app.callback()
def _main(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True)] = False,
    debug: Annotated[
        bool, typer.Option("--debug", help="Show the traceback of an internal error (anywhere on the line).")
    ] = False,
    verbosity: Annotated[
        int, typer.Option("-v", "--v", help="Log level, as kubectl's: 6 logs every API request on stderr "
                          "(anywhere on the line: -v 6, -v=6, --v=6).")
    ] = 0,
) -> None:
    """gpunode: bottom-up diagnosis of the GPU node stack."""


#: Options taken anywhere on the command line, as kubectl takes its global flags.
_GLOBAL_LEVEL = lazy_compile(r"(?:-v|--v)(?:=(?P<value>.*))?")
_GLUED_LEVEL = lazy_compile(r"-v(?P<value>\d+)")


def global_options(args: list[str]) -> tuple[list[str], bool, int]:
    """``args`` without ``--debug`` and ``-v N`` wherever they stand (before ``--``), the
    debug flag and the level; bare ``gpunode`` and ``gpunode help [COMMAND]`` ask for help.
    UsageError for a level that is not a number."""
    rest: list[str] = []
    debug, level, i = False, 0, 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            rest += args[i:]
            break
        glued = _GLUED_LEVEL.fullmatch(arg)
        flag = _GLOBAL_LEVEL.fullmatch(arg)
        if arg == "--debug":
            debug = True
        elif glued or flag:
            value = glued["value"] if glued else flag["value"] if flag else None
            if value is None:
                i += 1
                value = args[i] if i < len(args) else ""
            if not value.isdigit():
                raise UsageError(f"-v {value!r}: expected a log level (a number, e.g. -v 6)")
            level = int(value)
        else:
            rest.append(arg)
        i += 1
    if not rest:
        rest = ["--help"]
    elif rest[0] == "help":
        rest = [*rest[1:2], "--help"]
    return rest, debug, level


def _logging(level: int) -> None:
    """``-v 6`` and above: the API requests on stderr, stamped as kubectl stamps its lines."""
    if level < 6:
        return
    import logging

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("I%(asctime)s.%(msecs)03d000 gpunode] %(message)s",
                                          datefmt="%m%d %H:%M:%S"))
    logger = logging.getLogger("gpunode")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)


def main() -> None:
    """Console entry point: run the app, turning GpunodeErrors into one-line messages."""
    if "_GPUNODE_COMPLETE" in os.environ:
        # the shell asks for completions (scripts from `gpunode completion SHELL`)
        from typer._completion_classes import completion_init

        completion_init()
    previous = _terminate_as_interrupt()
    debug = "--debug" in sys.argv[1:]
    try:
        args, debug, level = global_options(sys.argv[1:])
        _logging(level)
        code = _run_app(args)
    except GpunodeError as exc:
        _fail(str(exc), exc.exit_code)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except (KeyboardInterrupt, typer.Abort):
        _interrupted()
    except typer.TyperException as exc:
        # usage errors from the command-line parser: one line naming the option, exit 2
        _fail(_one_line_message(exc), 2)
    except Exception as exc:  # the last guard: exit 1 means findings, never a crash
        if debug:
            traceback.print_exc()
        _fail(f"internal error: {type(exc).__name__}: {_one_line(exc)} (run with --debug for the "
              "traceback)", INTERNAL_ERROR)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    if code == INTERRUPTED:  # typer turns Ctrl-C into a silent return of 130
        _interrupted()
    sys.exit(code if isinstance(code, int) else 0)


def _run_app(args: list[str]) -> Any:
    """``app(args=...)`` as typer runs it (its exception hook installed, which with pretty
    exceptions off prints as Python's does), from a click command built once per process."""
    if sys.excepthook != typer.main.except_hook:
        sys.excepthook = typer.main.except_hook
    return _command()(args=args, prog_name="gpunode", standalone_mode=False)


@functools.cache
def _command() -> Any:
    """The click command typer builds from ``app``: it reads every command's signature and
    type hints, about 40 ms that each in-process run of ``main`` paid again (the tests run
    the command line in their own process); the commands are all registered on import."""
    return typer.main.get_command(app)


INTERNAL_ERROR = 4
#: Ctrl-C (SIGINT) and SIGTERM, as shells report a process they ended.
INTERRUPTED = 130
TERMINATED = 143
_sigterm = threading.Event()


def _terminate_as_interrupt() -> Any:
    """SIGTERM (a CI job cancelled, ``timeout``, a pod stopped) takes Ctrl-C's path, so a
    partial bundle or a temporary one is removed before the process ends; the previous
    handler (None off the main thread, where none can be set)."""
    _sigterm.clear()
    if threading.current_thread() is not threading.main_thread():
        return None

    def on_sigterm(_signum: int, _frame: object) -> None:
        _sigterm.set()
        raise KeyboardInterrupt

    return signal.signal(signal.SIGTERM, on_sigterm)


def _interrupted() -> None:
    if _sigterm.is_set():
        _fail("terminated", TERMINATED)
    _fail("interrupted", INTERRUPTED)


def _one_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return lines[0] if lines else type(exc).__name__


def _one_line_message(exc: typer.TyperException) -> str:
    """The parser's message with the option it is about ("Invalid value for '-o' …")."""
    lines = [ln.strip() for ln in exc.format_message().splitlines() if ln.strip()]
    return lines[0] if lines else _one_line(exc)


def _fail(message: str, code: int) -> None:
    from gpunode.safety import strip_controls

    print(f"gpunode: {strip_controls(message)}", file=sys.stderr)
    sys.exit(code)


def run() -> None:
    """Console-script entry: main(), then exit without tearing down the object graph
    (on a 100,000-pod bundle freeing millions of objects one by one takes seconds)."""
    try:
        main()
        code = 0
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:  # sys.exit("message") somewhere: one line, never the findings code
            print(f"gpunode: {exc.code}", file=sys.stderr)
            code = INTERNAL_ERROR
    if "logging" in sys.modules:  # flush log handlers; most commands never load logging
        sys.modules["logging"].shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
