"""The fleet-first table: worst first, shared causes grouped, commands copyable, 80 columns."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from fleetgen import fleet_report
from rich.console import Console

from gpunode.model import Report
from gpunode.report import fleet, stack, table
from gpunode.report.options import RenderOptions


@pytest.fixture(scope="module")
def fleet40(tmp_path_factory: pytest.TempPathFactory) -> Report:
    return fleet_report(40, tmp_path_factory.mktemp("fleet"))


def render(report: Report, fn: object = table.render_diagnosis, **opts: bool) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=80, soft_wrap=False, highlight=False)
    fn(report, console, RenderOptions(**opts))  # type: ignore[operator]
    return buf.getvalue()


def test_drain_first_then_layers_bottom_up(fleet40: Report) -> None:
    rows = fleet.rows(fleet40, expand=False)
    causes = list(dict.fromkeys(r.cause for r in rows))
    assert causes == ["gpu_fallen_off_bus", "kernel_headers_missing", "device_plugin_zero_gpus"]
    assert rows[0].drain and rows[0].layer == 0
    assert [r.layer for r in rows[1:]] == sorted(r.layer for r in rows[1:])


def test_shared_cause_is_one_group_unless_expanded(fleet40: Report) -> None:
    grouped = {r.cause: r for r in fleet.rows(fleet40, expand=False)}
    headers = grouped["kernel_headers_missing"]
    assert len(headers.nodes) == 3 and headers.label == "3 nodes"
    expanded = [r for r in fleet.rows(fleet40, expand=True) if r.cause == "kernel_headers_missing"]
    assert [r.nodes for r in expanded] == [(n,) for n in headers.nodes]
    out = render(fleet40)
    assert "3 nodes" in out and "nodes: " + ", ".join(headers.nodes) in out
    assert out.count("kernel_headers_missing  (L1") == 1
    assert render(fleet40, expand=True).count("kernel_headers_missing  (L1") == 3


def test_summary_before_details_and_commands_unwrapped(fleet40: Report) -> None:
    out = render(fleet40)
    assert out.index("NODE") < out.index("evidence")
    commands = [line for line in out.splitlines() if line.lstrip().startswith("$ ")]
    assert commands and all(line.startswith("  $ ") for line in commands)
    assert any(line.endswith("# on the node") and " ssh " in line for line in commands)
    assert not any("# on the node" in line and "kubectl" in line for line in commands)
    for line in out.splitlines():
        # only an unbreakable word (command, path, pod reference) may run past 80 columns
        if len(line) > 80:
            assert (
                line.lstrip().startswith(("$ ", "logs/", "pod ", "nodes/", "pod=")) or " " not in line.strip()
            )


def test_no_box_drawing_when_not_a_terminal(fleet40: Report) -> None:
    out = render(fleet40)
    assert not set(out) & set("│┃━─╭╮╰╯┏┓")


def test_stack_grid_for_a_fleet_and_pictures_for_few(fleet40: Report) -> None:
    grid = render(fleet40, stack.render_stack)
    lines = grid.splitlines()
    node_lines = [line for line in lines if line.startswith("gpu-0")]
    assert len(node_lines) == 40 and any(line.startswith("NODE      L0 ") for line in lines)
    # Xid 79: gpu-hardware failed; the driver that still answers for the other GPUs stands
    assert "gpu-0001  ✓✗✓✓ ✓" in grid and "gpu-0002  ✓✓✓✓ ✓" in grid
    assert "L0 = kernel, gpu-hardware" in grid
    few = Report(source=fleet40.source, cluster=fleet40.cluster, nodes=fleet40.nodes[:2], groups=())
    pictures = render(few, stack.render_stack)
    assert "L1 hardware enablement" in pictures and "NODE" not in pictures.splitlines()[0]


def test_root_cause_before_stack_pictures(tmp_path: Path, fleet40: Report) -> None:
    out = render(fleet40, show_stack=True)
    assert out.index("evidence") < out.index("L0 = ")
