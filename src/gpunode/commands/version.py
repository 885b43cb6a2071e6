"""``gpunode version``: the client version and, live, the server and GPU Operator versions."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import msgspec
import typer

from gpunode import __version__
from gpunode.commands.extras import RequestTimeoutOpt, RunTimeoutOpt, request_timeout, run_timeout, whole_run
from gpunode.errors import GpunodeError
from gpunode.safety import strip_controls


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


class VersionFormat(StrEnum):
    """``version -o``: kubectl's words for it."""

    table = "table"
    json = "json"
    yaml = "yaml"


def version(
    *,
    client: Annotated[
        bool, typer.Option("--client", help="Only the client version (no cluster needed).")
    ] = False,
    kubeconfig: Annotated[Path | None, typer.Option(help="kubeconfig (default: kubectl's).")] = None,
    context: Annotated[str | None, typer.Option(help="kubeconfig context.")] = None,
    output: Annotated[
        VersionFormat, typer.Option("-o", "--output", help="Output format.")
    ] = VersionFormat.table,
    timeout: RequestTimeoutOpt = None,
    deadline: RunTimeoutOpt = None,
) -> None:
    """Client version; with a reachable cluster also the Kubernetes server and GPU Operator versions.

    As kubectl, the client's version is printed before any error reaching the server."""
    info: dict[str, Any] = {"client": {"gpunode": __version__}}
    timeout_s, run_s = request_timeout(timeout), run_timeout(deadline)
    unread = ""
    if not client:
        try:
            with whole_run(run_s):
                live, unread = _live(kubeconfig, context, timeout_s)
        except GpunodeError:
            _show(info, output, "")
            sys.stdout.flush()
            raise
        info.update(live)
    if unread:  # the server answered; only the operator's version is unknown
        print(f"warning: GPU Operator version unknown: {strip_controls(unread)}", file=sys.stderr)
    _show(info, output, unread)


def _show(info: dict[str, Any], output: VersionFormat, unread: str) -> None:
    if output != VersionFormat.table:
        text = msgspec.json.format(msgspec.json.encode(info), indent=2).decode()
        if output == VersionFormat.yaml:
            import yaml

            text = yaml.safe_dump(info, sort_keys=False).rstrip()
        typer.echo(strip_controls(text))
        return
    typer.echo(f"Client Version: gpunode {__version__}")
    if "server" in info:
        typer.echo(f"Context: {info['context']}")
        typer.echo(strip_controls(f"Server Version: {info['server']['kubernetes'] or 'unknown'}"))
        shown = "unknown" if unread else "not found"
        typer.echo(strip_controls(f"GPU Operator Version: {info['server']['gpu_operator'] or shown}"))


def _live(
    kubeconfig: Path | None, context: str | None, timeout_s: float | None
) -> tuple[dict[str, Any], str]:
    """The server's versions, and why the operator's could not be read ("" when it was)."""
    from gpunode.checks.versions import image_tag
    from gpunode.collect.access import ClusterAccess
    from gpunode.collect.kube import ApiFailure
    from gpunode.deadline import cut_short, out_of_time

    access = ClusterAccess(kubeconfig, context, timeout_s)  # read once: client and context
    api = access.api()
    unread, pods = "", _Pods()
    try:
        server = msgspec.json.decode(api.probe(), type=_ServerVersion).gitVersion
        body = api.get("/api/v1/pods", {"labelSelector": "app=gpu-operator", "limit": 50})
        pods = msgspec.json.decode(body, type=_Pods)
    except ApiFailure as exc:  # refused, timed out, retries spent: a warning, not a crash
        unread = f"pods not listed cluster-wide ({exc.code or 'no answer'}: {exc.message[:200]})"
        if cut_short(exc.message):
            out_of_time(api.server, "the GPU Operator's pods (its version)")
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        unread = f"pod list unreadable ({exc})"
    finally:
        api.close()
    images = [c.image for p in pods.items for c in p.spec.containers if c.name == "gpu-operator"]
    operator = image_tag(images[0]) if images else None
    server_info = {"kubernetes": server, "gpu_operator": operator}
    return {"context": access.context_name(), "server": server_info}, unread

