"""``gpunode validate``: the cluster readiness checklist, on a bundle or a live cluster.

Exit codes: 0 nothing at or above ``--fail-on``, 1 otherwise, 2 bad usage or
input, 3 cluster unreachable.
"""

from __future__ import annotations

import dataclasses
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gpunode.commands.extras import (
    AllNodesOpt,
    DeepOpt,
    RequestTimeoutOpt,
    extras_policy,
    request_timeout,
    whole_run,
)
from gpunode.errors import UsageError
from gpunode.validate.defaults import (
    DEFAULT_IMAGE,
    DEFAULT_NCCL_FLOOR_GBPS,
    DEFAULT_NCCL_IMAGE,
    DEFAULT_SCRAPE_INTERVAL_S,
    DEFAULT_TIMEOUT_S,
)

if TYPE_CHECKING:
    from gpunode.validate.service import ValidateRequest
    from gpunode.validate.waivers import Waiver


class FailOn(StrEnum):
    warn = "warn"
    fail = "fail"


class Format(StrEnum):
    table = "table"
    wide = "wide"
    json = "json"
    yaml = "yaml"
    markdown = "markdown"
    junit = "junit"
    html = "html"


def register(app: typer.Typer) -> None:
    """Add the ``validate`` command to the CLI."""
    app.command("validate")(validate_cmd)


def validate_cmd(
    nodes: Annotated[
        list[str] | None, typer.Argument(help="Only these nodes (default: every node).")
    ] = None,
    *,
    selector: Annotated[
        str | None,
        typer.Option("-l", "--selector", help="Only nodes whose labels match (kubectl syntax: k=v,k!=v)."),
    ] = None,
    source: Annotated[
        Path | None,
        typer.Option("--from", help="Judge a saved bundle (directory or .tar.gz) instead of a live cluster."),
    ] = None,
    kubeconfig: Annotated[
        Path | None, typer.Option(help="Kubeconfig of the live cluster (default: kubectl's).")
    ] = None,
    context: Annotated[str | None, typer.Option(help="Kubeconfig context.")] = None,
    category: Annotated[
        list[str] | None,
        typer.Option(
            help="Only this category (repeatable): infrastructure, gpu-health, network, storage, "
            "scheduling, observability."
        ),
    ] = None,
    active: Annotated[bool, typer.Option("--active", help="Also run test workloads on the cluster.")] = False,
    expect_gpus: Annotated[int | None, typer.Option(help="GPUs every GPU node must have.")] = None,
    fail_on: Annotated[
        FailOn, typer.Option(help="Exit 1 on failures only, or on warnings too.")
    ] = FailOn.fail,
    output: Annotated[Format, typer.Option("-o", "--output", help="Output format.")] = Format.table,
    output_dir: Annotated[
        Path | None, typer.Option(help="Write the report in every format plus the bundle it was made from.")
    ] = None,
    image: Annotated[str, typer.Option(help="Image of the nvidia-smi and PVC test pods.")] = DEFAULT_IMAGE,
    timeout: Annotated[
        str | None,
        typer.Option(metavar="DURATION",
                     help=f"Seconds (or 30s, 5m, 1m30s) to wait for test pods (--active; default "
                     f"{DEFAULT_TIMEOUT_S:g}); given, also a deadline for the whole live run (past it: "
                     "exit 3, naming what was not read)."),
    ] = None,
    nccl: Annotated[
        bool, typer.Option("--nccl", help="With --active: NCCL all-reduce between GPU nodes, per pair.")
    ] = False,
    nccl_image: Annotated[
        str, typer.Option(help="nccl-tests image (OpenMPI, sshd, all_reduce_perf) for --nccl.")
    ] = DEFAULT_NCCL_IMAGE,
    nccl_min_busbw: Annotated[
        float,
        typer.Option(help="Bus bandwidth floor for --nccl (GB/s) where the links' rated speed is unknown."),
    ] = DEFAULT_NCCL_FLOOR_GBPS,
    rdma_rate: Annotated[
        float | None, typer.Option(help="Expected RDMA port rate in Gb/s (default: the fastest seen).")
    ] = None,
    scrape_interval: Annotated[
        float, typer.Option(help="Live: seconds between the two DCGM scrapes.")
    ] = DEFAULT_SCRAPE_INTERVAL_S,
    list_checks: Annotated[bool, typer.Option("--list-checks", help="List every check and exit.")] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress output while collecting.")
    ] = False,
    deep: DeepOpt = False,
    all_nodes: AllNodesOpt = False,
    lists_first: Annotated[
        bool,
        typer.Option(
            "--lists-first",
            help="Live: fetch node extras only for the nodes the cluster lists leave in doubt, as "
            "diagnose does (fast on large fleets; other nodes' node-file checks stay unknown).",
        ),
    ] = False,
    request_timeout_text: RequestTimeoutOpt = None,
    waivers: Annotated[
        Path | None,
        typer.Option("--waivers", help="YAML list of accepted findings (check, nodes, reason, expires): "
                     "they stop failing until they expire."),
    ] = None,
) -> None:
    """Cluster readiness in six categories: a verdict, a score per category, and what to fix."""
    from gpunode.validate.active.session import ActiveOptions
    from gpunode.validate.service import ValidateRequest

    if list_checks:
        _list_checks()
        raise typer.Exit(0)
    request_timeout_s = request_timeout(request_timeout_text)
    timeout_s = request_timeout(timeout, "--timeout", "no wait")
    if source is not None and request_timeout_s is not None and not active:
        raise UsageError("--request-timeout is for a live cluster; drop it with --from (without --active)")
    active_options = None
    if active:
        active_options = ActiveOptions(
            kubeconfig=kubeconfig,
            context=context,
            image=image,
            timeout_s=DEFAULT_TIMEOUT_S if timeout is None else timeout_s or 0.0,
            nccl=nccl,
            nccl_image=nccl_image,
            nccl_min_busbw=nccl_min_busbw,
            expect_gpus=expect_gpus,
            request_timeout_s=request_timeout_s,
        )
    request = ValidateRequest(
        bundle=source,
        kubeconfig=kubeconfig,
        context=context,
        categories=tuple(category or ()),
        expect_gpus=expect_gpus,
        rdma_rate_gbps=rdma_rate,
        active=active_options,
        output_dir=output_dir,
        scrape_interval_s=scrape_interval,
        quiet=quiet,
        with_diagnosis=output in (Format.table, Format.wide, Format.html) or output_dir is not None,
        nodes=tuple(nodes or ()),
        selector=selector,
        extras=_readiness_extras(source, deep, all_nodes, lists_first),
        request_timeout_s=request_timeout_s,
        waivers=_waivers(waivers),
    )
    live = source is None or active  # a saved bundle alone is judged without a deadline, as before
    with whole_run(timeout_s if live else None):
        _run(request, output, fail_on)


def _waivers(path: Path | None) -> tuple[Waiver, ...]:
    """The waiver file's entries, checked before anything is read from the cluster."""
    if path is None:
        return ()
    from gpunode.validate import checks as _registered  # noqa: F401
    from gpunode.validate.active import checks as _active  # noqa: F401
    from gpunode.validate.registry import REGISTRY
    from gpunode.validate.waivers import load_waivers

    return load_waivers(path, [v.id for v in REGISTRY])


def _readiness_extras(source: Path | None, deep: bool, all_nodes: bool, lists_first: bool) -> str:
    """A readiness checklist needs every chosen node's data: live, validate fetches each GPU
    node's extras unless ``--lists-first`` asks for diagnose's cheaper plan."""
    policy = extras_policy(deep, all_nodes)
    if lists_first and policy != "suspect":
        raise UsageError("--lists-first and --deep/--all-nodes: choose one")
    if source is not None or lists_first or policy != "suspect":
        return policy
    return "deep"


def _run(request: ValidateRequest, output: Format, fail_on: FailOn) -> None:
    from gpunode.commands.common import console as stdout_console
    from gpunode.leftout import print_warnings
    from gpunode.report import VALIDATE_REPORTERS
    from gpunode.safety import safe_struct
    from gpunode.validate.service import validate, write_outputs
    from gpunode.validation import Verdict

    threshold = Verdict(fail_on.value)
    result = validate(request)
    print_warnings(result.selection, result.gpu_nodes)  # on stderr, before the report
    diagnosis = result.diagnosis
    result = dataclasses.replace(  # no terminal escapes from collected data
        result, report=safe_struct(result.report, type(result.report)),
        diagnosis=None if diagnosis is None else safe_struct(diagnosis, type(diagnosis)))
    console = stdout_console()
    if output == Format.html:
        from gpunode.report.html import render_html

        assert result.diagnosis is not None
        console.file.write(render_html(result.diagnosis, result.report))
    elif output in (Format.table, Format.wide):
        from gpunode.report.readiness import render

        render(result.report, console, threshold, result.diagnosis, wide=output == Format.wide)
    else:
        VALIDATE_REPORTERS[output.value](result.report, console, threshold)
    if request.output_dir is not None:
        write_outputs(result, request.output_dir, threshold)
    raise typer.Exit(1 if result.report.fails_on(threshold) else 0)


def _list_checks() -> None:
    from gpunode.validate import checks as _registered  # noqa: F401
    from gpunode.validate.active import checks as _active  # noqa: F401
    from gpunode.validate.registry import REGISTRY

    for v in REGISTRY:
        kind = "active" if v.active else "passive"
        typer.echo(f"{v.category:15} {v.id:32} {kind:8} {v.title}")
