"""Resolve once, pass down (issue 24, item 5): a live command reads its kubeconfig once and
runs its exec credential plugin once, however many of its phases talk to the cluster (the
collection, validate's second DCGM scrape, the context named in the report's header).

Each command runs as the console script does, in a process of its own, against the test API
server; a Python audit hook counts every open of the kubeconfig file, whichever code opens
it, and the credential plugin counts its own runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gpunode.apiserver import RunningServer

# The console script's entry, with every open of the kubeconfig (argv[1]) counted into a file
# (argv[2]) by an audit hook; os.write raises no audit event, so the hook never re-enters.
COUNTED = """
import os, sys
kubeconfig, counts = os.path.realpath(sys.argv[1]), sys.argv[2]
del sys.argv[1:3]
out = os.open(counts, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
name = os.path.basename(kubeconfig)
def hook(event, args):
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.fsdecode(args[0])
        if path.endswith(name) and os.path.realpath(path) == kubeconfig:
            os.write(out, b"open\\n")
sys.addaudithook(hook)
from gpunode.cli import run
sys.argv[0] = "gpunode"
run()
"""
API = "client.authentication.k8s.io/v1beta1"


@pytest.fixture
def kubeconfig(mini_server: RunningServer, tmp_path: Path) -> Path:
    """The test server's kubeconfig, its token given by an exec credential plugin that notes
    each run in ``plugin-runs``."""
    runs = tmp_path / "plugin-runs"
    plugin = tmp_path / "kube-login"
    plugin.write_text(
        f"#!{sys.executable}\nimport json\nopen({str(runs)!r}, 'a').write('run\\n')\n"
        f"print(json.dumps({{'apiVersion': {API!r}, 'kind': 'ExecCredential', "
        f"'status': {{'token': {mini_server.token!r}}}}}))\n")
    plugin.chmod(0o755)
    doc = yaml.safe_load(mini_server.kubeconfig_path.read_text())
    user = doc["users"][0]["user"]
    user.pop("token")
    user["exec"] = {"command": str(plugin), "apiVersion": API}
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    return path


def counted(kubeconfig: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], int, int]:
    """The command's run, the kubeconfig's opens and the credential plugin's runs."""
    opens, runs = kubeconfig.parent / "opens", kubeconfig.parent / "plugin-runs"
    for path in (opens, runs):
        path.write_text("")
    ran = subprocess.run([sys.executable, "-c", COUNTED, str(kubeconfig), str(opens), *args,
                          "--kubeconfig", str(kubeconfig)], capture_output=True, text=True,
                         timeout=120, check=False, stdin=subprocess.DEVNULL,
                         env={**os.environ, "COLUMNS": "200"})
    return ran, len(opens.read_text().splitlines()), len(runs.read_text().splitlines())


def context_of(server: RunningServer) -> str:
    return str(yaml.safe_load(server.kubeconfig_path.read_text())["current-context"])


def test_live_validate_reads_its_kubeconfig_once(mini_server: RunningServer, kubeconfig: Path) -> None:
    ran, opens, runs = counted(kubeconfig, "validate", "-q", "--scrape-interval", "0", "-o", "json")
    assert ran.returncode in (0, 1), ran.stderr
    report = json.loads(ran.stdout)
    assert report["source"]["context"] == context_of(mini_server)  # the header still names it
    assert any(c["checks"] for c in report["categories"])  # checks ran, the live ones too
    assert (opens, runs) == (1, 1), ran.stderr


def test_live_diagnose_reads_its_kubeconfig_once(mini_server: RunningServer, kubeconfig: Path) -> None:
    ran, opens, runs = counted(kubeconfig, "diagnose", "-q", "-o", "json")
    assert ran.returncode in (0, 1), ran.stderr
    assert json.loads(ran.stdout)["source"]["context"] == context_of(mini_server)
    assert (opens, runs) == (1, 1), ran.stderr


def test_version_reads_its_kubeconfig_once(mini_server: RunningServer, kubeconfig: Path) -> None:
    ran, opens, runs = counted(kubeconfig, "version")
    assert ran.returncode == 0, ran.stderr
    assert f"Context: {context_of(mini_server)}" in ran.stdout
    assert (opens, runs) == (1, 1), ran.stderr
