"""List first: a healthy fleet costs lists only; a broken node adds its own extras, nothing else.

Fleets are small here (the property does not depend on size); bench/live measures
5,000 nodes. API calls are counted by the collector (``calls_by_kind``) and checked
against what the test API server saw (``audit``).
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import msgspec
import pytest

from gpunode.apiserver import serve_bundle
from gpunode.apiserver.httpserver import AuditRecord
from gpunode.cli import build_report
from gpunode.collect import CollectResult, collect_bundle
from gpunode.errors import UsageError
from gpunode.model import Status

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))
from fleet import Fleet, build

NODES = 12
LISTS_ONLY = {"list", "get"}


def _collect(tmp_path: Path, fleet: Fleet, name: str = "b", **kwargs: object
             ) -> tuple[CollectResult, list[AuditRecord]]:
    source = build(tmp_path / f"{name}-src", fleet)
    with serve_bundle(source) as server:
        result = collect_bundle(tmp_path / name, kubeconfig=server.kubeconfig_path, quiet=True,
                                **kwargs)  # type: ignore[arg-type]
        return result, server.audit()


def _manifest(result: CollectResult) -> dict[str, object]:
    data: dict[str, object] = msgspec.json.decode((result.path / "manifest.json").read_bytes())
    return data


def _extra_targets(audit: list[AuditRecord]) -> Counter[str]:
    """Per-node calls the server saw (exec, proxy, log), by pod."""
    return Counter(f"{a.resource} {a.name}" for a in audit
                   if a.resource in ("pods/exec", "pods/proxy", "pods/log"))


@pytest.mark.parametrize("agents", [True, False], ids=["with-reports", "without-agents"])
def test_a_healthy_fleet_costs_lists_only(tmp_path: Path, agents: bool) -> None:
    result, audit = _collect(tmp_path, Fleet(NODES, agents=agents, reports=agents))
    assert set(result.calls_by_kind) == LISTS_ONLY, result.calls_by_kind
    assert not _extra_targets(audit)
    assert {a.verb for a in audit} == {"list"}
    manifest = _manifest(result)
    assert manifest["extras_policy"] == "suspect" and manifest["extras_nodes"] == []
    assert manifest["report_nodes"] == (Fleet(NODES).names if agents else [])
    report = build_report(result.path, None)
    assert len(report.nodes) == NODES and not any(n.root_causes for n in report.nodes)
    assert all(n.status in (Status.OK, Status.UNKNOWN) for n in report.nodes)
    assert not report.cluster.root_causes, report.cluster.root_causes


@pytest.mark.parametrize("agents", [True, False], ids=["with-reports", "without-agents"])
def test_one_broken_node_adds_only_its_own_extras(tmp_path: Path, agents: bool) -> None:
    fleet = Fleet(NODES, broken=[5], agents=agents, reports=agents)
    result, audit = _collect(tmp_path, fleet)
    broken = fleet.name(5)
    assert result.extras_reasons == {broken: "verdict from the lists: failed (device-plugin crash_loop)"}
    targets = _extra_targets(audit)
    pods = {key.split(" ", 1)[1].split(":")[0] for key in targets}
    on_node = {f"{prefix}{5:05x}" for prefix in ("nvidia-driver-daemonset-d", "gpunode-agent-",
                                                  "nvidia-dcgm-exporter-e", "prometheus-node-exporter-n",
                                                  "nvidia-device-plugin-daemonset-p",
                                                  "nvidia-container-toolkit-daemonset-t")}
    assert pods <= on_node and pods, targets
    kinds = result.calls_by_kind
    assert kinds["log"] == 2  # the crash-looping device plugin: current and previous
    assert kinds.get("exec", 0) + kinds.get("proxy", 0) == sum(
        v for k, v in targets.items() if not k.startswith("pods/log"))
    report = build_report(result.path, None)
    failed = [n.name for n in report.nodes if n.status == Status.FAILED]
    assert failed == [broken]
    (node,) = [n for n in report.nodes if n.name == broken]
    assert node.root_causes[0].component == "device-plugin", node.root_causes[0]


def test_stale_missing_and_unhealthy_reports_get_extras(tmp_path: Path) -> None:
    fleet = Fleet(NODES, agents=True, reports=True, stale_reports=[1], no_report=[2],
                  report_verdicts={3: "failed"})
    result, audit = _collect(tmp_path, fleet)
    assert result.extras_reasons.keys() == {fleet.name(1), fleet.name(2), fleet.name(3)}
    assert result.extras_reasons[fleet.name(1)].startswith("GPUNodeReport stale")
    assert result.extras_reasons[fleet.name(2)] == "no GPUNodeReport"
    assert result.extras_reasons[fleet.name(3)] == "GPUNodeReport verdict failed (gpu_fallen_off_bus)"
    assert fleet.name(1) not in result.report_nodes and fleet.name(0) in result.report_nodes
    agents_asked = {a.name for a in audit if a.resource == "pods/proxy"
                    and a.name.startswith("gpunode-agent")}
    assert agents_asked == {f"gpunode-agent-{i:05x}:9808" for i in (1, 2, 3)}
    assert any("1 GPUNodeReport(s) stale" in note for note in result.notes)


def test_nodes_judged_from_lists_say_why_their_node_files_are_unknown(tmp_path: Path) -> None:
    result, _audit = _collect(tmp_path, Fleet(4))
    report = build_report(result.path, None)
    host = {c.component: c for c in report.nodes[0].components}
    lacked = {cid for m in report.nodes[0].missing_data for cid in m.components}
    unknown = [c for c in host.values() if c.status == Status.UNKNOWN and c.component in lacked]
    assert unknown, [(c.component, c.status, c.summary) for c in host.values()]
    for comp in unknown:
        assert "node extras not fetched: judged healthy from the cluster lists" in comp.summary


@pytest.mark.parametrize("policy", ["deep", "all-nodes"])
def test_deep_and_all_nodes_fetch_every_node(tmp_path: Path, policy: str) -> None:
    fleet = Fleet(4, agents=True, reports=True)
    result, audit = _collect(tmp_path, fleet, extras=policy)
    assert sorted(result.extras_reasons) == fleet.names
    assert set(result.extras_reasons.values()) == {f"--{policy}"}
    pods = {a.name.split(":")[0] for a in audit if a.resource == "pods/proxy"}
    assert {f"gpunode-agent-{i:05x}" for i in range(4)} <= pods
    assert _manifest(result)["extras_nodes"] == fleet.names


def test_named_nodes_get_extras_and_the_selector_goes_to_the_api(tmp_path: Path) -> None:
    fleet = Fleet(6, agents=True, reports=True)
    source = build(tmp_path / "src", fleet)
    with serve_bundle(source) as server:
        named = collect_bundle(tmp_path / "named", kubeconfig=server.kubeconfig_path, quiet=True,
                               nodes=[fleet.name(2)])
        selected = collect_bundle(tmp_path / "sel", kubeconfig=server.kubeconfig_path, quiet=True,
                                  selector="kubernetes.io/hostname in (gpu-00001,gpu-00004)")
        with pytest.raises(UsageError, match="--all-nodes"):
            collect_bundle(tmp_path / "x", kubeconfig=server.kubeconfig_path, quiet=True,
                           selector="a=b", extras="all-nodes")
        with pytest.raises(UsageError, match="cannot parse"):
            collect_bundle(tmp_path / "y", kubeconfig=server.kubeconfig_path, quiet=True,
                           selector="a=(b")
    assert named.extras_reasons == {fleet.name(2): "named on the command line"}
    assert selected.objects["nodes"] == 2  # the API filtered the node list
    listed = msgspec.json.decode((selected.path / "cluster/nodes.json").read_bytes())
    assert [n["metadata"]["name"] for n in listed["items"]] == [fleet.name(1), fleet.name(4)]
    assert selected.extras_reasons == {}
    assert _manifest(selected)["node_selector"] == "kubernetes.io/hostname in (gpu-00001,gpu-00004)"


@pytest.mark.parametrize("agents", [True, False], ids=["with-reports", "without-agents"])
def test_node_reports_judged_from_the_lists_are_reused_only_where_nothing_changed(
        tmp_path: Path, agents: bool) -> None:
    fleet = Fleet(NODES, broken=[5], agents=agents, reports=agents)
    result, _audit = _collect(tmp_path, fleet)
    assert result.reuse is not None
    assert sorted(result.reuse.nodes) == [n for n in fleet.names if n != fleet.name(5)]
    again = build_report(result.path, None)
    reused = build_report(result.path, None, reuse=result.reuse)
    assert reused == again
    assert [n.name for n in reused.nodes if n.root_causes] == [fleet.name(5)]
