"""Command line: thin wrappers that load facts, diagnose, and render.

Exit codes (a contract): 0 no failure found, 1 failures found, 2 bad usage
or bad input, 3 source unreachable. Errors are one line on stderr.
"""

from __future__ import annotations

import importlib
import sys
import tempfile
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import msgspec
import typer
from rich.console import Console

from gpunode import __version__
from gpunode.bundle.load import load_bundle, read_node_observations
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


class OutputFormat(StrEnum):
    table = "table"
    json = "json"
    markdown = "markdown"


FromOpt = Annotated[
    Path | None,
    typer.Option("--from", help="Read a saved bundle (directory or .tar.gz) instead of a live cluster."),
]
NodesArg = Annotated[list[str] | None, typer.Argument(help="Only these nodes (default: every GPU node).")]
OutputOpt = Annotated[OutputFormat, typer.Option("-o", "--output", help="Output format.")]


def _console() -> Console:
    return Console(soft_wrap=False, highlight=False)


def build_report(bundle: Path, nodes: list[str] | None) -> Report:
    """Load a bundle and diagnose it (the offline path shared by several commands)."""
    facts = load_bundle(bundle)
    unknown = [n for n in nodes or [] if n not in facts.nodes and n not in facts.node_dirs]
    if unknown:
        raise UsageError(f"{bundle}: no node named {', '.join(unknown)} in this bundle")
    return diagnose(facts, read_node_observations, nodes or ())


def _emit(report: Report, reporters: dict[str, Reporter], output: OutputFormat) -> None:
    reporters[output.value](report, _console())
    raise typer.Exit(1 if report.has_failures else 0)


def _require_source(source: Path | None) -> Path:
    if source is None:
        raise UsageError("no --from bundle given, and live cluster access is not available in this build")
    return source


@app.command("diagnose")
def diagnose_cmd(
    nodes: NodesArg = None,
    source: FromOpt = None,
    output: OutputOpt = OutputFormat.table,
) -> None:
    """Root causes first, then blocked components, then a fleet summary."""
    _emit(build_report(_require_source(source), nodes), DIAGNOSE_REPORTERS, output)


@app.command()
def stack(
    nodes: NodesArg = None,
    source: FromOpt = None,
    output: OutputOpt = OutputFormat.table,
) -> None:
    """The inventory: every GPU node's stack, layer by layer, with status and pods."""
    _emit(build_report(_require_source(source), nodes), STACK_REPORTERS, output)


@app.command()
def demo(
    scenario: Annotated[str, typer.Option(help="Bundled scenario to run.")] = "falcon-ai-broken",
    list_: Annotated[bool, typer.Option("--list", help="List bundled scenarios.")] = False,
    show_stack: Annotated[bool, typer.Option("--stack", help="Also draw each node's stack.")] = False,
    output: OutputOpt = OutputFormat.table,
) -> None:
    """Diagnose a simulated cluster shipped with gpunode (Falcon AI by default)."""
    from gpunode import sim

    if list_:
        for name, description in sim.list_scenarios():
            typer.echo(f"{name:40} {description}")
        raise typer.Exit(0)
    with tempfile.TemporaryDirectory(prefix="gpunode-demo-") as tmp:
        bundle = sim.build_bundle(sim.load_scenario(scenario), Path(tmp) / "bundle")
        report = build_report(bundle, None)
    # the temporary bundle is gone after this command; name the scenario instead
    report = msgspec.structs.replace(
        report, source=msgspec.structs.replace(report.source, location=f"scenario {scenario}")
    )
    if show_stack and output == OutputFormat.table:
        STACK_REPORTERS["table"](report, _console())
    _emit(report, DIAGNOSE_REPORTERS, output)


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
COMMAND_MODULES: tuple[str, ...] = ("agent", "validate", "explain", "causes", "probe")


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
