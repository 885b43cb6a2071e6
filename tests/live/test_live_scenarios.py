"""Every simulator scenario: collect every node's extras from the test server, then diagnose —
same as offline. (List-first collection, the default, is tested in test_list_first.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpunode.apiserver import serve_bundle
from gpunode.cli import build_report
from gpunode.collect import collect_bundle
from gpunode.model import NodeReport

sim = pytest.importorskip("gpunode.sim")
scenario_mod = pytest.importorskip("gpunode.sim.scenario")
SCENARIOS = [name for name, _description in scenario_mod.list_scenarios()
             if not name.startswith("scale-")]
#: The scenario `make check` runs; `make test` runs every one.
QUICK = "falcon-ai-broken"


@pytest.mark.parametrize("name", [pytest.param(n, marks=[] if n == QUICK else [pytest.mark.slow])
                                  for n in SCENARIOS])
def test_live_diagnosis_equals_offline(name: str, tmp_path: Path) -> None:
    source = sim.build_bundle(scenario_mod.load_scenario(name), tmp_path / "source")
    with serve_bundle(source) as server:
        result = collect_bundle(tmp_path / "live", kubeconfig=server.kubeconfig_path, quiet=True,
                                extras="all-nodes")  # the full sweep sees what the bundle holds
    assert not result.partial, result.warnings
    live, offline = build_report(result.path, None), build_report(source, None)
    assert live.cluster == offline.cluster
    assert [essence(n) for n in live.nodes] == [essence(n) for n in offline.nodes]
    assert live.groups == offline.groups
    for mine, theirs in zip(live.nodes, offline.nodes, strict=True):
        assert evidence(mine) <= evidence(theirs)  # live never invents evidence


def essence(node: NodeReport) -> tuple[object, ...]:
    """The diagnosis itself: statuses, components, root causes — not the evidence list.

    A simulated bundle holds observations no API client can make (the containerd
    config behind a crashed toolkit container); those only ever add evidence.
    """
    causes = [(rc.component, rc.cause, rc.title, rc.status) for rc in node.root_causes]
    return node.name, node.status, node.components, causes


def evidence(node: NodeReport) -> set[str]:
    return {e.source for rc in node.root_causes for e in rc.evidence}
