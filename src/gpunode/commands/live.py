"""Live-cluster commands: `gpunode collect` and the `serve-bundle` test aid."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import threading
from pathlib import Path
from typing import Annotated

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


def register(app: typer.Typer) -> None:
    app.command("collect")(collect)
    app.command("serve-bundle")(serve_bundle)


# Words that read as an output format after -o (kubectl's habit), not as a bundle path.
_FORMAT_WORDS = frozenset({"json", "yaml", "table", "wide", "markdown", "html", "name"})


def collect(
    nodes: Annotated[list[str] | None, typer.Argument(help="Fetch node extras only for these nodes.")] = None,
    *,
    selector: Annotated[
        str | None,
        typer.Option(
            "-l", "--selector", help="Fetch node extras only for nodes whose labels match (kubectl syntax)."
        ),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("-o", "--out", help="Bundle to write: a new directory or a .tar.gz.")
    ] = None,
    output_dir: Annotated[
        Path | None, typer.Option("-d", "--output-dir", help="Bundle directory to write (same as -o DIR).")
    ] = None,
    kubeconfig: Annotated[
        Path | None, typer.Option(help="kubeconfig (default: $KUBECONFIG, ~/.kube/config).")
    ] = None,
    context: Annotated[str | None, typer.Option(help="kubeconfig context.")] = None,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="No progress bar on stderr.")] = False,
    concurrency: Annotated[
        int, typer.Option(min=1, help="API calls in flight at once (lists, execs, scrapes, logs).")
    ] = 32,
    deep: DeepOpt = False,
    all_nodes: AllNodesOpt = False,
    timeout: RequestTimeoutOpt = None,
    deadline: RunTimeoutOpt = None,
) -> None:
    """Read the live cluster (read-only) and write a bundle (format v1) for offline analysis.

    Lists first; node extras only for GPU nodes the lists and GPUNodeReports leave in doubt
    (and for nodes named here), unless --deep or --all-nodes."""
    from gpunode.collect import collect_bundle
    policy = extras_policy(deep, all_nodes)
    timeout_s, run_s = request_timeout(timeout), run_timeout(deadline)
    target = _bundle_target(out, output_dir)
    with whole_run(run_s):
        result = collect_bundle(
            target,
            kubeconfig=kubeconfig,
            context=context,
            nodes=nodes or (),
            quiet=quiet,
            concurrency=concurrency,
            selector=selector,
            extras=policy,
            request_timeout_s=timeout_s,
        )
    from gpunode.safety import strip_controls

    for warning in result.warnings:  # names from the API: no terminal escapes
        print(f"warning: {strip_controls(warning)}", file=sys.stderr)
    if result.left_out:
        from gpunode.leftout import print_warnings
        from gpunode.model import Selection

        print_warnings(Selection(selector=selector, left_out=result.left_out))
    state = "partial bundle" if result.partial else "bundle"
    extras = f", extras for {len(result.extras_reasons)} node(s)" if result.extras_reasons else ""
    path = strip_controls(str(result.path))
    typer.echo(f"wrote {state} {path} ({result.api_calls} API calls{extras}, {result.seconds:.1f} s)")


def _bundle_target(out: Path | None, output_dir: Path | None) -> Path:
    """-o DIR|FILE.tar.gz or -d DIR; ``-o json`` (a format word, no such path) is refused, not
    silently turned into a directory named json."""
    from gpunode.errors import UsageError

    if (out is None) == (output_dir is None):
        raise UsageError("collect: give the bundle to write with -o DIR|FILE.tar.gz or -d/--output-dir DIR")
    if output_dir is not None:
        return output_dir
    assert out is not None
    if str(out) in _FORMAT_WORDS and not out.exists():
        raise UsageError(
            f"collect -o {out}: collect writes a bundle, not a report format; "
            f"use -d {out} (or -o ./{out}) for a directory of that name"
        )
    return out


def serve_bundle(
    bundle: Annotated[Path, typer.Argument(help="Bundle directory or .tar.gz to serve.")],
    *,
    kubeconfig: Annotated[Path, typer.Option(help="Write a kubeconfig for the server here.")],
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1 (0 picks a free one).")] = 0,
    latency: Annotated[float, typer.Option(help="Seconds added to every request.")] = 0.0,
    too_many_every: Annotated[int, typer.Option(help="Answer 429 to every Nth request.")] = 0,
    error_500_every: Annotated[int, typer.Option(help="Answer 500 to every Nth request.")] = 0,
    drop_every: Annotated[int, typer.Option(help="Drop every Nth connection.")] = 0,
    forbid: Annotated[
        list[str] | None, typer.Option(help='Answer 403 to a verb on a resource, e.g. "create pods/exec".')
    ] = None,
) -> None:
    """Test aid: serve a bundle as a read-only Kubernetes API on loopback until Ctrl-C."""
    from gpunode.apiserver import Faults
    from gpunode.apiserver import serve_bundle as start

    faults = Faults(
        latency_s=latency,
        too_many_every=too_many_every,
        error_500_every=error_500_every,
        drop_every=drop_every,
        forbid=tuple(forbid or ()),
    )
    stop = threading.Event()  # handlers first: a signal while starting still cleans up
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    server = start(bundle, port=port, faults=faults, kubeconfig_path=kubeconfig)
    typer.echo(f"serving {bundle} at {server.url}; kubeconfig: {server.kubeconfig_path}")
    stop.wait()
    # Closing TLS sockets under handler threads that are still inside OpenSSL can
    # crash the interpreter; remove the server's files (its TLS key among them), leave.
    if server.workdir is not None:
        shutil.rmtree(server.workdir, ignore_errors=True)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
