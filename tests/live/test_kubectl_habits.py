"""kubectl's habits through the command line, run in this process (tests/inprocess.py; issue 22,
item 4): help however asked, global flags after the subcommand, ``-v 6`` request lines,
``version`` prints the client line before a server error, ``--watch -o json`` is JSON lines."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from gpunode.apiserver import RunningServer
from inprocess import run_cli


def gpunode(*args: str) -> subprocess.CompletedProcess[str]:
    """The command line in this process (tests/inprocess.py): what it prints and returns."""
    return run_cli(*args, env={**os.environ, "COLUMNS": "100"})


@pytest.mark.parametrize("args", [(), ("-h",), ("--help",), ("help",)])
def test_help_however_asked_exits_0(args: tuple[str, ...]) -> None:
    ran = gpunode(*args)
    assert ran.returncode == 0 and "Usage: gpunode" in ran.stdout and ran.stderr == "", ran
    assert "diagnose" in ran.stdout and "validate" in ran.stdout


@pytest.mark.parametrize("args", [("diagnose", "-h"), ("help", "diagnose"), ("validate", "-h")])
def test_a_command_help_however_asked(args: tuple[str, ...]) -> None:
    ran = gpunode(*args)
    assert ran.returncode == 0 and f"Usage: gpunode {args[0] if args[0] != 'help' else args[1]}" in ran.stdout


@pytest.mark.slow
def test_global_flags_after_the_subcommand(mini_bundle: Path) -> None:
    for args in (("diagnose", "--from", str(mini_bundle), "--debug"),
                 ("diagnose", "--debug", "--from", str(mini_bundle), "-v", "2"),
                 ("--debug", "-v=3", "diagnose", "--from", str(mini_bundle)),
                 ("diagnose", "--from", str(mini_bundle), "--v=4")):
        ran = gpunode(*args)
        assert ran.returncode in (0, 1) and "NODE" in ran.stdout, (args, ran.stderr)
    bad = gpunode("diagnose", "--from", str(mini_bundle), "-v", "loud")
    assert (bad.returncode, bad.stderr) == (
        2, "gpunode: -v 'loud': expected a log level (a number, e.g. -v 6)\n")


@pytest.mark.slow
def test_v6_logs_every_api_request(mini_server: RunningServer) -> None:
    ran = gpunode("diagnose", "--kubeconfig", str(mini_server.kubeconfig_path), "-q", "-v", "6")
    assert ran.returncode in (0, 1), ran.stderr
    lines = [ln for ln in ran.stderr.splitlines() if " gpunode] " in ln]
    stamp = r"I\d{4} \d\d:\d\d:\d\d\.\d{6} gpunode\] "
    request = r"(GET|POST) https://127\.0\.0\.1:\d+/\S+ .+ in \d+ milliseconds$"
    assert lines and all(re.match(stamp + request, ln) for ln in lines), lines[:3]
    assert any(f"GET {mini_server.url}/version 200 OK" in ln for ln in lines)
    assert any("/api/v1/nodes?" in ln for ln in lines) and any("/api/v1/pods?" in ln for ln in lines)
    quiet = gpunode("diagnose", "--kubeconfig", str(mini_server.kubeconfig_path), "-q", "-v", "5")
    assert " gpunode] " not in quiet.stderr


@pytest.mark.slow
def test_version_prints_the_client_line_before_a_server_error(tmp_path: Path) -> None:
    config = tmp_path / "kubeconfig"
    config.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:9"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
    ran = gpunode("version", "--kubeconfig", str(config), "--request-timeout", "1s")
    assert ran.returncode == 3 and ran.stdout == "Client Version: gpunode 0.1.0\n", ran
    assert ran.stderr.startswith("gpunode: cannot reach the Kubernetes API at https://127.0.0.1:9")
    as_json = gpunode("version", "--kubeconfig", str(config), "--request-timeout", "1s", "-o", "json")
    assert as_json.returncode == 3 and json.loads(as_json.stdout) == {"client": {"gpunode": "0.1.0"}}


def test_version_yaml(mini_server: RunningServer) -> None:
    ran = gpunode("version", "--kubeconfig", str(mini_server.kubeconfig_path), "-o", "yaml")
    doc = yaml.safe_load(ran.stdout)
    assert ran.returncode == 0 and doc["client"] == {"gpunode": "0.1.0"} and doc["server"]["kubernetes"]


@pytest.mark.slow
def test_watch_json_is_json_lines(mini_server: RunningServer, mini_bundle: Path) -> None:
    for source in (("--from", str(mini_bundle)), ("--kubeconfig", str(mini_server.kubeconfig_path))):
        ran = gpunode("diagnose", *source, "--watch", "--count", "3", "--interval", "0", "-o", "json")
        lines = ran.stdout.splitlines()
        assert ran.returncode in (0, 1) and len(lines) == 3, (source, ran.stdout[:300], ran.stderr)
        docs = [json.loads(line) for line in lines]
        assert {d["schema"] for d in docs} == {"gpunode.report/v1"}
        assert len({json.dumps(d["nodes"]) for d in docs}) == 1
    ran = gpunode("diagnose", "--from", str(mini_bundle), "--watch", "--count", "2", "--interval", "0",
                  "-o", "yaml")
    assert [d["schema"] for d in yaml.safe_load_all(ran.stdout)] == ["gpunode.report/v1"] * 2
