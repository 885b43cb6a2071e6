"""``gpunode diff``: a working and a broken bundle of one cluster; the breaking change ranks
first, its consequences after it; new root causes exit 1."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import jsonschema
import pytest
import yaml
from fleetsim import build, scenario, uniform

from gpunode.commands.diff import side
from gpunode.fleet.diff import diff
from inprocess import run_cli

SCHEMA = Path(__file__).parents[2] / "docs" / "report.schema.json"
NEW_KERNEL = "5.15.0-139-generic"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """The entry point's ``main`` in this process (tests/inprocess.py): exit code and output."""
    return run_cli(*args)


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Eight alike nodes; later three of them rebooted into a kernel without headers."""
    working = build(scenario(uniform(8)), tmp_path_factory.mktemp("working"))
    nodes = uniform(8)
    for i in (3, 5, 6):
        nodes[i - 1] = f"name: gpu-wk-{i:02d}, kernel: {NEW_KERNEL}"
    faults = [f"kernel_headers_missing@gpu-wk-{i:02d}" for i in (3, 5, 6)]
    broken = build(scenario(nodes, faults), tmp_path_factory.mktemp("broken"))
    return working, broken


def test_breaking_change_ranks_first(bundles: tuple[Path, Path]) -> None:
    working, broken = bundles
    result = diff(side(working), side(broken))
    assert result.began_failing == ("gpu-wk-03", "gpu-wk-05", "gpu-wk-06")
    assert [(r.cause, r.nodes) for r in result.new_root_causes] == [
        ("kernel_headers_missing", ("gpu-wk-03", "gpu-wk-05", "gpu-wk-06"))]
    first = result.changes[0]
    assert (first.what, first.before, first.after) == ("kernel", "5.15.0-131-generic", NEW_KERNEL)
    assert first.nodes == ("gpu-wk-03", "gpu-wk-05", "gpu-wk-06") and first.score == 1.0
    # the driver's failure takes GFD's labels and the GPUs off those nodes: consequences, after it
    assert {c.kind for c in result.changes[1:]} == {"output"}


def test_no_change_no_new_cause(bundles: tuple[Path, Path]) -> None:
    working, _ = bundles
    result = diff(side(working), side(working))
    assert result.changes == () and result.new_root_causes == () and not result.has_new_failures


def test_diff_json_exit_code_and_schema(bundles: tuple[Path, Path]) -> None:
    working, broken = bundles
    done = run("diff", str(working), str(broken), "-o", "json")
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    assert doc["changes"][0]["what"] == "kernel"
    assert set(doc["changes"][0]) >= {"what", "before", "after", "nodes"}
    schema = json.loads(SCHEMA.read_text())
    jsonschema.validate(doc, {**schema, "$ref": "#/$defs/DiffReport"})
    back = run("diff", str(broken), str(working), "-o", "markdown")
    assert back.returncode == 0, back.stderr  # the kernel fixed: causes resolved, none new
    assert "resolved `kernel_headers_missing`" in back.stdout
    table = run("diff", str(working), str(broken))
    assert table.returncode == 1 and f"kernel: 5.15.0-131-generic → {NEW_KERNEL}" in table.stdout
    as_yaml = run("diff", str(working), str(broken), "-o", "yaml")
    assert as_yaml.returncode == 1 and yaml.safe_load(as_yaml.stdout) == doc
    page = run("diff", str(working), str(broken), "-o", "html")
    assert page.returncode == 1 and page.stdout.startswith("<!doctype html>")
    rows = page.stdout[page.stdout.index("<tbody>"):]
    assert rows.startswith(f"<tbody><tr class=\"change-input\"><td>kernel</td><td>5.15.0-131-generic</td>"
                           f"<td>{NEW_KERNEL}</td><td>gpu-wk-03, gpu-wk-05, gpu-wk-06</td>")
    assert rows.count("<tr ") == len(doc["changes"])  # every change, none cut
    assert "✗ new <code>kernel_headers_missing</code>" in page.stdout


def test_diff_against_the_live_cluster(bundles: tuple[Path, Path]) -> None:
    """NEW left out: the live cluster now, read list-first. Against itself nothing changed
    (the runtime configs the live run did not fetch are not "removed"); against the broken
    cluster the breaking kernel ranks first and new root causes exit 1."""
    from gpunode.apiserver import serve_bundle

    working, broken = bundles
    with serve_bundle(working) as server:
        same = run("diff", str(working), "--kubeconfig", str(server.kubeconfig_path), "-q", "-o", "json")
    assert same.returncode == 0, same.stderr
    unchanged = json.loads(same.stdout)
    assert unchanged["changes"] == [] and unchanged["new_root_causes"] == []
    assert unchanged["new"]["location"].startswith("cluster (context ")
    with serve_bundle(broken) as server:
        live = run("diff", str(working), "--kubeconfig", str(server.kubeconfig_path), "-q", "-o", "json")
    assert live.returncode == 1, live.stderr
    doc = json.loads(live.stdout)
    assert (doc["changes"][0]["what"], doc["changes"][0]["after"]) == ("kernel", NEW_KERNEL)
    assert doc["changes"][0]["nodes"] == ["gpu-wk-03", "gpu-wk-05", "gpu-wk-06"]
    assert [r["cause"] for r in doc["new_root_causes"]] == ["kernel_headers_missing"]


def test_diff_live_unreachable_exits_3_and_bundle_with_live_flags_is_usage(
        bundles: tuple[Path, Path], tmp_path: Path) -> None:
    working, broken = bundles
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:9', insecure-skip-tls-verify: true}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
    )
    down = run("diff", str(working), "--kubeconfig", str(kubeconfig), "-q")
    assert down.returncode == 3 and "127.0.0.1:9" in down.stderr and "Traceback" not in down.stderr
    both = run("diff", str(working), str(broken), "--deep")
    assert both.returncode == 2 and "NEW is a saved bundle" in both.stderr
