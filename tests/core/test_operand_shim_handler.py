"""Docker's CRI shim (dockershim, cri-dockerd) serves only Docker's default runtime and
refuses any RuntimeClass handler ('RuntimeHandler "nvidia" not supported',
pkg/kubelet/dockershim/docker_sandbox.go): an operand the GPU Operator rendered with
runtimeClassName on such a node is the operator's failure, on any platform, not the
operand's, which only suffered it; a user's pod asking the handler is no failure of the
stack; containerd's refusal of a handler it was never given stays the toolkit's.

Public lines: NVIDIA/gpu-operator#236 (the operator's operands on docker://19.3.15,
quoting the shim's source), NVIDIA/gpu-operator#250 (nvidia-device-plugin-daemonset:
'Failed create pod sandbox: rpc error: code = Unknown desc = RuntimeHandler "nvidia" not
supported'); look-alike NVIDIA/gpu-operator#413 and #759 (containerd: 'failed to get
sandbox runtime: no runtime for "nvidia" is configured', the toolkit's handler missing).
"""

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
#: NVIDIA/gpu-operator#250, the device plugin's sandbox on a Docker node.
SHIM = 'Failed create pod sandbox: rpc error: code = Unknown desc = RuntimeHandler "nvidia" not supported'
#: NVIDIA/gpu-operator#236, as the kubelet's event quotes it there.
SHIM_236 = ('Failed to create pod sandbox: rpc error: code = Unknown desc = '
            'RuntimeHandler "nvidia" not supported')
#: NVIDIA/gpu-operator#413: containerd without the toolkit's handler (look-alike).
CONTAINERD = ('Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: '
              'no runtime for "nvidia" is configured')


@pytest.fixture(scope="module")
def falcon(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_bundle(load_scenario("falcon-ai"), tmp_path_factory.mktemp("falcon") / "bundle")


def _edit(root: Path, name: str) -> tuple[Path, dict[str, Any]]:
    path = root / "cluster" / f"{name}.json"
    doc: dict[str, Any] = json.loads(path.read_text())
    return path, doc


def _refused(falcon: Path, tmp_path: Path, message: str, runtime: str, pod_prefix: str) -> Report:
    """The falcon bundle on ``runtime`` with the first pod on NODE named ``pod_prefix...``
    asking RuntimeClass nvidia and its sandbox refused with ``message``."""
    root = tmp_path / "b"
    shutil.copytree(falcon, root)
    path, nodes = _edit(root, "nodes")
    for node in nodes["items"]:
        node["status"]["nodeInfo"]["containerRuntimeVersion"] = runtime
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
        "metadata": {"name": f"{meta['name']}.18a", "namespace": meta["namespace"]},
        "involvedObject": {"kind": "Pod", "namespace": meta["namespace"], "name": meta["name"]},
        "reason": "FailedCreatePodSandBox", "message": message, "type": "Warning", "count": 25,
        "source": {"component": "kubelet", "host": NODE}, "lastTimestamp": collected})
    path.write_text(json.dumps(events))
    return diagnose(load_bundle(root), read_node_observations)


def _cluster_roots(report: Report) -> list[tuple[str, str]]:
    return [(r.component, r.cause) for r in report.cluster.root_causes]


def _workload_prefix(falcon: Path) -> str:
    """The name of a GPU workload pod on NODE (not a stack pod)."""
    pods = json.loads((falcon / "cluster" / "pods.json").read_text())["items"]
    return next(p["metadata"]["name"] for p in pods if p["spec"].get("nodeName") == NODE
                and p["metadata"]["namespace"] not in ("gpu-operator", "kube-system")
                and any("nvidia.com/gpu" in c.get("resources", {}).get("limits", {})
                        for c in p["spec"]["containers"]))


@pytest.mark.parametrize("message", [SHIM, SHIM_236])
def test_an_operand_refused_by_dockers_shim_is_the_operators(falcon: Path, tmp_path: Path,
                                                             message: str) -> None:
    report = _refused(falcon, tmp_path, message, "docker://19.3.15", "nvidia-device-plugin-daemonset")
    assert any(c == "gpu-operator" for c, _ in _cluster_roots(report)), _cluster_roots(report)


def test_a_users_pod_refused_by_dockers_shim_is_not_the_operators(falcon: Path, tmp_path: Path) -> None:
    # look-alike (sgl-project/sglang#5515's shape): the user's own spec asks for the handler
    report = _refused(falcon, tmp_path, SHIM, "docker://19.3.15", _workload_prefix(falcon))
    assert not any(c == "gpu-operator" for c, _ in _cluster_roots(report)), _cluster_roots(report)


def test_containerd_without_the_handler_is_not_the_operators(falcon: Path, tmp_path: Path) -> None:
    # look-alike (NVIDIA/gpu-operator#413): containerd lacks the handler the toolkit writes
    report = _refused(falcon, tmp_path, CONTAINERD, "containerd://1.7.24", "nvidia-device-plugin-daemonset")
    assert not any(c == "gpu-operator" for c, _ in _cluster_roots(report)), _cluster_roots(report)
