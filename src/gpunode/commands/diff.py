"""``gpunode diff OLD NEW``: what changed between two bundles of one cluster, ranked by how
well each change explains the failures that are new in NEW (gpunode.fleet.diff).

Exit 1 when NEW has root causes OLD did not have, 0 otherwise; 2 for bad input.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gpunode.commands.output import DocFormat, DocFormatOpt

if TYPE_CHECKING:
    from rich.console import Console

    from gpunode.facts import ClusterFacts
    from gpunode.fleet.model import Change, DiffReport
    from gpunode.fleet.profile import Observed
    from gpunode.model import Report

#: Changes the table and markdown list before "… and N more" (JSON holds every one).
SHOWN = 15
NODES_SHOWN = 6


def register(app: typer.Typer) -> None:
    app.command("diff")(diff_cmd)


def diff_cmd(
    old: Annotated[Path, typer.Argument(help="The bundle from when it worked (directory or .tar.gz).")],
    new: Annotated[Path, typer.Argument(help="The bundle from now.")],
    output: DocFormatOpt = DocFormat.table,
    show_all: Annotated[bool, typer.Option("--all", help="Every change, not the first 15.")] = False,
) -> None:
    """What changed between two bundles: versions, images, GPU counts, nvidia.com labels, taints,
    conditions, runtime configs, ClusterPolicy; new and resolved root causes. Exit 1 when new
    root causes appeared."""
    from gpunode.commands.common import console, stdout
    from gpunode.fleet.diff import diff
    from gpunode.fleet.model import DiffReport
    from gpunode.safety import safe_struct

    result = safe_struct(diff(side(old), side(new)), DiffReport)
    if output == DocFormat.json:
        import msgspec

        from gpunode.report.jsonout import formatted, write_json

        write_json(stdout(), formatted(msgspec.json.encode(result)))
    elif output == DocFormat.markdown:
        stdout().write("\n".join(markdown(result, show_all)) + "\n")
    else:
        render(result, console(), show_all)
    raise typer.Exit(1 if result.has_new_failures else 0)


def side(path: Path) -> tuple[ClusterFacts, Report, dict[str, Observed]]:
    """One bundle's facts, its diagnosis, and what its node files said (the node pass)."""
    from gpunode.bundle.load import gc_paused, keep_facts, loaded_reading_ahead, read_node_observations
    from gpunode.diagnose import diagnose

    observed: dict[str, Observed] = {}
    with gc_paused(keep=True), loaded_reading_ahead(path) as loaded:
        facts = keep_facts(loaded)
        report = diagnose(facts, read_node_observations, observed=observed)
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
