"""``gpunode version`` live: the Kubernetes server and GPU Operator versions, read through
the test API server with the real client; the command line asked in this process
(tests/inprocess.py: its output and exit code are the console script's)."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from gpunode import __version__, sim
from gpunode.apiserver import Faults, serve_bundle
from inprocess import run_cli


def _operator_tag(bundle: Path) -> str | None:
    """What the bundle says: the image tag of the gpu-operator container of an app=gpu-operator pod."""
    pods = json.loads((bundle / "cluster" / "pods.json").read_text())["items"]
    for pod in pods:
        if pod["metadata"].get("labels", {}).get("app") != "gpu-operator":
            continue
        for c in pod["spec"]["containers"]:
            if c["name"] == "gpu-operator":
                return str(c["image"]).rsplit(":", 1)[1]
    return None


def test_version_reads_server_and_operator_versions(tmp_path: Path) -> None:
    bundle = sim.build_bundle(sim.load_scenario("falcon-ai"), tmp_path / "b")
    server_version = json.loads((bundle / "cluster" / "version.json").read_text())["gitVersion"]
    operator = _operator_tag(bundle)
    assert server_version and operator
    with serve_bundle(bundle) as server:
        kubeconfig = str(server.kubeconfig_path)
        as_json = run_cli("version", "--kubeconfig", kubeconfig, "-o", "json")
        table = run_cli("version", "--kubeconfig", kubeconfig)
    assert as_json.returncode == 0, as_json.stderr
    data = json.loads(as_json.stdout)
    assert data["client"] == {"gpunode": __version__}
    assert data["server"] == {"kubernetes": server_version, "gpu_operator": operator}
    assert table.returncode == 0, table.stderr
    assert f"Server Version: {server_version}\n" in table.stdout
    assert f"GPU Operator Version: {operator}\n" in table.stdout


def test_version_without_an_operator_says_not_found(mini_bundle: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "no-operator"
    shutil.copytree(mini_bundle, bundle)
    pods_file = bundle / "cluster" / "pods.json"
    pods = json.loads(pods_file.read_text())
    pods["items"] = [p for p in pods["items"] if p["metadata"].get("labels", {}).get("app") != "gpu-operator"]
    pods_file.write_text(json.dumps(pods))
    assert _operator_tag(mini_bundle) and _operator_tag(bundle) is None
    with serve_bundle(bundle) as server:
        proc = run_cli("version", "--kubeconfig", str(server.kubeconfig_path))
    assert proc.returncode == 0, proc.stderr
    assert "GPU Operator Version: not found" in proc.stdout and "Server Version: v" in proc.stdout


def test_version_unreachable_cluster_exits_3(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:9'}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {token: t}}]\n"
    )
    proc = run_cli("version", "--kubeconfig", str(kubeconfig))
    assert proc.returncode == 3 and "Traceback" not in proc.stderr, proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("faults", [Faults(forbid=("list pods",)), Faults(answers=("stall list pods",)),
                                    Faults(answers=("garble list pods",))], ids=["403", "stall", "garbled"])
def test_version_without_the_pod_list_says_unknown(mini_bundle: Path, faults: Faults) -> None:
    """Pods refused, never answered or garbled: the server's version still shows, the
    operator's is unknown with a one-line warning saying why, exit 0 (it crashed: exit 4)."""
    with serve_bundle(mini_bundle, faults=faults) as server:
        started = time.monotonic()
        proc = run_cli("version", "--kubeconfig", str(server.kubeconfig_path),
                               "--request-timeout", "1")
        took = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    assert "Server Version: v" in proc.stdout and "GPU Operator Version: unknown\n" in proc.stdout
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: GPU Operator version unknown: pod"), lines
    assert took < 10, took
