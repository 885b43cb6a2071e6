"""A GPU pod's two NVIDIA env variables, collected and nothing else of its env: a live
collection from the test API server of a pod whose container sets secrets beside
NVIDIA_VISIBLE_DEVICES (literal) and NVIDIA_DRIVER_CAPABILITIES (valueFrom) keeps the literal
one with its value, the valueFrom one by name only (its value is not known), and no other
variable; the loaded bundle reads them (gpunode.podenv). A bundle without env (older
collectors) loads as before and means not known."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from livehelpers import read_list

from gpunode.apiserver import serve_bundle
from gpunode.bundle.load import load_bundle
from gpunode.collect import collect_bundle
from gpunode.podenv import NvidiaEnv, nvidia_env

MINI = Path(__file__).parent / "fixtures" / "mini"
SECRET = "s3cr3t-db-password"


def _gpu_pod(env: list[dict[str, Any]] | None) -> dict[str, Any]:
    container: dict[str, Any] = {
        "name": "train", "image": "nvcr.io/nvidia/pytorch:24.05-py3", "command": ["python", "train.py"],
        "resources": {"limits": {"nvidia.com/gpu": "1"}, "requests": {"nvidia.com/gpu": "1"}},
        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}
    if env is not None:
        container["env"] = env
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "train-0", "namespace": "ml", "uid": "5a1b2c3d-0000-4000-8000-000000000001",
                     "resourceVersion": "4711", "creationTimestamp": "2026-12-01T08:00:00Z",
                     "labels": {"app": "train"}},
        "spec": {"nodeName": "gpu-wk-01", "restartPolicy": "Never", "schedulerName": "default-scheduler",
                 "containers": [container]},
        "status": {"phase": "Running", "containerStatuses": [
            {"name": "train", "ready": True, "restartCount": 0,
             "state": {"running": {"startedAt": "2026-12-01T08:00:05Z"}}}]}}


ENV = [{"name": "DB_PASSWORD", "value": SECRET},
       {"name": "NVIDIA_VISIBLE_DEVICES", "value": "0,1"},
       {"name": "NVIDIA_DRIVER_CAPABILITIES",
        "valueFrom": {"configMapKeyRef": {"name": "gpu-env", "key": "caps"}}},
       {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "t", "key": "k"}}}]


def _bundle_with(tmp: Path, pod: dict[str, Any]) -> Path:
    src = tmp / "src"
    shutil.copytree(MINI, src)
    pods = src / "cluster" / "pods.json"
    listed = json.loads(pods.read_text())
    listed["items"].append(pod)
    pods.write_text(json.dumps(listed))
    return src


def _train(bundle: Path) -> NvidiaEnv:
    facts = load_bundle(bundle)
    pod = next(p for p in facts.workload_pods if p.metadata.name == "train-0")
    return nvidia_env(pod.spec.containers[0])


def test_collect_keeps_the_two_nvidia_variables_only(tmp_path: Path) -> None:
    src = _bundle_with(tmp_path, _gpu_pod(ENV))
    out = tmp_path / "out"
    with serve_bundle(src) as server:
        result = collect_bundle(out, kubeconfig=server.kubeconfig_path, quiet=True)
    assert not result.partial
    text = (out / "cluster" / "pods.json").read_text()
    assert SECRET not in text and "DB_PASSWORD" not in text and "TOKEN" not in text
    pod = next(p for p in read_list(out / "cluster" / "pods.json") if p["metadata"]["name"] == "train-0")
    assert pod["spec"]["containers"][0]["env"] == [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "0,1"},
                                                   {"name": "NVIDIA_DRIVER_CAPABILITIES"}]
    assert _train(out) == NvidiaEnv(visible="0,1", capabilities=None)


def test_a_bundle_without_env_loads_as_not_known(tmp_path: Path) -> None:
    assert _train(_bundle_with(tmp_path, _gpu_pod(None))) == NvidiaEnv()


def test_a_hand_made_bundle_keeps_its_literal_values(tmp_path: Path) -> None:
    env = [{"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "compute,utility"}, *ENV[:2]]
    assert _train(_bundle_with(tmp_path, _gpu_pod(env))) == NvidiaEnv("0,1", "compute,utility")
