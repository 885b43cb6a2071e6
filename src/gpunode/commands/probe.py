"""``gpunode probe``: probe this node, then diagnose what it saw with the normal engine.

The probe's facts are written in the bundle layout (to ``--bundle DIR`` or a
temporary directory) and diagnosed exactly as ``gpunode diagnose --from DIR``
would, so a node judged here and the same node judged from a collected bundle
get the same verdict. Exit codes as for ``diagnose``: 1 when a root cause is
found (a missing driver included), 0 otherwise, 2 for bad usage.
"""

from __future__ import annotations

import sys
import tempfile
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import msgspec
import typer

from gpunode.errors import UsageError

if TYPE_CHECKING:
    from gpunode.model import Report
    from gpunode.probe import ProbeResult


class ProbeOutput(StrEnum):
    """Output formats (those of ``diagnose``)."""

    table = "table"
    json = "json"
    yaml = "yaml"
    markdown = "markdown"


def register(app: typer.Typer) -> None:
    """Add the ``probe`` command to the CLI."""
    app.command("probe")(probe_cmd)


def probe_cmd(
    *,
    host_root: Annotated[
        Path, typer.Option(help="Where the host's file system is mounted (e.g. /host in a pod).")
    ] = Path("/"),
    node_name: Annotated[
        str | None, typer.Option(help="Name for this node (default: $NODE_NAME, then the hostname).")
    ] = None,
    output: Annotated[
        ProbeOutput | None, typer.Option("-o", "--output", help="Output format (default: table).")
    ] = None,
    bundle: Annotated[
        Path | None, typer.Option(help="Keep the probe bundle in this directory (default: a temporary one).")
    ] = None,
    show_stack: Annotated[bool, typer.Option("--stack", help="Also draw the node's stack.")] = False,
    nvidia_smi: Annotated[
        bool, typer.Option("--nvidia-smi", help="Also run nvidia-smi -q -x (read-only) for the bundle.")
    ] = False,
    facts: Annotated[
        bool, typer.Option("--facts", help="Print the probe's raw JSON instead of the diagnosis.")
    ] = False,
) -> None:
    """Probe this GPU node (NVML, /proc, /sys, kernel log, runtime config) and diagnose it."""
    if facts and output is not None:
        raise UsageError("--facts prints the probe's JSON; leave out -o")
    if not host_root.is_dir():
        raise UsageError(f"--host-root {host_root}: no such directory")
    if nvidia_on_pci(host_root) is False:
        _not_a_gpu_node(host_root, output or ProbeOutput.table, facts)
        raise typer.Exit(0)
    from gpunode.probe import probe_json, run_probe

    result = run_probe(str(host_root), node_name, run_nvidia_smi=nvidia_smi)
    report = diagnose_probe(result, bundle)
    if facts:
        sys.stdout.buffer.write(probe_json(result))
        sys.stdout.flush()
    else:
        _render(report, output or ProbeOutput.table, show_stack)
    raise typer.Exit(1 if report.has_failures else 0)


NVIDIA_VENDOR = "0x10de"
# Next steps for a host without an NVIDIA PCI function: commands for this host itself.
NO_GPU_STEPS = (
    "lspci -nn | grep -i -e nvidia -e 10de",
    "cat /sys/bus/pci/devices/*/vendor | sort | uniq -c",
    "dmesg -T | grep -i -e nvidia -e 'pci.*10de'",
)


def nvidia_on_pci(host_root: Path) -> bool | None:
    """Whether any PCI function of the host has NVIDIA's vendor id; None when /sys is not visible."""
    devices = host_root / "sys" / "bus" / "pci" / "devices"
    vendors = sorted(devices.glob("*/vendor"))
    if not vendors:
        return None
    for vendor in vendors:
        try:
            if vendor.read_text().strip().lower() == NVIDIA_VENDOR:
                return True
        except OSError:
            return None
    return False


def _not_a_gpu_node(host_root: Path, output: ProbeOutput, facts: bool) -> None:
    """Say plainly that this host has no NVIDIA GPU: nothing above it can be judged, nothing failed."""
    where = "" if str(host_root) == "/" else f" (host root {host_root})"
    message = f"not a GPU node: no NVIDIA GPU (PCI vendor {NVIDIA_VENDOR}) on the PCI bus of this host{where}"
    if facts or output in (ProbeOutput.json, ProbeOutput.yaml):
        doc = {"gpu_node": False, "reason": message, "next_steps": list(NO_GPU_STEPS)}
        if output == ProbeOutput.yaml and not facts:
            import yaml

            typer.echo(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), nl=False)
            return
        typer.echo(msgspec.json.format(msgspec.json.encode(doc), indent=2).decode())
        return
    typer.echo(message)
    typer.echo("next (on this host):")
    for step in NO_GPU_STEPS:
        typer.echo(f"  $ {step}")


def diagnose_probe(result: ProbeResult, bundle: Path | None) -> Report:
    """Write the probe bundle (kept in ``bundle``, else temporary) and diagnose its node."""
    if bundle is None:
        with tempfile.TemporaryDirectory(prefix="gpunode-probe-") as tmp:
            report = _diagnose_bundle(result, Path(tmp))
        # the temporary directory is gone: name what was probed instead
        source = msgspec.structs.replace(report.source, location=f"probe:{result.node_name}")
        return msgspec.structs.replace(report, source=source)
    report = _diagnose_bundle(result, bundle)
    typer.echo(f"gpunode: probe bundle in {bundle}", err=True)
    return report


def node_dir(result: ProbeResult) -> str:
    """The node's folder in the bundle (as ``write_probe_bundle`` names it)."""
    return result.node_name.replace("/", "_") or "unknown-node"


def _diagnose_bundle(result: ProbeResult, bundle: Path) -> Report:
    from gpunode.commands.diagnosis import build_report
    from gpunode.probe import write_probe_bundle

    _refuse_overwrite(bundle, node_dir(result))
    write_probe_bundle(result, bundle)
    return node_view(build_report(bundle, [node_dir(result)]))


def _refuse_overwrite(bundle: Path, node: str) -> None:
    """Mixing two probes of one node in one bundle would judge stale files as current."""
    if bundle.exists() and not bundle.is_dir():
        raise UsageError(f"--bundle {bundle}: not a directory")
    if (bundle / "nodes" / node).exists():
        raise UsageError(f"--bundle {bundle} already holds node {node}; give a new or empty directory")


def node_view(report: Report) -> Report:
    """Drop the cluster components a probe-only bundle cannot see (they read "unknown").

    Cluster root causes, if any, stay: they are findings, not absence of data.
    """
    if report.source.kind != "probe":
        return report
    cluster = msgspec.structs.replace(report.cluster, components=())
    nodes = tuple(
        msgspec.structs.replace(
            n,
            root_causes=tuple(
                msgspec.structs.replace(rc, next_steps=host_steps(rc.next_steps, n.name))
                for rc in n.root_causes
            ),
        )
        for n in report.nodes
    )
    return msgspec.structs.replace(report, cluster=cluster, nodes=nodes)


def host_steps(steps: tuple[str, ...], node: str) -> tuple[str, ...]:
    """Next steps for the host the probe runs on: ``ssh NODE cmd`` becomes ``cmd``; commands
    that need the cluster API (kubectl) are left to ``gpunode diagnose``."""
    prefix = f"ssh {node} "
    out = [s.removeprefix(prefix) if s.startswith(prefix) else s for s in steps]
    return tuple(s for s in out if not s.startswith(("kubectl ", "ssh ")))


def _render(report: Report, output: ProbeOutput, show_stack: bool) -> None:
    if output == ProbeOutput.json:  # the report JSON as is; rich is not even loaded
        from gpunode.report.jsonout import to_json

        sys.stdout.write(to_json(report).decode() + "\n")
        return
    from gpunode.commands.common import console as _console
    from gpunode.report import DIAGNOSE_REPORTERS
    from gpunode.report.options import RenderOptions

    console = _console()
    options = RenderOptions(show_stack=show_stack)
    DIAGNOSE_REPORTERS[output.value](report, console, options)
