"""A list-first run never calls ok what it could not see (issue 22, item 2): NVLink and
InfiniBand/RoCE state is only in a node's own files (or a gpunode agent's facts), never in
the cluster lists. Through the command line (its ``main`` in this process, tests/inprocess.py)
against the test API server:

- without agents, a node whose lists show GPU links (two or more GPUs, an NVLink domain
  label, ``rdma/*`` devices, a MOFED pod) is read on the node even when the lists find it
  healthy, so the default ``diagnose`` gives the verdict ``--deep`` and the bundle give;
- with fresh GPUNodeReports, the report's facts hold the links: nodes whose facts show
  healthy links cost lists only, and a link fault in a node's facts is found from them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gpunode import sim
from gpunode.apiserver import serve_bundle
from gpunode.collect.reports import LINKS_REASON, ExtrasPolicy, NodeReportSeen, plan_extras
from inprocess import run_cli

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))
from fleet import Fleet, build

ENV = {**os.environ, "COLUMNS": "200"}
Roots = set[tuple[str, str, str]]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, env=ENV)


def _roots(report: dict[str, Any]) -> Roots:
    return {(n["name"], rc["component"], rc["cause"]) for n in report["nodes"] for rc in n["root_causes"]}


@pytest.mark.parametrize(("scenario", "node", "cause"), [
    ("fault-nvlink-down", "gpu-wk-02", "nvlink_down"),
    ("fault-ib-port-polling", "gpu-wk-02", "ib_port_polling"),
])
def test_the_default_live_run_reads_the_links_the_lists_cannot_judge(
        scenario: str, node: str, cause: str, tmp_path: Path) -> None:
    bundle = sim.build_bundle(sim.load_scenario(scenario), tmp_path / "bundle")
    offline = _run("diagnose", "--from", str(bundle), "-o", "json")
    with serve_bundle(bundle) as server:
        kubeconfig = str(server.kubeconfig_path)
        live = _run("diagnose", "--kubeconfig", kubeconfig, "-q", "-o", "json")
        deep = _run("diagnose", "--kubeconfig", kubeconfig, "-q", "--deep", "-o", "json")
        collected = _run("collect", "--kubeconfig", kubeconfig, "-q", "-d", str(tmp_path / "live"))
    assert offline.returncode == live.returncode == deep.returncode == 1, live.stderr
    found = _roots(json.loads(live.stdout))
    assert found == _roots(json.loads(offline.stdout)) == _roots(json.loads(deep.stdout))
    assert any(n == node and c == cause for n, _comp, c in found), found
    assert collected.returncode == 0, collected.stderr
    manifest = json.loads((tmp_path / "live" / "manifest.json").read_text())
    reasons = manifest["extras_reasons"]
    healthy = next(n for n in reasons if n != node)  # the lists find it healthy: read for its links
    assert reasons[healthy].startswith(LINKS_REASON) and "8 GPUs (NVLink)" in reasons[healthy], reasons


def _with_port(facts: dict[str, Any], state: str, state_id: int, phys: str) -> dict[str, Any]:
    port = {"device": "mlx5_0", "port": 1, "state": state, "state_id": state_id, "phys_state": phys,
            "link_layer": "InfiniBand", "rate_gbps": 400.0, "width": "4X", "speed": "NDR"}
    return {**facts, "host": {**facts["host"], "rdma_ports": [port]}}


def _agent_fleet(tmp_path: Path, fleet: Fleet, down: int) -> Path:
    """The fleet with an InfiniBand port per node (``rdma/ib`` advertised, the port in each
    agent's facts and published GPUNodeReport), node ``down``'s port down."""
    source = build(tmp_path / "src", fleet)
    nodes = json.loads((source / "cluster/nodes.json").read_text())
    for item in nodes["items"]:
        if item["metadata"]["name"] in fleet.names:
            for key in ("capacity", "allocatable"):
                item["status"][key]["rdma/ib"] = "1"
    (source / "cluster/nodes.json").write_text(json.dumps(nodes))
    reports = json.loads((source / "cluster/gpunodereports.json").read_text())
    for item in reports["items"]:
        name = item["metadata"]["name"]
        state = ("DOWN", 1, "Polling") if name == fleet.name(down) else (
            "ACTIVE", 4, "LinkUp")
        item["status"]["facts"] = _with_port(item["status"]["facts"], *state)
        probe = source / "nodes" / name / "cmd" / "gpunode-probe.json"
        probe.write_text(json.dumps(_with_port(json.loads(probe.read_text()), *state)))
    (source / "cluster/gpunodereports.json").write_text(json.dumps(reports))
    return source


def test_agent_reports_carry_the_links(tmp_path: Path) -> None:
    fleet = Fleet(4, agents=True, reports=True)
    source = _agent_fleet(tmp_path, fleet, down=2)
    with serve_bundle(source) as server:
        done = _run("collect", "--kubeconfig", str(server.kubeconfig_path), "-q", "-d", str(tmp_path / "b"))
        live = _run("diagnose", "--kubeconfig", str(server.kubeconfig_path), "-q", "-o", "json")
    assert done.returncode == 0, done.stderr
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    # the three healthy nodes: their links judged from their reports' facts, no visit
    assert list(manifest["extras_reasons"]) == [fleet.name(2)], manifest["extras_reasons"]
    assert "ib_port_polling" in manifest["extras_reasons"][fleet.name(2)]
    assert live.returncode == 1, live.stderr
    assert _roots(json.loads(live.stdout)) == {(fleet.name(2), "rdma-links", "ib_port_polling")}


def test_links_need_the_node_only_without_fresh_report_facts() -> None:
    seen = {"a": NodeReportSeen("a", "ok", "", "", b"{}", fresh=True),
            "b": NodeReportSeen("b", "ok", "", "", b"{}", fresh=False)}
    plan = plan_extras(["a", "b", "c", "d"], policy=ExtrasPolicy.SUSPECT, named=(), reports=seen,
                       agents_deployed=False, verdicts={},
                       links={"a": "8 GPUs (NVLink)", "b": "RDMA (rdma/ib)", "c": "RDMA (MOFED driver pod)"})
    assert plan.reasons == {"b": "GPUNodeReport stale (facts from never)",
                            "c": f"{LINKS_REASON} (RDMA (MOFED driver pod))"}
