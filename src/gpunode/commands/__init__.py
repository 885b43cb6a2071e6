"""CLI command modules beyond the core ones in gpunode.cli.

Each module defines ``register(app: typer.Typer) -> None`` and is listed in
``gpunode.cli.COMMAND_MODULES``; heavy imports stay inside the command bodies so
``gpunode --help`` stays fast.
"""
