"""The flags that choose whose node extras a live collection fetches (collect, diagnose, stack, validate)."""

from __future__ import annotations

from typing import Annotated

import typer

from gpunode.errors import UsageError

DeepOpt = Annotated[
    bool,
    typer.Option(
        "--deep",
        help="Live: fetch every chosen GPU node's extras (execs, scrapes, agent facts), "
        "not only those the cluster lists and GPUNodeReports leave in doubt.",
    ),
]
AllNodesOpt = Annotated[
    bool,
    typer.Option("--all-nodes", help="Live: fetch every GPU node's extras (the full sweep)."),
]


def extras_policy(deep: bool, all_nodes: bool) -> str:
    """``suspect`` (default), ``deep`` or ``all-nodes`` (gpunode.collect.reports.ExtrasPolicy)."""
    if deep and all_nodes:
        raise UsageError("--deep and --all-nodes: choose one")
    return "all-nodes" if all_nodes else "deep" if deep else "suspect"
