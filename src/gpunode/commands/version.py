"""``gpunode version``: the client version and, live, the server and GPU Operator versions."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import msgspec
import typer

from gpunode import __version__
from gpunode.commands.extras import RequestTimeoutOpt, request_timeout


class _Container(msgspec.Struct, frozen=True):
    name: str = ""
    image: str = ""


class _Spec(msgspec.Struct, frozen=True):
    containers: tuple[_Container, ...] = ()


class _Pod(msgspec.Struct, frozen=True):
    spec: _Spec = _Spec()


class _Pods(msgspec.Struct, frozen=True):
    items: tuple[_Pod, ...] = ()


class _ServerVersion(msgspec.Struct, frozen=True):
    gitVersion: str = ""


def register(app: typer.Typer) -> None:
    app.command("version")(version)


def version(
    client: Annotated[
        bool, typer.Option("--client", help="Only the client version (no cluster needed).")
    ] = False,
    kubeconfig: Annotated[Path | None, typer.Option(help="kubeconfig (default: kubectl's).")] = None,
    context: Annotated[str | None, typer.Option(help="kubeconfig context.")] = None,
    output: Annotated[str, typer.Option("-o", "--output", help="table or json.")] = "table",
    timeout: RequestTimeoutOpt = None,
) -> None:
    """Client version; with a reachable cluster also the Kubernetes server and GPU Operator versions."""
    info: dict[str, Any] = {"client": {"gpunode": __version__}}
    timeout_s = request_timeout(timeout)
    if not client:
        info.update(_live(kubeconfig, context, timeout_s))
    if output == "json":
        typer.echo(msgspec.json.format(msgspec.json.encode(info), indent=2).decode())
        return
    if output != "table":
        raise typer.BadParameter("expected table or json", param_hint="'-o'")
    typer.echo(f"Client Version: gpunode {__version__}")
    if "server" in info:
        typer.echo(f"Context: {info['context']}")
        typer.echo(f"Server Version: {info['server']['kubernetes'] or 'unknown'}")
        typer.echo(f"GPU Operator Version: {info['server']['gpu_operator'] or 'not found'}")


def _live(kubeconfig: Path | None, context: str | None, timeout_s: float | None) -> dict[str, Any]:
    from gpunode.checks.versions import image_tag
    from gpunode.collect.kube import KubeApi, Timeouts, load_config
    from gpunode.kubeconfig import context_name

    api = KubeApi(load_config(kubeconfig, context), timeouts=Timeouts.of(timeout_s))
    try:
        server = msgspec.json.decode(api.probe(), type=_ServerVersion).gitVersion
        pods = msgspec.json.decode(
            api.get("/api/v1/pods", {"labelSelector": "app=gpu-operator", "limit": 50}), type=_Pods
        )
    finally:
        api.close()
    images = [c.image for p in pods.items for c in p.spec.containers if c.name == "gpu-operator"]
    operator = image_tag(images[0]) if images else None
    return {
        "context": context_name(kubeconfig, context),
        "server": {"kubernetes": server, "gpu_operator": operator},
    }
