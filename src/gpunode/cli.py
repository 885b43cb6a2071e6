"""Command line: thin wrappers that load facts, diagnose, and render.

Exit codes (a contract): 0 no failure found, 1 failures found, 2 bad usage
or bad input, 3 source unreachable. Errors are one line on stderr.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
import tempfile
from pathlib import Path
from typing import Annotated

import msgspec
import typer
from rich.console import Console

from gpunode import __version__
from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.commands.output import DocFormat, DocFormatOpt
from gpunode.diagnose import diagnose
from gpunode.errors import GpunodeError, UsageError
from gpunode.model import Report
from gpunode.report import DIAGNOSE_REPORTERS, STACK_REPORTERS, Reporter

app = typer.Typer(
    name="gpunode",
    help="What is actually running on each GPU node, and which component to check first.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


FromOpt = Annotated[
    Path | None,
    typer.Option("--from", help="Read a saved bundle (directory or .tar.gz) instead of a live cluster."),
]
NodesArg = Annotated[list[str] | None, typer.Argument(help="Only these nodes (default: every GPU node).")]


def _console() -> Console:
    return Console(soft_wrap=False, highlight=False)


def build_report(bundle: Path, nodes: list[str] | None) -> Report:
    """Load a bundle and diagnose it (the offline path shared by several commands)."""
    facts = load_bundle(bundle)
    unknown = [n for n in nodes or [] if n not in facts.nodes and n not in facts.node_dirs]
    if unknown:
        raise UsageError(f"{bundle}: no node named {', '.join(unknown)} in this bundle")
    return diagnose(facts, read_node_observations, nodes or ())


def _emit(report: Report, reporters: dict[str, Reporter], output: DocFormat) -> None:
    reporters[output.value](report, _console())
    raise typer.Exit(1 if report.has_failures else 0)


KubeconfigOpt = Annotated[
    Path | None,
    typer.Option(
        help="kubeconfig to read the live cluster with (default: $KUBECONFIG, ~/.kube/config, in-cluster)."
    ),
]
ContextOpt = Annotated[str | None, typer.Option(help="kubeconfig context to use.")]
QuietOpt = Annotated[bool, typer.Option("-q", "--quiet", help="No progress bar on stderr.")]


def resolve_bundle(
    source: Path | None,
    *,
    kubeconfig: Path | None,
    context: str | None,
    nodes: list[str] | None,
    quiet: bool,
    workdir: Path,
) -> Path:
    """The bundle to judge: a saved one (a GPU Operator must-gather is converted), or a
    fresh collection from the live cluster into ``workdir``."""
    if source is not None:
        if kubeconfig is not None or context is not None:
            raise UsageError("--from reads a saved bundle; drop --kubeconfig/--context, or drop --from")
        from gpunode.collect.mustgather import convert_must_gather, is_must_gather

        if source.is_dir() and is_must_gather(source):
            return convert_must_gather(source, workdir / "must-gather")
        return source
    from gpunode.collect import collect_bundle

    result = collect_bundle(
        workdir / "live", kubeconfig=kubeconfig, context=context, nodes=nodes or (), quiet=quiet
    )
    return result.path


def report_from(
    source: Path | None,
    kubeconfig: Path | None,
    context: str | None,
    nodes: list[str] | None,
    quiet: bool,
) -> Report:
    """Diagnose a saved bundle, or the live cluster (collected into a temporary bundle)."""
    with tempfile.TemporaryDirectory(prefix="gpunode-") as tmp:
        bundle = resolve_bundle(
            source, kubeconfig=kubeconfig, context=context, nodes=nodes, quiet=quiet, workdir=Path(tmp)
        )
        report = build_report(bundle, nodes)
    if source is None:
        report = relabel(report, f"cluster (context {context or 'current'})")
    return report


def relabel(report: Report, location: str) -> Report:
    """Name the source of a report whose temporary bundle no longer exists."""
    return msgspec.structs.replace(report, source=msgspec.structs.replace(report.source, location=location))


@app.command("diagnose")
def diagnose_cmd(
    nodes: NodesArg = None,
    *,
    source: FromOpt = None,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    output: DocFormatOpt = DocFormat.table,
    quiet: QuietOpt = False,
) -> None:
    """Root causes first, then blocked components, then a fleet summary."""
    _emit(report_from(source, kubeconfig, context, nodes, quiet), DIAGNOSE_REPORTERS, output)


@app.command()
def stack(
    nodes: NodesArg = None,
    *,
    source: FromOpt = None,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    output: DocFormatOpt = DocFormat.table,
    quiet: QuietOpt = False,
) -> None:
    """The inventory: every GPU node's stack, layer by layer, with status and pods."""
    _emit(report_from(source, kubeconfig, context, nodes, quiet), STACK_REPORTERS, output)


@app.command()
def demo(
    scenario: Annotated[str, typer.Option(help="Bundled scenario to run.")] = "falcon-ai-broken",
    list_: Annotated[bool, typer.Option("--list", help="List bundled scenarios.")] = False,
    show_stack: Annotated[bool, typer.Option("--stack", help="Also draw each node's stack.")] = False,
    live: Annotated[
        bool,
        typer.Option("--live", help="Serve the scenario on a loopback test API server and read it live."),
    ] = False,
    output: DocFormatOpt = DocFormat.table,
) -> None:
    """Diagnose a simulated cluster shipped with gpunode (Falcon AI by default)."""
    from gpunode import sim

    if list_:
        for name, description in sim.list_scenarios():
            typer.echo(f"{name:40} {description}")
        raise typer.Exit(0)
    with tempfile.TemporaryDirectory(prefix="gpunode-demo-") as tmp:
        bundle = sim.build_bundle(sim.load_scenario(scenario), Path(tmp) / "bundle")
        report = _demo_live(bundle, Path(tmp)) if live else build_report(bundle, None)
    report = relabel(report, f"{'test API server, ' if live else ''}scenario {scenario}")
    if show_stack and output == DocFormat.table:
        STACK_REPORTERS["table"](report, _console())
    _emit(report, DIAGNOSE_REPORTERS, output)


def _demo_live(bundle: Path, workdir: Path) -> Report:
    """The live path end to end: test API server on loopback, real client, collect, diagnose."""
    from gpunode.apiserver import serve_bundle
    from gpunode.collect import collect_bundle

    with serve_bundle(bundle) as server:
        result = collect_bundle(workdir / "live", kubeconfig=server.kubeconfig_path, quiet=True)
    return build_report(result.path, None)


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
COMMAND_MODULES: tuple[str, ...] = ("live", "probe", "validate", "explain", "causes", "agent")


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
) -> None:
    """gpunode: bottom-up diagnosis of the GPU node stack."""


def main() -> None:
    """Console entry point: run the app, turning GpunodeErrors into one-line messages."""
    try:
        code = app(prog_name="gpunode", standalone_mode=False)
    except GpunodeError as exc:
        print(f"gpunode: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        print("gpunode: interrupted", file=sys.stderr)
        sys.exit(130)
    except typer.TyperException as exc:
        # usage errors from the command-line parser: one line, exit 2
        print(f"gpunode: {exc}", file=sys.stderr)
        sys.exit(2)
    sys.exit(code if isinstance(code, int) else 0)


def run() -> None:
    """Console-script entry: main(), then exit without tearing down the object graph
    (on a 100,000-pod bundle freeing millions of objects one by one takes seconds)."""
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
