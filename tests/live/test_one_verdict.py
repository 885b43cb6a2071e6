"""One verdict wherever it is computed (issue 22, item 2): every simulator scenario is judged
live (through the test API server, list-first as ``diagnose`` collects by default, and with
``--deep``), from its bundle, and by ``validate`` on both, and the answers agree.

- diagnose live (both ways) and offline name the same root causes (node, component, cause) and
  give every node the same problem status; a node without a root cause is ``ok`` live (judged
  from the cluster lists, its unread files a note), never ``unknown``. Link faults (NVLink,
  InfiniBand/RoCE, the fabric) show only in a node's own files: a list-first run reads them on
  every node whose lists show such links (``gpunode.collect.plan.link_nodes``), so it gives
  the offline verdict too;
- validate offline and live reach the same readiness (ready or not) and no check passes one
  way and fails or warns the other; a check may be ``unknown`` one way only where that way
  cannot observe its data (a node with no running pod to exec in, live), and the two checks
  about the endpoint the client reached (``ENDPOINT_CHECKS``) are left out;
- validate's own diagnosis names the root causes diagnose names, and every failing check is
  grouped under the root causes of its own nodes;
- with ``--deep`` (every GPU node's extras, as ``--all-nodes`` fetches them without a
  selector) the whole diagnosis is the bundle's: the cluster section, each node's statuses,
  components and root causes, the groups, and no evidence the bundle does not hold (a
  simulated bundle holds observations no API client can make: those only add evidence).

One server per scenario; the scenarios run in this one process, each command as if in a
fresh one (``inprocess.as_a_fresh_process``: no full collection over the test session's
objects before each report). ``make check`` runs the
scenarios of ``QUICK`` (a broken driver and a link fault only node files show); ``make test``
runs every one.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from gpunode import sim
from gpunode.apiserver import serve_bundle
from gpunode.cli import build_report
from gpunode.collect import collect_bundle
from gpunode.model import PROBLEMS, NodeReport, Report, Status
from gpunode.report.groups import group_failures
from gpunode.validate.service import ValidateRequest, validate
from gpunode.validation import ClusterVerdict, ValidationReport, Verdict
from inprocess import as_a_fresh_process

#: About the endpoint the client reached (loopback here), not about the cluster.
ENDPOINT_CHECKS = frozenset({"infra.api-reachable", "infra.api-load-balanced"})
NOT_OBSERVED = frozenset({Verdict.UNKNOWN, Verdict.SKIP})
SCENARIOS = [name for name, _ in sim.list_scenarios() if name != "scale-5000"]
#: The scenarios ``make check`` runs; ``make test`` runs every one.
QUICK = frozenset({"falcon-ai-broken", "fault-nvlink-down"})

RootKey = tuple[str, str, str]


def roots(report: Report) -> set[RootKey]:
    out = {("(cluster)", rc.component, rc.cause) for rc in report.cluster.root_causes}
    return out | {(n.name, rc.component, rc.cause) for n in report.nodes for rc in n.root_causes}


def problem_status(report: Report) -> dict[str, bool]:
    return {n.name: n.status in PROBLEMS for n in report.nodes}


def verdicts(report: ValidationReport) -> dict[str, Verdict]:
    return {c.id: c.verdict for c in report.checks() if c.id not in ENDPOINT_CHECKS}


def ready(report: ValidationReport) -> bool:
    return report.verdict != ClusterVerdict.NOT_READY


def essence(node: NodeReport) -> tuple[object, ...]:
    """The diagnosis itself: statuses, components, root causes; not the evidence list."""
    causes = [(rc.component, rc.cause, rc.title, rc.status) for rc in node.root_causes]
    return node.name, node.status, node.components, causes


def evidence(node: NodeReport) -> set[str]:
    return {e.source for rc in node.root_causes for e in rc.evidence}


def same_diagnosis(live: Report, offline: Report) -> None:
    """Every node's extras read: the bundle's whole diagnosis, never evidence it lacks."""
    assert live.cluster == offline.cluster
    assert [essence(n) for n in live.nodes] == [essence(n) for n in offline.nodes]
    assert live.groups == offline.groups
    for mine, theirs in zip(live.nodes, offline.nodes, strict=True):
        assert evidence(mine) <= evidence(theirs)  # live never invents evidence


@pytest.mark.parametrize("scenario", [pytest.param(n, marks=[] if n in QUICK else [pytest.mark.slow])
                                      for n in SCENARIOS])
def test_the_same_verdict_live_offline_and_in_validate(scenario: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from gpunode.validate import live as live_checks

    # the second DCGM scrape waits for the exporter's interval; the test server's counters
    # advance on every scrape, so no wait is needed here
    monkeypatch.setattr(live_checks, "time", SimpleNamespace(monotonic=time.monotonic, sleep=lambda _s: None))
    bundle = sim.build_bundle(sim.load_scenario(scenario), tmp_path / "bundle")
    offline = build_report(bundle, None)
    as_a_fresh_process()
    checked_offline = validate(ValidateRequest(bundle=bundle, quiet=True, with_diagnosis=True))
    with serve_bundle(bundle) as server:
        as_a_fresh_process()
        collected = collect_bundle(tmp_path / "suspect", kubeconfig=server.kubeconfig_path, quiet=True)
        listed = build_report(collected.path, None, reuse=collected.reuse)  # list-first, the default
        # validate --deep collects every GPU node's extras as diagnose --deep does (one
        # collect_bundle); its bundle, kept in --output-dir, is the --deep pass
        as_a_fresh_process()
        checked_live = validate(ValidateRequest(kubeconfig=server.kubeconfig_path, quiet=True,
                                                scrape_interval_s=0, extras="deep",
                                                output_dir=tmp_path / "deep"))
    manifest = json.loads((checked_live.bundle / "manifest.json").read_text())
    assert manifest["extras_policy"] == "deep" and not manifest["partial"], manifest["warnings"]
    as_a_fresh_process()
    deep = build_report(checked_live.bundle, None)
    for extras, live in (("suspect", listed), ("deep", deep)):
        assert roots(live) == roots(offline), (extras, roots(live) ^ roots(offline))
        if extras == "deep":
            same_diagnosis(live, offline)
        assert problem_status(live) == problem_status(offline), extras
        unknown = [n.name for n in live.nodes if not n.root_causes and n.status == Status.UNKNOWN]
        assert not unknown, f"{extras}: judged from the lists yet unknown: {unknown}"

    assert checked_offline.diagnosis is not None and roots(checked_offline.diagnosis) == roots(offline)
    assert ready(checked_live.report) == ready(checked_offline.report), (
        checked_live.report.verdict, checked_offline.report.verdict)
    before, after = verdicts(checked_offline.report), verdicts(checked_live.report)
    differ = {cid: (before[cid].value, after.get(cid, Verdict.SKIP).value) for cid in before
              if before[cid] != after.get(cid, Verdict.SKIP)
              and not {before[cid], after.get(cid, Verdict.SKIP)} & NOT_OBSERVED}
    assert not differ, f"offline vs live: {differ}"

    by_node = {n.name: {(rc.component, rc.cause) for rc in n.root_causes} for n in offline.nodes}
    for group in group_failures(checked_offline.report, checked_offline.diagnosis):
        for check in group.checks:
            for node in check.nodes:
                assert by_node.get(node, set()) == set(group.causes), (group.headline(), check.id, node)
