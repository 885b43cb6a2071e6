"""What an operator counts (issue 22, item 5): the fleet summary leads with GPUs usable of
those counted, lost per node, per GPU class, in the table, Markdown, HTML and JSON, as
``gpunode demo`` prints them (asked of the command line in this process, tests/inprocess.py);
healthy scenarios lose none."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gpunode import sim
from gpunode.cli import build_report
from gpunode.gpucount import class_lines, count, headline, usable_gpus
from gpunode.model import NodeReport, Status
from inprocess import run_cli

HEALTHY = [name for name, _ in sim.list_scenarios()
           if name.startswith("falcon-ai") and name != "falcon-ai-broken"]


def first_lines(text: str) -> list[str]:
    """The summary's lines after the header (which may wrap)."""
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if "GPUs usable" in ln or "GPU nodes affected" in ln)
    return lines[start:]


def demo(scenario: str, output: str) -> str:
    ran = run_cli("demo", "--scenario", scenario, "-o", output, env={**os.environ, "COLUMNS": "100"})
    assert ran.returncode == 1, ran.stderr
    return ran.stdout


def test_the_table_leads_with_gpus() -> None:
    lines = first_lines(demo("fault-gpu-fallen-off-bus", "table"))
    assert lines[0] == "15 of 16 GPUs usable; 1 lost on 1 node", lines[:4]
    row = next(ln for ln in lines if ln.startswith("✗ gpu-wk-02"))
    assert row.split()[2] == "7/8" and "GPUS" in next(ln for ln in lines if ln.startswith("NODE"))


@pytest.mark.parametrize(("output", "expected"), [
    ("markdown", "**8 of 16 GPUs usable; 8 lost on 1 node**"),
    ("html", "<b>8 of 16 GPUs usable; 8 lost on 1 node</b>"),
])
def test_markdown_and_html_lead_with_gpus(output: str, expected: str) -> None:
    assert expected in demo("fault-device-plugin-zero-gpus", output)


def test_json_counts_per_node_and_class() -> None:
    doc = json.loads(demo("fault-node-not-ready", "json"))
    assert {n["name"]: (n["gpus"], n["gpus_usable"]) for n in doc["nodes"]} == {
        "gpu-wk-01": (8, 8), "gpu-wk-02": (8, 0)}
    gpus = doc["gpus"]
    assert (gpus["gpus"], gpus["usable"], gpus["lost"], gpus["losing"]) == (16, 8, 8, ["gpu-wk-02"])
    assert [(c["product"], c["nodes"], c["usable"]) for c in gpus["classes"]] == [
        ("NVIDIA-H100-80GB-HBM3", 2, 8)]


def test_a_node_whose_gpus_were_never_counted_is_said_apart() -> None:
    lines = first_lines(demo("falcon-ai-broken", "table"))
    assert lines[0] == "8 of 8+ GPUs usable; 1 node failing with GPUs not counted (gpu-wk-02)"


@pytest.mark.parametrize("scenario", HEALTHY)
def test_healthy_scenarios_lose_no_gpu(scenario: str, tmp_path: Path) -> None:
    report = build_report(sim.build_bundle(sim.load_scenario(scenario), tmp_path / "b"), None)
    assert report.gpus is not None and report.gpus.gpus == 16 and report.gpus.lost == 0
    assert report.gpus.usable == 16 and not report.gpus.uncounted


def node(name: str, product: str | None, gpus: int | None, usable: int | None) -> NodeReport:
    return NodeReport(name, Status.OK, (), (), gpus=gpus, gpu_product=product, gpus_usable=usable)


def test_per_class_lines() -> None:
    fleet = count([node("a1", "A100", 8, 8), node("a2", "A100", 8, 6), node("h1", "H100", 8, 0),
                   node("h2", "H100", 8, None), node("x", None, None, 0)])
    assert headline(fleet) == ("22 of 32+ GPUs usable; 10 lost on 2 nodes; 1 node failing with GPUs "
                               "not counted (x)")
    assert class_lines(fleet) == ["A100: 14 of 16 GPUs usable; 2 lost on 1 node (2 nodes)",
                                  "H100: 8 of 16 GPUs usable; 8 lost on 1 node (2 nodes)"]


def test_usable_reads_who_hands_out_gpus() -> None:
    alloc = {"nvidia.com/gpu": "7"}
    assert usable_gpus(8, {}, alloc, {"device-plugin": Status.OK}) == 7
    assert usable_gpus(8, {}, alloc, {"device-plugin": Status.FAILED}) == 0
    assert usable_gpus(8, {}, alloc, {"kubelet": Status.FAILED, "device-plugin": Status.OK}) == 0
    shared = {"nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.sharing-strategy": "time-slicing"}
    assert usable_gpus(8, shared, {"nvidia.com/gpu": "32"}, {"device-plugin": Status.OK}) == 8
    mig = {"nvidia.com/mig-1g.10gb": "56"}
    assert usable_gpus(8, {"nvidia.com/mig.strategy": "mixed"}, mig, {"device-plugin": Status.OK}) == 8
    assert usable_gpus(None, {}, {}, {}) is None
