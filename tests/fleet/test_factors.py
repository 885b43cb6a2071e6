"""Shared factors: a cause injected on the nodes of one kernel, pool or driver version is
named with that factor first, with its counts."""

from __future__ import annotations

from pathlib import Path

from fleetsim import build, diagnose, edit_node, scenario, uniform

from gpunode.fleet import factors
from gpunode.fleet.profile import Profile

NEW_KERNEL = "5.15.0-139-generic"


def test_cause_on_one_kernel_names_the_kernel_first(tmp_path: Path) -> None:
    nodes = uniform(5) + [f"name: gpu-wk-{i:02d}, kernel: {NEW_KERNEL}" for i in (6, 7, 8)]
    faults = [f"kernel_headers_missing@gpu-wk-{i:02d}" for i in (6, 7, 8)]
    report = diagnose(build(scenario(nodes, faults), tmp_path))
    first = next(c for c in report.fleet.correlations if c.cause == "kernel_headers_missing")
    assert (first.factor, first.value) == ("kernel", NEW_KERNEL)
    assert (first.failing_with, first.nodes_with, first.failing_without, first.nodes_without) == (3, 3, 0, 5)
    assert first.text == (f"kernel {NEW_KERNEL}: 3 of 3 nodes on it fail kernel_headers_missing; "
                          "0 of 5 others")


def test_cause_on_one_pool_names_the_pool_first(tmp_path: Path) -> None:
    faults = [f"driver_image_not_found@gpu-wk-{i:02d}" for i in (1, 2, 3)]
    bundle = build(scenario(uniform(8), faults), tmp_path)
    for i in range(1, 9):
        pool = "h100-new" if i <= 3 else "h100-main"
        label = {"cloud.google.com/gke-nodepool": pool}
        edit_node(bundle, f"gpu-wk-{i:02d}", lambda n, label=label: n["metadata"]["labels"].update(label))
    report = diagnose(bundle)
    failing = {rc.cause for n in report.nodes for rc in n.root_causes}
    cause = next(iter(failing))
    first = next(c for c in report.fleet.correlations if c.cause == cause)
    assert (first.factor, first.value, first.failing_with, first.nodes_with) == ("pool", "h100-new", 3, 3)


def _node(name: str, driver: str, cause: str | None, kernel: str = "k1") -> Profile:
    factors_ = {"driver": driver, "kernel": kernel, "pool": "p"}
    return Profile(name, frozenset({cause} if cause else ()), {}, factors=factors_)


def test_cause_on_one_driver_version_names_the_driver() -> None:
    nodes = [_node(f"a{i}", "550.54.15", None) for i in range(6)]
    nodes += [_node(f"b{i}", "570.86.15", "driver_library_mismatch") for i in range(3)]
    nodes += [_node("c", "570.86.15", None)]
    found = factors.find(nodes)
    assert [(c.factor, c.value, c.failing_with, c.nodes_with, c.failing_without) for c in found] == [
        ("driver", "570.86.15", 3, 4, 0)]


def test_nothing_is_named_without_a_factor_that_separates() -> None:
    """One failing node, or failing nodes spread over every value, name nothing."""
    one = [_node(f"a{i}", "550", None) for i in range(5)] + [_node("b", "570", "crash_loop")]
    assert factors.find(one) == []
    spread = [_node(f"a{i}", "550", "crash_loop" if i % 2 else None, kernel=f"k{i % 3}") for i in range(12)]
    assert factors.find(spread) == []


def test_every_reporter_shows_the_fleet_sections(tmp_path: Path) -> None:
    """Table, markdown and HTML show the shared factor and the outlier under the summary."""
    import io

    from rich.console import Console

    from gpunode.report.html import render_html
    from gpunode.report.markdown import diagnosis_lines
    from gpunode.report.table import render_diagnosis

    nodes = uniform(5) + [f"name: gpu-wk-{i:02d}, kernel: {NEW_KERNEL}" for i in (6, 7)]
    nodes[1] = "name: gpu-wk-02, gpus: 7"
    faults = [f"kernel_headers_missing@gpu-wk-{i:02d}" for i in (6, 7)]
    report = diagnose(build(scenario(nodes, faults), tmp_path))
    buffer = io.StringIO()
    render_diagnosis(report, Console(file=buffer, width=200, color_system=None))
    table = buffer.getvalue()
    assert "Shared by the failing nodes (1)" in table and f"kernel {NEW_KERNEL}: 2 of 2" in table
    assert "gpu-wk-02: fewer" in table
    assert table.index("Shared by the failing nodes") < table.index("✗ gpu-wk-06 · driver")
    markdown = "\n".join(diagnosis_lines(report))
    assert "## Shared by the failing nodes" in markdown and "## Nodes unlike their peers" in markdown
    page = render_html(report)
    assert 'id="fleet-analysis"' in page and "gpu-wk-02" in page and NEW_KERNEL in page
