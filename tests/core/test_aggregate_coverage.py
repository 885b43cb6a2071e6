"""A ClusterPolicy that is only notReady because an operand's DaemonSet has fewer ready
pods than nodes it targets is explained by that DaemonSet, not a root cause of its own."""

from __future__ import annotations

import json
from pathlib import Path

from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.diagnose import diagnose
from gpunode.sim import build_bundle, load_scenario


def _edit(path: Path, change: object) -> None:
    data = json.loads(path.read_text())
    for item in data["items"]:
        change(item)  # type: ignore[operator]
    path.write_text(json.dumps(data))


def test_policy_not_ready_from_daemonset_coverage_is_not_a_root_cause(tmp_path: Path) -> None:
    out = build_bundle(load_scenario("falcon-ai"), tmp_path / "b")

    def short(ds: dict) -> None:  # type: ignore[type-arg]
        if ds["metadata"]["name"] == "nvidia-dcgm-exporter":
            ds["status"]["desiredNumberScheduled"] = ds["status"]["numberReady"] + 1

    def not_ready(policy: dict) -> None:  # type: ignore[type-arg]
        policy["status"]["state"] = "notReady"

    _edit(out / "cluster/daemonsets.json", short)
    _edit(out / "cluster/clusterpolicies.json", not_ready)
    report = diagnose(load_bundle(out), read_node_observations)
    assert report.cluster.root_causes == ()
    operator = next(c for c in report.cluster.components if c.component == "gpu-operator")
    assert operator.cause == "clusterpolicy_not_ready"
    assert operator.blocked_by == ("dcgm-exporter",)


def test_policy_not_ready_without_any_shortfall_stays_a_root_cause(tmp_path: Path) -> None:
    out = build_bundle(load_scenario("falcon-ai"), tmp_path / "b")
    _edit(out / "cluster/clusterpolicies.json", lambda p: p["status"].__setitem__("state", "notReady"))
    report = diagnose(load_bundle(out), read_node_observations)
    assert [rc.cause for rc in report.cluster.root_causes] == ["clusterpolicy_not_ready"]
