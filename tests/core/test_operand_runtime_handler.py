"""An operand the GPU Operator renders with a RuntimeClass whose handler CRI-O does not have,
on a platform whose GPU stack hands GPUs to CRI-O through the toolkit's OCI hook only
(OpenShift): the operator's failure (NVIDIA/gpu-operator#175), not the operand's nor the
toolkit's; on another platform, or for a user's pod, not the operator's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.diagnose import diagnose
from gpunode.model import Report
from gpunode.sim import build_bundle, load_scenario

NODE = "gpu-wk-01"
#: CRI-O's refusal as NVIDIA/gpu-operator#175 quotes it (x1760 over 6h24m).
REFUSED = ("Failed to create pod sandbox: rpc error: code = Unknown desc = failed to find runtime handler "
           "nvidia from runtime list map[runc:0xc00044e460]")


@pytest.fixture(scope="module")
def falcon(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_bundle(load_scenario("falcon-ai"), tmp_path_factory.mktemp("falcon") / "bundle")


def _edit(root: Path, name: str) -> tuple[Path, dict[str, Any]]:
    path = root / "cluster" / f"{name}.json"
    doc: dict[str, Any] = json.loads(path.read_text())
    return path, doc


def refused_sandbox(falcon: Path, tmp_path: Path, *, runtime: str, message: str, pod_prefix: str,
                    openshift: bool = False, count: int = 1) -> Report:
    """The falcon bundle on ``runtime`` (OpenShift's node label where ``openshift``) with the
    first pod on NODE named ``pod_prefix...`` asking RuntimeClass nvidia and its sandbox
    refused with ``message`` ``count`` times."""
    root = tmp_path / "b"
    shutil.copytree(falcon, root)
    path, nodes = _edit(root, "nodes")
    for node in nodes["items"]:
        node["status"]["nodeInfo"]["containerRuntimeVersion"] = runtime
        if openshift:
            node["metadata"]["labels"]["node.openshift.io/os_id"] = "rhcos"
    path.write_text(json.dumps(nodes))
    path, pods = _edit(root, "pods")
    pod = next(p for p in pods["items"]
               if p["metadata"]["name"].startswith(pod_prefix) and p["spec"].get("nodeName") == NODE)
    pod["spec"]["runtimeClassName"] = "nvidia"
    path.write_text(json.dumps(pods))
    meta = pod["metadata"]
    path, events = _edit(root, "events")
    collected = json.loads((root / "manifest.json").read_text())["collected_at"]
    events["items"].append({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": f"{meta['name']}.17f", "namespace": meta["namespace"]},
        "involvedObject": {"kind": "Pod", "namespace": meta["namespace"], "name": meta["name"]},
        "reason": "FailedCreatePodSandBox", "message": message, "type": "Warning", "count": count,
        "source": {"component": "kubelet", "host": NODE}, "lastTimestamp": collected})
    path.write_text(json.dumps(events))
    return diagnose(load_bundle(root), read_node_observations)


def _refused(falcon: Path, tmp_path: Path, *, openshift: bool, pod_prefix: str) -> Report:
    """Refused by CRI-O as NVIDIA/gpu-operator#175 shows it."""
    return refused_sandbox(falcon, tmp_path, runtime="cri-o://1.31.3", message=REFUSED, pod_prefix=pod_prefix,
                           openshift=openshift, count=1760)


def cluster_roots(report: Report) -> list[tuple[str, str]]:
    return [(r.component, r.cause) for r in report.cluster.root_causes]


def test_an_operand_asking_a_handler_openshift_never_has_is_the_operators(falcon: Path,
                                                                          tmp_path: Path) -> None:
    report = _refused(falcon, tmp_path, openshift=True, pod_prefix="nvidia-device-plugin-daemonset")
    assert ("gpu-operator", "error_not_found") in cluster_roots(report), cluster_roots(report)


def test_the_same_refusal_on_a_plain_crio_node_is_not_the_operators(falcon: Path, tmp_path: Path) -> None:
    # look-alike: where the toolkit writes CRI-O's nvidia handler, its absence is the
    # toolkit's or the runtime's, judged on the node
    report = _refused(falcon, tmp_path, openshift=False, pod_prefix="nvidia-device-plugin-daemonset")
    assert not any(c == "gpu-operator" for c, _ in cluster_roots(report)), cluster_roots(report)


def test_a_users_pod_asking_that_handler_on_openshift_is_not_the_operators(falcon: Path,
                                                                          tmp_path: Path) -> None:
    # look-alike (NVIDIA/gpu-operator#1298): the user's own spec asks for the handler
    report = _refused(falcon, tmp_path, openshift=True, pod_prefix=workload_prefix(falcon))
    assert not any(c == "gpu-operator" for c, _ in cluster_roots(report)), cluster_roots(report)


def workload_prefix(falcon: Path) -> str:
    """The name of a GPU workload pod on NODE (not a stack pod)."""
    pods = json.loads((falcon / "cluster" / "pods.json").read_text())["items"]
    return next(p["metadata"]["name"] for p in pods if p["spec"].get("nodeName") == NODE
                and p["metadata"]["namespace"] not in ("gpu-operator", "kube-system")
                and any("nvidia.com/gpu" in c.get("resources", {}).get("limits", {})
                        for c in p["spec"]["containers"]))
