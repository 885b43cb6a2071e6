"""Wedges: each kind is named with its age, owner and unwedging command; a transition still
within its normal time is not a finding."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fleetsim import build, diagnose, edit_list, edit_node, scenario, uniform

from gpunode.bundle.load import load_bundle
from gpunode.fleet import wedges
from gpunode.fleet.profile import Observed
from gpunode.model import Report

NOW = 1747732500  # 2025-05-20T09:15:00Z, the simulator's collection time


def _iso(seconds_ago: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(NOW - seconds_ago, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _node_event(node: str, state: str, seconds_ago: int) -> dict[str, Any]:
    """The upgrade controller's event, as k8s-operator-libs records it on the Node."""
    when = _iso(seconds_ago)
    return {
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": f"{node}.17f0a{seconds_ago:x}", "namespace": "default"},
        "involvedObject": {"kind": "Node", "name": node, "apiVersion": "v1"},
        "reason": "GPUDriverUpgrade", "type": "Normal", "count": 1,
        "message": f"Successfully updated node state label to {state}",
        "firstTimestamp": when, "lastTimestamp": when, "source": {"component": "gpu-operator"},
    }


def _labels(bundle: Path, node: str, **labels: str) -> None:
    edit_node(bundle, node, lambda n: n["metadata"]["labels"].update(labels))


@pytest.fixture(scope="module")
def wedged(tmp_path_factory: pytest.TempPathFactory) -> tuple[Report, Path]:
    bundle = build(scenario(uniform(12)), tmp_path_factory.mktemp("wedged"))
    state = "nvidia.com/gpu-driver-upgrade-state"
    _labels(bundle, "gpu-wk-01", **{state: "upgrade-failed"})
    _labels(bundle, "gpu-wk-02", **{state: "drain-required"})  # event 3 h ago: stuck
    _labels(bundle, "gpu-wk-03", **{state: "drain-required"})  # event 5 min ago: in progress
    _labels(bundle, "gpu-wk-04", **{"nvidia.com/mig.config.state": "failed",
                                   "nvidia.com/mig.config": "all-1g.10gb"})
    _labels(bundle, "gpu-wk-05", **{"nvidia.com/mig.config.state": "success",
                                   "nvidia.com/gpu.deploy.device-plugin": "paused-for-mig-change",
                                   "nvidia.com/gpu.deploy.dcgm-exporter": "paused-for-mig-change"})
    _labels(bundle, "gpu-wk-06", **{"nvidia.com/gpu.count": "7"})  # GFD labelled 7 days ago: stale
    _labels(bundle, "gpu-wk-07", **{"nvidia.com/gpu.count": "7", "nvidia.com/gfd.timestamp": str(NOW - 120)})
    edit_list(bundle, "events", lambda items: items.extend([
        _node_event("gpu-wk-02", "drain-required", 3 * 3600),
        _node_event("gpu-wk-03", "drain-required", 300),
    ]))

    def _deleting(items: list[dict[str, Any]]) -> None:
        for pod in items:
            name, node = pod["metadata"]["name"], pod["spec"].get("nodeName")
            if name.startswith("nvidia-dcgm-exporter") and node == "gpu-wk-08":
                pod["metadata"] |= {"deletionTimestamp": _iso(2 * 3600), "deletionGracePeriodSeconds": 30}
            if name.startswith("nvidia-dcgm-exporter") and node == "gpu-wk-09":
                pod["metadata"] |= {"deletionTimestamp": _iso(20), "deletionGracePeriodSeconds": 30}

    edit_list(bundle, "pods", _deleting)
    return diagnose(bundle), bundle


def _by_node(report: Report) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for w in report.fleet.wedges:
        out.setdefault(w.node, []).append(w.kind)
    return out


def test_each_wedge_kind_is_named(wedged: tuple[Report, Path]) -> None:
    found = _by_node(wedged[0])
    assert found == {
        "gpu-wk-01": ["driver_upgrade_failed"],
        "gpu-wk-02": ["driver_upgrade_stuck"],
        "gpu-wk-04": ["mig_config_failed"],
        "gpu-wk-05": ["paused_for_mig_change"],
        "gpu-wk-06": ["labels_stale"],
        "gpu-wk-08": ["pod_stuck_terminating"],
    }


def test_transitions_in_progress_are_not_findings(wedged: tuple[Report, Path]) -> None:
    assert not {"gpu-wk-03", "gpu-wk-07", "gpu-wk-09"} & set(_by_node(wedged[0]))


def test_a_wedge_has_age_owner_and_unwedging_command(wedged: tuple[Report, Path]) -> None:
    by_kind = {w.kind: w for w in wedged[0].fleet.wedges}
    stuck = by_kind["driver_upgrade_stuck"]
    assert (stuck.state, stuck.age, stuck.age_seconds) == ("drain-required", "3h", 3 * 3600)
    assert "upgrade controller" in stuck.owner
    assert any("nvidia.com/gpu-driver-upgrade-state=upgrade-required" in c for c in stuck.unwedge)
    pod = by_kind["pod_stuck_terminating"]
    assert pod.object.startswith("pod/gpu-operator/nvidia-dcgm-exporter") and pod.age == "2h"
    assert any("--grace-period=0 --force" in c for c in pod.unwedge)
    paused = by_kind["paused_for_mig_change"]
    assert any("nvidia.com/gpu.deploy.device-plugin=true" in c and "dcgm-exporter=true" in c
               for c in paused.unwedge)
    labels = by_kind["labels_stale"]
    assert labels.owner == "GPU Feature Discovery" and labels.age.startswith("7d")


def test_upgrade_state_without_its_event_is_as_old_as_the_events_kept(tmp_path: Path) -> None:
    """No event for the state among events reaching back 2 h: held for over 2 h."""
    bundle = build(scenario(uniform(2)), tmp_path)
    _labels(bundle, "gpu-wk-01", **{"nvidia.com/gpu-driver-upgrade-state": "pod-restart-required"})
    other = _node_event("gpu-wk-02", "upgrade-done", 2 * 3600)
    edit_list(bundle, "events", lambda items: items.append(other))
    found = diagnose(bundle).fleet.wedges
    assert [(w.node, w.kind, w.age) for w in found] == [("gpu-wk-01", "driver_upgrade_stuck", "over 2h")]


def test_mig_change_stuck_and_in_progress(tmp_path: Path) -> None:
    """The MIG manager's own log says when the change began."""
    bundle = build(scenario(uniform(2)), tmp_path)
    for node in ("gpu-wk-01", "gpu-wk-02"):
        _labels(bundle, node, **{"nvidia.com/mig.config.state": "pending",
                                 "nvidia.com/mig.config": "all-1g.10gb"})
    pods = json.loads((bundle / "cluster" / "pods.json").read_text())["items"]
    for node, ago in (("gpu-wk-01", 3600), ("gpu-wk-02", 240)):
        pod = next(p for p in pods if p["spec"].get("nodeName") == node
                   and p["metadata"]["name"].startswith("nvidia-mig-manager"))
        meta = pod["metadata"]
        log = bundle / "logs" / meta["namespace"] / meta["name"] / "nvidia-mig-manager.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(f'time="{_iso(ago)}" level=info msg="Updating to MIG config: all-1g.10gb"\n'
                       "Getting current value of the 'nvidia.com/gpu.deploy.device-plugin' node label\n")
    found = diagnose(bundle).fleet.wedges
    assert [(w.node, w.kind, w.age) for w in found] == [("gpu-wk-01", "mig_config_stuck", "1h")]


def test_stale_validation_markers_after_the_normal_time(tmp_path: Path) -> None:
    facts = load_bundle(build(scenario(uniform(2)), tmp_path))
    old = Observed(stale_markers=("driver-ready", "toolkit-ready"), driver_loaded_at=NOW - 3600)
    fresh = Observed(stale_markers=("driver-ready",), driver_loaded_at=NOW - 60)
    found = wedges.find(facts, ["gpu-wk-01", "gpu-wk-02"], {"gpu-wk-01": old, "gpu-wk-02": fresh})
    assert [(w.node, w.kind, w.state, w.age) for w in found] == [
        ("gpu-wk-01", "validation_marker_stale", "driver-ready, toolkit-ready", "1h")]
    assert found[0].owner == "GPU Operator validator"
