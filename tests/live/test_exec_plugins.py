"""kubeconfig exec credential plugins as kubectl takes them, against the test API server: every
API version kubectl accepts works, and what kubectl refuses gpunode refuses for the same reason,
as a local error (exit 2). Where kubectl is installed it runs beside gpunode on each kubeconfig
and both succeed, or both fail naming the same thing. gpunode runs as its command line's
``main`` in this process (tests/inprocess.py: the exit code and the output are what these
cases read; the plugin itself is still a child process, as it is for the command)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpunode.apiserver import RunningServer
from inprocess import run_cli

API = "client.authentication.k8s.io/"

# (id, exec entry changes, None when it works / the words both refusals hold)
CASES: list[tuple[str, dict[str, Any], tuple[str, ...] | None]] = [
    ("v1-never", {"apiVersion": API + "v1", "interactiveMode": "Never"}, None),
    ("v1-ifavailable", {"apiVersion": API + "v1", "interactiveMode": "IfAvailable"}, None),
    ("v1beta1", {"apiVersion": API + "v1beta1"}, None),
    ("v1beta1-ifavailable", {"apiVersion": API + "v1beta1", "interactiveMode": "IfAvailable"}, None),
    ("v1-without-interactive-mode", {"apiVersion": API + "v1"}, ("interactiveMode must be specified",)),
    ("v1alpha1", {"apiVersion": API + "v1alpha1"}, ("apiVersion", "v1alpha1")),
    ("always-without-terminal", {"apiVersion": API + "v1", "interactiveMode": "Always"}, ("terminal",)),
    ("missing-binary", {"apiVersion": API + "v1beta1", "command": "/nonexistent/kube-login"},
     ("/nonexistent/kube-login",)),
]


def kubeconfig(server: RunningServer, tmp_path: Path, changes: dict[str, Any]) -> Path:
    plugin = tmp_path / "kube-login"
    version = changes["apiVersion"]
    plugin.write_text(f"#!{sys.executable}\nimport json\nprint(json.dumps({{'apiVersion': {version!r}, "
                      f"'kind': 'ExecCredential', 'status': {{'token': {server.token!r}}}}}))\n")
    plugin.chmod(0o755)
    doc = yaml.safe_load(server.kubeconfig_path.read_text())
    user = doc["users"][0]["user"]
    user.pop("token")
    user["exec"] = {"command": str(plugin), "args": ["get-token"], **changes}
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    return path


def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False,
                          stdin=subprocess.DEVNULL, env={**os.environ, "COLUMNS": "200"})


def gpunode(*args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, env={**os.environ, "COLUMNS": "200"})


@pytest.mark.slow
@pytest.mark.parametrize(("changes", "refused"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_gpunode_and_kubectl_agree(mini_server: RunningServer, tmp_path: Path, changes: dict[str, Any],
                                   refused: tuple[str, ...] | None) -> None:
    config = kubeconfig(mini_server, tmp_path, changes)
    ours = gpunode("version", "--kubeconfig", str(config))
    if refused is None:
        assert ours.returncode == 0 and "Server Version: v1" in ours.stdout, ours.stderr
    else:
        assert ours.returncode == 2, ours
        assert ours.stdout == "Client Version: gpunode 0.1.0\n"  # the client line first, as kubectl
        assert len(ours.stderr.splitlines()) == 1 and all(w in ours.stderr for w in refused), ours.stderr
        assert "credential plugin" in ours.stderr and "server" not in ours.stderr  # local, not the server
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl not installed: gpunode alone was checked")
    theirs = run([kubectl, "--kubeconfig", str(config), "get", "--raw", "/version"])
    assert (theirs.returncode == 0) == (refused is None), theirs.stderr
    if refused is not None:
        words = [w for w in refused if w != "terminal"] or ["terminal"]
        assert all(w in theirs.stderr for w in words), theirs.stderr


@pytest.mark.slow
def test_malformed_kubeconfig_is_a_local_error(tmp_path: Path) -> None:
    bad = tmp_path / "kubeconfig"
    bad.write_text("clusters: [\n")
    for args in (("diagnose",), ("version",), ("validate",), ("collect", "-o", str(tmp_path / "b"))):
        ran = gpunode(*args, "--kubeconfig", str(bad))
        last = ran.stderr.splitlines()[-1]  # validate says first that it collects
        assert ran.returncode == 2 and last.startswith(f"gpunode: {bad}: not a kubeconfig"), (args, ran)
