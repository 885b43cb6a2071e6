"""A pod whose sandbox the kubelet found changed more than once: the container runtime keeps
losing it (containerd running pods in another cgroup hierarchy than the kubelet's,
kubernetes/kubernetes#110177; RKE2's containerd v1.6.12-k3s1 dropping sandboxes on restart,
rancher/rke2#3723). A reboot's single change, and a sandbox that could not be created (its
CNI's refusal, judged by its own checks), are not that."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.diagnose import diagnose
from gpunode.model import NodeReport
from gpunode.sim import load_scenario
from gpunode.sim.build import build_world
from gpunode.sim.finalize import finalize
from gpunode.sim.writer import write

NODE = "gpu-wk-02"
_CHANGED = "Pod sandbox changed, it will be killed and re-created."


def _event(reason: str, message: str, count: int, kind: str = "Normal") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Event", "count": count, "type": kind, "reason": reason,
            "message": message, "metadata": {"name": f"my-test.{reason.lower()}", "namespace": "default"},
            "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": "my-test", "namespace": "default"},
            "firstTimestamp": "2025-05-20T08:26:00Z", "lastTimestamp": "2025-05-20T09:14:29Z",
            "source": {"component": "kubelet", "host": NODE}}


def _report(tmp: Path, events: list[dict[str, Any]]) -> NodeReport:
    world = build_world(load_scenario("falcon-ai"))
    finalize(world)
    bundle = write(world, tmp / "bundle")
    path = bundle / "cluster" / "events.json"
    listed = json.loads(path.read_text())
    listed["items"].extend(events)
    path.write_text(json.dumps(listed))
    (report,) = diagnose(load_bundle(bundle), read_node_observations, [NODE]).nodes
    return report


def test_a_sandbox_changed_again_is_the_runtime_s(tmp_path: Path) -> None:
    report = _report(tmp_path, [_event("SandboxChanged", _CHANGED, 2)])
    found = [(r.component, r.cause) for r in report.root_causes]
    assert found == [("container-runtime", "error_unclassified")]


def test_a_reboot_s_single_change_is_healthy(tmp_path: Path) -> None:
    assert _report(tmp_path, [_event("SandboxChanged", _CHANGED, 1)]).root_causes == ()


def test_a_sandbox_the_cni_refused_is_not_the_runtime_losing_it(tmp_path: Path) -> None:
    refused = _event("FailedCreatePodSandBox", "Failed to create pod sandbox: rpc error: code = Unknown "
                     'desc = failed to setup network for sandbox "3b80": plugin type="multus" failed (add): '
                     "bind: no such device", 9, "Warning")
    report = _report(tmp_path, [refused, _event("SandboxChanged", _CHANGED, 9)])
    assert "container-runtime" not in [r.component for r in report.root_causes]
