"""Live-mode commands against the test API server: collect, diagnose, stack,
demo --live, serve-bundle, and a must-gather read through diagnose --from."""

from __future__ import annotations

import base64
import json
import os
import signal
import ssl
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from gpunode.apiserver import serve_bundle
from gpunode.sim import build_bundle, load_scenario
from inprocess import run_cli

MUST_GATHER = Path(__file__).parent.parent / "live" / "fixtures" / "must-gather"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """The entry point's ``main`` in this process (tests/inprocess.py): exit code and output."""
    return run_cli(*args)


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_bundle(load_scenario("falcon-ai-broken"), tmp_path_factory.mktemp("b") / "bundle")


def without_open(value: object) -> object:
    """A report part without its evidence's ``open``: what the user opens differs by design
    between a live run (the kubectl command) and a bundle (a path in it); the rest is equal."""
    if isinstance(value, dict):
        return {k: without_open(v) for k, v in value.items() if k != "open"}
    if isinstance(value, list):
        return [without_open(v) for v in value]
    return value


@pytest.mark.slow
def test_live_diagnose_and_collect_agree_with_the_bundle(broken: Path, tmp_path: Path) -> None:
    with serve_bundle(broken) as server:
        kube = str(server.kubeconfig_path)
        live = run("diagnose", "--kubeconfig", kube, "-q", "-o", "json")
        collected = run(
            "collect", "--kubeconfig", kube, "-q", "--concurrency", "2", "-o", str(tmp_path / "b.tar.gz")
        )
        stack = run("stack", "gpu-wk-02", "--kubeconfig", kube, "-q")
    assert live.returncode == 1, live.stderr
    report = json.loads(live.stdout)
    assert report["source"]["kind"] == "live"
    assert [(g["cause"], g["nodes"]) for g in report["groups"]] == [("kernel_headers_missing", ["gpu-wk-02"])]
    assert collected.returncode == 0 and "wrote bundle" in collected.stdout, collected.stderr
    offline = json.loads(run("diagnose", "--from", str(tmp_path / "b.tar.gz"), "-o", "json").stdout)
    assert without_open(offline["nodes"]) == without_open(report["nodes"])
    assert stack.returncode == 1 and "gpu-wk-02" in stack.stdout and "gpu-wk-01" not in stack.stdout


def test_unreachable_cluster_exits_3_naming_the_server(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:9', insecure-skip-tls-verify: true}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
    )
    proc = run("diagnose", "--kubeconfig", str(kubeconfig), "-q")
    assert proc.returncode == 3, proc.stderr
    assert "127.0.0.1:9" in proc.stderr and "Traceback" not in proc.stderr


def test_from_and_kubeconfig_together_is_usage_error(broken: Path) -> None:
    proc = run("diagnose", "--from", str(broken), "--kubeconfig", "/nonexistent")
    assert proc.returncode == 2 and "--from" in proc.stderr


def test_demo_live_runs_the_live_path() -> None:
    proc = run("demo", "--live", "-o", "json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert report["source"]["kind"] == "live"
    assert report["groups"][0]["cause"] == "kernel_headers_missing"


def test_serve_bundle_serves_until_interrupted(broken: Path, tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from gpunode.cli import main; main()",
            "serve-bundle",
            str(broken),
            "--kubeconfig",
            str(kubeconfig),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not kubeconfig.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert kubeconfig.exists(), "serve-bundle wrote no kubeconfig"
        assert _get_nodes(kubeconfig) == ["gpu-wk-01", "gpu-wk-02", "mgmt-01", "mgmt-02", "mgmt-03"]
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0


def _get_nodes(kubeconfig: Path) -> list[str]:
    """One authenticated request with the kubeconfig's CA and token, like kubectl get nodes."""
    config = yaml.safe_load(kubeconfig.read_text())
    cluster = config["clusters"][0]["cluster"]
    ca = base64.b64decode(cluster["certificate-authority-data"]).decode()
    context = ssl.create_default_context(cadata=ca)
    request = urllib.request.Request(
        cluster["server"] + "/api/v1/nodes",
        headers={"Authorization": f"Bearer {config['users'][0]['user']['token']}"},
    )
    with urllib.request.urlopen(request, context=context, timeout=30) as answer:
        return sorted(item["metadata"]["name"] for item in json.load(answer)["items"])


@pytest.mark.skipif(not MUST_GATHER.is_dir(), reason="must-gather fixture absent")
def test_diagnose_reads_a_gpu_operator_must_gather() -> None:
    proc = run("diagnose", "--from", str(MUST_GATHER), "-o", "json")
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    assert report["nodes"], "must-gather nodes are rebuilt and diagnosed"


def test_no_source_and_no_kubeconfig_anywhere_is_a_clear_error(tmp_path: Path) -> None:
    env = {**os.environ, "KUBECONFIG": str(tmp_path / "missing"), "HOME": str(tmp_path)}
    env.pop("KUBERNETES_SERVICE_HOST", None)
    proc = run_cli("diagnose", "-q", env=env)
    assert proc.returncode in (2, 3) and proc.stderr.count("\n") == 1, proc.stderr
