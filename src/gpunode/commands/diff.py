"""``gpunode diff OLD [NEW]``: what changed between two bundles of one cluster, or between a
bundle and the live cluster (NEW left out), ranked by how well each change explains the
failures that are new in NEW (gpunode.fleet.diff).

Exit 1 when NEW has root causes OLD did not have, 0 otherwise; 2 for bad input; 3 when the
live cluster (or a bundle) could not be read well enough to find a GPU node.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

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
from gpunode.errors import UsageError

if TYPE_CHECKING:
    from rich.console import Console

    from gpunode.facts import ClusterFacts
    from gpunode.fleet.model import Change, DiffReport
    from gpunode.fleet.profile import Observed
    from gpunode.model import Report

class DiffFormat(StrEnum):
    """The formats of a diff: the document formats, and a page like diagnose's ``-o html``."""

    table = "table"
    json = "json"
    yaml = "yaml"
    markdown = "markdown"
    html = "html"


#: Changes the table and markdown list before "… and N more" (JSON holds every one).
SHOWN = 15
NODES_SHOWN = 6


def register(app: typer.Typer) -> None:
    app.command("diff")(diff_cmd)


def diff_cmd(
    old: Annotated[Path, typer.Argument(help="The bundle from when it worked (directory or .tar.gz).")],
    new: Annotated[
        Path | None, typer.Argument(help="The bundle from now (default: read the live cluster now).")
    ] = None,
    *,
    output: Annotated[DiffFormat, typer.Option("-o", "--output", help="Output format.")] = DiffFormat.table,
    show_all: Annotated[bool, typer.Option("--all", help="Every change, not the first 15.")] = False,
    kubeconfig: Annotated[
        Path | None,
        typer.Option(help="Live NEW: kubeconfig (default: $KUBECONFIG, ~/.kube/config, in-cluster)."),
    ] = None,
    context: Annotated[str | None, typer.Option(help="Live NEW: kubeconfig context.")] = None,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="No progress bar on stderr.")] = False,
    deep: DeepOpt = False,
    all_nodes: AllNodesOpt = False,
    timeout: RequestTimeoutOpt = None,
    deadline: RunTimeoutOpt = None,
) -> None:
    """What changed between two bundles, or a bundle and the live cluster (NEW left out):
    versions, images, GPU counts, nvidia.com labels, taints, conditions, runtime configs,
    ClusterPolicy; new and resolved root causes. Exit 1 when new root causes appeared."""
    from gpunode.commands.common import console, stdout
    from gpunode.fleet.diff import diff
    from gpunode.fleet.model import DiffReport
    from gpunode.safety import safe_struct

    live_flags = kubeconfig is not None or context is not None or timeout is not None or deep or all_nodes \
        or deadline is not None
    if new is not None and live_flags:
        raise UsageError("NEW is a saved bundle; drop --kubeconfig/--context/--request-timeout/--timeout/"
                         "--deep/--all-nodes, or drop NEW to compare with the live cluster")
    with whole_run(run_timeout(deadline)):  # live NEW only: a saved one refuses --timeout above
        before = side(old)
        if new is None:
            after = live_side(kubeconfig, context, quiet=quiet, extras=extras_policy(deep, all_nodes),
                              request_timeout_s=request_timeout(timeout))
        else:
            after = side(new)
    result = safe_struct(diff(before, after), DiffReport)
    if output == DiffFormat.json:
        import msgspec

        from gpunode.report.jsonout import formatted, write_json

        write_json(stdout(), formatted(msgspec.json.encode(result)))
    elif output == DiffFormat.yaml:
        from gpunode.commands.output import write_yaml

        write_yaml(console(), result)
    elif output == DiffFormat.html:
        from gpunode.report.changes import diff_html
        from gpunode.report.html import css

        stdout().write(diff_html(result, css()))
    elif output == DiffFormat.markdown:
        stdout().write("\n".join(markdown(result, show_all)) + "\n")
    else:
        render(result, console(), show_all)
    raise typer.Exit(1 if result.has_new_failures else 0)


Side = tuple["ClusterFacts", "Report", dict[str, "Observed"]]


def side(path: Path, name: str | None = None) -> Side:
    """One bundle's facts, its diagnosis, and what its node files said (the node pass). No GPU
    node while a list that would show them was not read: SourceUnreachable (exit 3), never an
    empty side that makes every node look removed."""
    from gpunode.bundle.load import gc_paused, keep_facts, loaded_reading_ahead, read_node_observations
    from gpunode.diagnose import diagnose
    from gpunode.unread import refuse_empty

    observed: dict[str, Observed] = {}
    with gc_paused(keep=True), loaded_reading_ahead(path) as loaded:
        facts = keep_facts(loaded)
        report = diagnose(facts, read_node_observations, observed=observed)
        if not report.nodes:
            refuse_empty(name or str(path), facts.manifest)
    return facts, report, observed


def live_side(kubeconfig: Path | None, context: str | None, *, quiet: bool, extras: str,
              request_timeout_s: float | None) -> Side:
    """The live cluster now, read as ``gpunode collect`` reads it (read-only, into a temporary
    bundle gone after the run), named as the user knows it: the kubeconfig context."""
    import tempfile

    import msgspec

    from gpunode.collect.access import ClusterAccess
    from gpunode.collect.live import collect_bundle

    access = ClusterAccess(kubeconfig, context, request_timeout_s)
    location = f"cluster (context {access.context_name() or 'current'})"
    with tempfile.TemporaryDirectory(prefix="gpunode-diff-") as tmp:
        result = collect_bundle(Path(tmp) / "live", kubeconfig=kubeconfig, context=context, quiet=quiet,
                                extras=extras, request_timeout_s=request_timeout_s, access=access)
        facts, report, observed = side(result.path, location)
    report = msgspec.structs.replace(report, source=msgspec.structs.replace(report.source, location=location))
    return facts, report, observed


def _nodes(nodes: tuple[str, ...], every: int) -> str:
    if len(nodes) == every and every > NODES_SHOWN:
        return f"all {every} nodes"
    shown = ", ".join(nodes[:NODES_SHOWN])
    return shown + (f" … and {len(nodes) - NODES_SHOWN} more" if len(nodes) > NODES_SHOWN else "")


def change_line(c: Change, every: int) -> str:
    return f"{c.what}: {c.before} → {c.after} on {_nodes(c.nodes, every)}"


def _shown(result: DiffReport, show_all: bool) -> tuple[tuple[Change, ...], int]:
    if show_all or len(result.changes) <= SHOWN:
        return result.changes, 0
    return result.changes[:SHOWN], len(result.changes) - SHOWN


def render(result: DiffReport, console: Console, show_all: bool) -> None:
    from rich.text import Text

    from gpunode.report.style import paragraph

    every = max(result.new.gpu_nodes, result.old.gpu_nodes)
    console.print(Text.assemble(("gpunode diff", "bold"), f" — {result.old.location} "
                                f"({result.old.collected_at or '?'}) → {result.new.location} "
                                f"({result.new.collected_at or '?'})"))
    if not result.new_root_causes:
        console.print(Text("No new root cause.", style="green"))
    for rc in result.new_root_causes:
        paragraph(console, f"✗ new: {rc.cause} ({rc.component}) on {_nodes(rc.nodes, every)}", 0)
    for rc in result.resolved_root_causes:
        paragraph(console, f"✓ resolved: {rc.cause} ({rc.component}) on {_nodes(rc.nodes, every)}", 0)
    if not result.changes:
        console.print("No change in what gpunode compares.")
        return
    console.print()
    console.print(Text(f"Changes, best explanation of the new failures first ({len(result.changes)})",
                       style="bold"))
    changes, more = _shown(result, show_all)
    for c in changes:
        explains = f"  [{c.explains} of {len(result.began_failing)} newly failing]" if c.explains else ""
        paragraph(console, f"{change_line(c, every)}{explains}", 2)
    if more:
        console.print(Text(f"  … and {more} more (--all)", style="dim"))


def markdown(result: DiffReport, show_all: bool) -> list[str]:
    every = max(result.new.gpu_nodes, result.old.gpu_nodes)
    lines = [f"# gpunode diff — {result.old.location} → {result.new.location}", ""]
    lines += [f"- **new** `{rc.cause}` ({rc.component}) on {_nodes(rc.nodes, every)}"
              for rc in result.new_root_causes]
    lines += [f"- resolved `{rc.cause}` ({rc.component}) on {_nodes(rc.nodes, every)}"
              for rc in result.resolved_root_causes]
    lines += ["", "| what | before | after | nodes | explains |", "| --- | --- | --- | --- | --- |"]
    changes, more = _shown(result, show_all)
    for c in changes:
        cells = [c.what, c.before, c.after, _nodes(c.nodes, every), f"{c.explains} ({c.score:g})"]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    if more:
        lines.append(f"| … and {more} more | | | | |")
    return lines
