"""``gpunode completion bash|zsh|fish``: the shell completion script (node names included)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

COMPLETE_VAR = "_GPUNODE_COMPLETE"


class Shell(StrEnum):
    bash = "bash"
    zsh = "zsh"
    fish = "fish"


def register(app: typer.Typer) -> None:
    app.command("completion")(completion)


def completion(shell: Annotated[Shell, typer.Argument(help="Shell to complete in.")]) -> None:
    """Print the completion script; e.g. `source <(gpunode completion bash)` in ~/.bashrc,
    `gpunode completion fish > ~/.config/fish/completions/gpunode.fish`."""
    from typer._completion_shared import get_completion_script

    typer.echo(get_completion_script(prog_name="gpunode", complete_var=COMPLETE_VAR, shell=shell.value))
