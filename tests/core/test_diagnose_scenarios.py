"""Every simulator scenario diagnoses as designed: healthy means no failure, each
fault yields exactly its component and cause as the root cause, with the
components above it blocked by it."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.diagnose import diagnose
from gpunode.kb import load_kb
from gpunode.model import Report, Status
from gpunode.sim import FAULTS, build_bundle, list_scenarios, load_scenario

FAULTY_NODE = "gpu-wk-02"
HEALTHY_NODE = "gpu-wk-01"
HEALTHY_SCENARIOS = [
    name for name, _ in list_scenarios() if name.startswith("falcon-ai") and "broken" not in name
]


@cache
def report_for(scenario: str, tmp_root: Path) -> Report:
    bundle = build_bundle(load_scenario(scenario), tmp_root / scenario)
    return diagnose(load_bundle(bundle), read_node_observations)


@pytest.fixture(scope="module")
def tmp_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("scenarios")


@pytest.mark.parametrize("scenario", HEALTHY_SCENARIOS)
def test_healthy_scenario_has_no_failure(scenario: str, tmp_root: Path) -> None:
    report = report_for(scenario, tmp_root)
    assert not report.has_failures, [
        (n.name, [(r.component, r.cause) for r in n.root_causes]) for n in report.nodes
    ] + [(r.component, r.cause) for r in report.cluster.root_causes]
    assert {n.name for n in report.nodes} == {"gpu-wk-01", "gpu-wk-02"}
    for node in report.nodes:
        assert node.status == Status.OK, [(c.component, c.status, c.summary) for c in node.components]


def _as_state(reported: str, code: str, decisive: object) -> str:
    """A fault whose cause is a state (a crash loop) is named, since issue 20, by the class of
    the decisive line its component wrote below that state; that answer is the state's."""
    kb = load_kb()
    if kb.get(code).state and reported.startswith("error_") and decisive is not None:
        return code
    return reported


def _fault_scenario(code: str) -> str:
    return "fault-" + code.replace("_", "-")


@pytest.mark.parametrize("code", sorted(FAULTS))
def test_fault_yields_exactly_its_root_cause(code: str, tmp_root: Path) -> None:
    fault = FAULTS[code]
    report = report_for(_fault_scenario(code), tmp_root)
    if fault.scope == "cluster":
        roots = report.cluster.root_causes
        named = [(r.component, _as_state(r.cause, code, r.decisive)) for r in roots]
        assert named == [(fault.component, code)]
        for node in report.nodes:
            assert not node.root_causes, (node.name, [(r.component, r.cause) for r in node.root_causes])
        return
    assert not report.cluster.root_causes, [(r.component, r.cause) for r in report.cluster.root_causes]
    nodes = {n.name: n for n in report.nodes}
    faulty = nodes[FAULTY_NODE]
    assert [(r.component, r.cause) for r in faulty.root_causes] == [(fault.component, code)]
    assert faulty.root_causes[0].evidence, "a root cause always shows its evidence"
    assert not nodes[HEALTHY_NODE].root_causes


@pytest.mark.parametrize("code", sorted(c for c, f in FAULTS.items() if f.scope == "node"))
def test_failures_above_the_root_cause_are_blocked_by_it(code: str, tmp_root: Path) -> None:
    fault = FAULTS[code]
    node = next(n for n in report_for(_fault_scenario(code), tmp_root).nodes if n.name == FAULTY_NODE)
    for comp in node.components:
        if comp.component != fault.component and comp.status.is_problem:
            assert comp.blocked_by == (fault.component,), (comp.component, comp.status, comp.summary)


def test_demo_cascade_driver_blocks_the_stack_above(tmp_root: Path) -> None:
    report = report_for("falcon-ai-broken", tmp_root)
    node = next(n for n in report.nodes if n.name == FAULTY_NODE)
    blocked = {c.component for c in node.components if c.blocked_by == ("driver",)}
    assert {"container-toolkit", "device-plugin", "dcgm-exporter"} <= blocked
    assert [g.nodes for g in report.groups] == [(FAULTY_NODE,)]
