"""Skipped is unknown: a list item gpunode skipped as malformed never becomes a verdict.

The loader keeps the rest of a list whose item does not decode (bundle.load) and now
remembers who the skipped items were; what rests on such an item being absent (a node's
CSINode: ``csi_not_registered``; an NFD pod or label: ``nfd_not_deployed``) is ``unknown``
with the reason, never ``failed`` (gpunode.doubt). The general rule is tested by damaging
every item of every list of two simulated clusters, one at a time: no component becomes
failed or degraded that was not.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpunode import sim
from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.cli import build_report
from gpunode.doubt import Doubt, settle
from gpunode.facts import MAX_SKIPPED_NAMES, SkippedItems
from gpunode.model import Evidence, Finding, Report, Status
from gpunode.validate.runner import validate_facts
from inprocess import as_a_fresh_process

PROBLEMS = ("failed", "degraded")
Damage = Callable[[dict[str, Any]], None]


def _spec_garbage(item: dict[str, Any]) -> None:
    """Still named: a field the engine reads has the wrong type."""
    item["spec" if "spec" in item else "status"] = "garbage"


def _anonymous(item: dict[str, Any]) -> None:
    """Not even its name can be read."""
    item["metadata"] = "garbage"


@pytest.fixture(scope="module")
def clusters(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("sims")
    return {name: sim.build_bundle(sim.load_scenario(name), root / name)
            for name in ("falcon-ai", "falcon-ai-broken", "fault-nfd-not-deployed")}


def _damaged(src: Path, dest: Path, plural: str, index: int, damage: Damage) -> Path:
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(src, dest)
    path = dest / "cluster" / f"{plural}.json"
    doc = json.loads(path.read_text())
    damage(doc["items"][index])
    path.write_text(json.dumps(doc))
    return dest


def _statuses(report: Report) -> dict[tuple[str, str], tuple[Status, str]]:
    out = {("cluster", c.component): (c.status, c.summary) for c in report.cluster.components}
    out.update({(n.name, c.component): (c.status, c.summary) for n in report.nodes for c in n.components})
    return out


def _csinode_index(bundle: Path, node: str) -> int:
    items = json.loads((bundle / "cluster" / "csinodes.json").read_text())["items"]
    return next(i for i, item in enumerate(items) if item["metadata"]["name"] == node)


# --- what the loader remembers ------------------------------------------------------------------


def test_the_loader_remembers_who_was_skipped(clusters: dict[str, Path], tmp_path: Path) -> None:
    src = clusters["falcon-ai"]
    bundle = _damaged(src, tmp_path / "b", "csinodes", _csinode_index(src, "gpu-wk-01"), _spec_garbage)
    pods = json.loads((bundle / "cluster" / "pods.json").read_text())
    on_node = next(i for i, p in enumerate(pods["items"]) if p["spec"].get("nodeName") == "gpu-wk-02")
    pods["items"][on_node]["status"] = "garbage"
    (bundle / "cluster" / "pods.json").write_text(json.dumps(pods))
    facts = load_bundle(bundle)
    csinodes, skipped_pods = facts.skipped["csinodes"], facts.skipped["pods"]
    assert (csinodes.count, csinodes.names, csinodes.named) == (1, {"gpu-wk-01"}, True)
    assert csinodes.first.startswith("item ") and "$.spec" in csinodes.first
    assert skipped_pods.nodes == {"gpu-wk-02"} and skipped_pods.placed
    assert skipped_pods.may_be_on("gpu-wk-02") and not skipped_pods.may_be_on("gpu-wk-01")
    assert set(facts.skipped) == {"csinodes", "pods"}


def test_an_item_without_a_legible_name_may_be_any() -> None:
    record = SkippedItems(count=1, named=False, placed=False)
    assert record.may_be("anything") and record.may_be_on("any-node")
    full = SkippedItems(names={f"n{i}" for i in range(MAX_SKIPPED_NAMES)})
    assert not full.may_be("other")


# --- csi-node: the case -------------------------------------------------------------------


@pytest.mark.parametrize("damage", [_spec_garbage, _anonymous], ids=["named", "anonymous"])
def test_a_skipped_csinode_makes_csi_node_unknown(damage: Damage, clusters: dict[str, Path],
                                                  tmp_path: Path) -> None:
    src = clusters["falcon-ai"]
    bundle = _damaged(src, tmp_path / "b", "csinodes", _csinode_index(src, "gpu-wk-01"), damage)
    report = build_report(bundle, None)
    now = _statuses(report)
    status, summary = now[("gpu-wk-01", "csi-node")]
    assert status == Status.UNKNOWN, summary
    assert "skipped as malformed (cluster/csinodes.json item " in summary
    assert "whether a CSI driver registered here is unknown" in summary
    if damage is _spec_garbage:
        assert summary.startswith("CSINode gpu-wk-01 was skipped as malformed")
    assert now[("gpu-wk-02", "csi-node")][0] == Status.OK  # its own CSINode was read
    assert not any(rc.cause == "csi_not_registered" for n in report.nodes for rc in n.root_causes)
    assert not report.has_failures


def test_a_csinode_read_without_drivers_still_fails(clusters: dict[str, Path], tmp_path: Path) -> None:
    """The doubt is about the skipped item only: another node's empty CSINode is a real failure."""
    src = clusters["falcon-ai"]
    bundle = _damaged(src, tmp_path / "b", "csinodes", _csinode_index(src, "gpu-wk-01"), _spec_garbage)
    path = bundle / "cluster" / "csinodes.json"
    doc = json.loads(path.read_text())
    doc["items"][_csinode_index(src, "gpu-wk-02")]["spec"]["drivers"] = []
    path.write_text(json.dumps(doc))
    now = _statuses(build_report(bundle, None))
    assert now[("gpu-wk-01", "csi-node")][0] == Status.UNKNOWN
    assert now[("gpu-wk-02", "csi-node")] == (Status.FAILED, "CSI driver is not registered on this node")


def test_validate_csi_registered_is_unknown_for_the_skipped_node_only(clusters: dict[str, Path],
                                                                      tmp_path: Path) -> None:
    src = clusters["falcon-ai"]
    bundle = _damaged(src, tmp_path / "b", "csinodes", _csinode_index(src, "gpu-wk-01"), _spec_garbage)

    def csi() -> tuple[str, str]:
        report = validate_facts(load_bundle(bundle), read_node_observations, categories=("storage",))
        check = next(c for c in report.checks() if c.id == "storage.csi-registered")
        return check.verdict.value, check.summary

    verdict, summary = csi()
    assert verdict == "unknown" and summary.startswith("CSINode of gpu-wk-01 skipped as malformed"), summary
    path = bundle / "cluster" / "csinodes.json"
    doc = json.loads(path.read_text())
    doc["items"][_csinode_index(src, "gpu-wk-02")]["spec"]["drivers"] = []
    path.write_text(json.dumps(doc))
    verdict, summary = csi()
    assert verdict == "fail", summary
    assert summary.startswith("not registered on gpu-wk-02; CSINode of gpu-wk-01 skipped as malformed")


def test_validate_a_failing_check_on_a_list_with_skipped_items_is_unknown(clusters: dict[str, Path],
                                                                          tmp_path: Path) -> None:
    """The general rule of the validate runner: the default StorageClass skipped reads as none."""
    src = clusters["falcon-ai"]
    classes = json.loads((src / "cluster" / "storageclasses.json").read_text())["items"]
    assert len(classes) == 1
    bundle = _damaged(src, tmp_path / "b", "storageclasses", 0, _anonymous)
    report = validate_facts(load_bundle(bundle), read_node_observations, categories=("storage",))
    check = next(c for c in report.checks() if c.id == "storage.default-class")
    assert check.verdict.value == "unknown", check.summary
    assert check.summary.startswith("not judged: cluster/storageclasses.json: 1 item skipped as malformed")
    assert "(it would say: " in check.summary


# --- NFD: every pod and every Node label ----------------------------------------------------------


def test_nfd_not_deployed_is_unknown_when_a_pod_was_skipped(clusters: dict[str, Path],
                                                            tmp_path: Path) -> None:
    src = clusters["fault-nfd-not-deployed"]
    assert _statuses(build_report(src, None))[("cluster", "nfd")][0] == Status.FAILED
    bundle = _damaged(src, tmp_path / "b", "pods", 0, _spec_garbage)
    status, summary = _statuses(build_report(bundle, None))[("cluster", "nfd")]
    assert status == Status.UNKNOWN
    assert summary.startswith("1 item of cluster/pods.json (item 0: ") and "may include an NFD pod" in summary


# --- the general rule ------------------------------------------------------------------------------


def _items_to_damage(bundle: Path) -> list[tuple[str, int]]:
    """Every item of every list, but of pods only those on one GPU node and the cluster's own."""
    out = []
    for path in sorted((bundle / "cluster").glob("*.json")):
        if path.stem in ("version", "events"):
            continue
        items = json.loads(path.read_text()).get("items", [])
        for index, item in enumerate(items):
            node = (item.get("spec") or {}).get("nodeName") if path.stem == "pods" else None
            if path.stem != "pods" or node in (None, "gpu-wk-02"):
                out.append((path.stem, index))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("cluster", ["falcon-ai", "falcon-ai-broken"])
def test_no_skipped_item_makes_anything_fail(cluster: str, clusters: dict[str, Path], tmp_path: Path) -> None:
    """Damage each item in turn (named and anonymous, alternately): no component is failed or
    degraded that was not without the damage."""
    src = clusters[cluster]
    before = {k: s for k, (s, _) in _statuses(build_report(src, None)).items()}
    problems = []
    # One copy of the cluster, one list damaged at a time and put back after its report: the
    # same bundles as a fresh copy per item, without copying every node's files 67 times.
    bundle = shutil.copytree(src, tmp_path / "b")
    for n, (plural, index) in enumerate(_items_to_damage(src)):
        damage = _spec_garbage if n % 2 else _anonymous
        path = bundle / "cluster" / f"{plural}.json"
        doc = json.loads(path.read_text())
        damage(doc["items"][index])
        path.write_text(json.dumps(doc))
        try:
            as_a_fresh_process()  # each damaged bundle as its own command reads it (no full collection first)
            statuses = _statuses(build_report(bundle, None))
        finally:
            shutil.copyfile(src / "cluster" / f"{plural}.json", path)
        for key, (status, summary) in statuses.items():
            if status.value in PROBLEMS and before.get(key, Status.UNKNOWN).value not in PROBLEMS:
                problems.append(f"{plural}[{index}] {damage.__name__}: {key} {status.value}: {summary}")
    assert problems == []


# --- settle itself ---------------------------------------------------------------------------------


class _J:
    def __init__(self, *findings: Finding) -> None:
        self.findings = list(findings)


def test_settle_keeps_problems_with_other_evidence() -> None:
    probe = "nodes/n/cmd/gpunode-probe.json"
    doubted = Finding("gpu-hardware", Status.FAILED, "xid_154_recovery_action",
                      (Evidence(probe, "GPU 0: 8"),))
    real = Finding("gpu-hardware", Status.FAILED, "uncorrectable_ecc", (Evidence(probe, "GPU 1: 3 DBE"),))
    seen = Finding("gpu-hardware", Status.OK, "", (Evidence(probe, "8x H100"),), {"summary": "8x H100"})
    smi = Finding("gpu-hardware", Status.FAILED, "xid_154_recovery_action", (Evidence("nodes/n/cmd/x", "r"),))
    doubt = Doubt(frozenset({"xid_154_recovery_action"}), "GPU 0 recovery action '8' unknown", probe)
    judged = {"gpu-hardware": _J(doubted, real, seen, smi), "driver": _J(seen)}
    settle(judged, [doubt])
    kept = judged["gpu-hardware"].findings
    assert real in kept and smi in kept and doubted not in kept and seen not in kept
    assert [f.context["summary"] for f in kept if f.status == Status.UNKNOWN] == [doubt.reason]
    assert judged["driver"].findings == [seen]  # nothing to explain there: untouched


def test_settle_makes_a_doubted_component_unknown() -> None:
    doubted = Finding("csi-node", Status.FAILED, "csi_not_registered",
                      (Evidence("csinode/n spec.drivers", "none"),))
    pod_ok = Finding("csi-node", Status.OK, "", (), {"summary": "3/3 ready"})
    judged = {"csi-node": _J(doubted, pod_ok)}
    settle(judged, [Doubt(frozenset({"csi_not_registered"}), "CSINode n was skipped as malformed")])
    (only,) = judged["csi-node"].findings
    assert only.status == Status.UNKNOWN and only.context["summary"] == "CSINode n was skipped as malformed"
    assert only.evidence[1:] == doubted.evidence
