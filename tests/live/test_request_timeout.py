"""``--request-timeout``: kubectl's forms, one-line refusals, and what it bounds.

Every live command takes it; each request or exec that has not fully answered by
then is abandoned, and a call with its retries gives up after ``CALL_TIMEOUTS``
times it. A server that accepts connections and never answers is unreachable
(exit 3) within that bound, not a hang.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from gpunode.apiserver import Faults, RunningServer, serve_bundle
from gpunode.collect import kube
from gpunode.collect.credentials import PLUGIN_TIMEOUT_S
from gpunode.commands.extras import request_timeout
from gpunode.errors import UsageError
from inprocess import run_cli


@pytest.mark.parametrize(("text", "seconds"), [
    ("30", 30.0), ("1.5", 1.5), ("30s", 30.0), ("1m", 60.0), ("1m30s", 90.0), ("500ms", 0.5),
    ("2h", 7200.0), ("1h2m3s", 3723.0), (" 45S ", 45.0), ("0", None), ("0s", None), (None, None),
])
def test_kubectl_forms_are_read_as_seconds(text: str | None, seconds: float | None) -> None:
    assert request_timeout(text) == seconds


@pytest.mark.parametrize("text", ["abc", "-1", "-5s", "1d", "30 s", "", "1e3", "inf", "nan", "s", "25h",
                                  "1m-3s", "0x10"])
def test_anything_else_is_refused_naming_the_option(text: str) -> None:
    with pytest.raises(UsageError, match=r"^--request-timeout "):
        request_timeout(text)


def test_the_timeout_bounds_requests_execs_and_calls() -> None:
    assert kube.Timeouts.of(2.0) == kube.Timeouts(2.0, 2.0, 2.0 * kube.CALL_TIMEOUTS, 2.0)
    defaults = kube.Timeouts(kube.REQUEST_TIMEOUT_S, kube.EXEC_TIMEOUT_S, None, PLUGIN_TIMEOUT_S)
    assert kube.Timeouts.of(None) == kube.Timeouts.of(0) == defaults


def cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpunode", *args], capture_output=True, text=True,
                          timeout=timeout, check=False)


@pytest.mark.parametrize("command", [
    ["collect", "-o", "out"], ["diagnose"], ["stack"], ["validate"], ["version"], ["agent"],
])
def test_every_live_command_refuses_a_bad_value_in_one_line(command: list[str], tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The command line in this process (tests/inprocess.py), in an empty working directory:
    what it prints, its exit code and that it wrote nothing are all the refusal is."""
    monkeypatch.chdir(tmp_path)
    done = run_cli(*command, "--request-timeout", "soon")
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "gpunode: --request-timeout 'soon': expected seconds or a duration such as 30s, 1m or 1m30s "
        "(0: the defaults)"]
    assert list(tmp_path.iterdir()) == []


def test_a_saved_bundle_takes_no_request_timeout(mini_bundle: Path) -> None:
    done = run_cli("diagnose", "--from", str(mini_bundle), "--request-timeout", "5s")
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert "--request-timeout" in done.stderr


@pytest.fixture()
def black_hole() -> Iterator[int]:
    """A port that accepts TCP connections (the kernel's backlog) and never says a word."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        yield sock.getsockname()[1]


@pytest.mark.slow
@pytest.mark.parametrize("command", [["collect", "-o", "out"], ["diagnose", "-q"], ["version"]])
def test_a_server_that_never_answers_is_unreachable_within_the_bound(
        command: list[str], black_hole: int, mini_server: RunningServer, tmp_path: Path) -> None:
    config = yaml.safe_load(mini_server.kubeconfig_path.read_text())
    url = f"https://127.0.0.1:{black_hole}"
    config["clusters"][0]["cluster"]["server"] = url
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(config))
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "gpunode", *command, "--kubeconfig", str(kubeconfig),
                           "--request-timeout", "0.5"], capture_output=True, text=True, timeout=60,
                          check=False, cwd=tmp_path)
    took = time.monotonic() - started
    assert done.returncode == 3, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"gpunode: cannot reach the Kubernetes API at {url}")
    assert "timed out" in lines[0]
    # the probe's call gives up after 3 x 0.5 s (plus start-up); without the option, 20 s
    assert took < 3 * 0.5 + 6, took
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kubeconfig"]


Checks = dict[str, dict[str, str]]


def _validate(server: RunningServer) -> tuple[subprocess.CompletedProcess[str], float, Checks]:
    started = time.monotonic()
    done = cli("validate", "-q", "-o", "json", "--request-timeout", "1s", "--scrape-interval", "0",
               "--kubeconfig", str(server.kubeconfig_path))
    took = time.monotonic() - started
    checks = {c["id"]: c for cat in json.loads(done.stdout)["categories"] for c in cat["checks"]}
    return done, took, checks


@pytest.mark.slow
def test_live_validate_with_a_hung_exec_is_bounded_and_says_unknown(mini_bundle: Path) -> None:
    """The node-facts exec of gpu-wk-01 never answers: validate ends within the bound, the
    checks that need nvidia-smi on that node say unknown, and no check fails or warns that
    does not without the stall."""
    with serve_bundle(mini_bundle) as server:
        base, _, before = _validate(server)
    with serve_bundle(mini_bundle, faults=Faults(
            answers=("stall create pods/exec * nvidia-driver-daemonset-4xk2p",))) as server:
        stalled, took, after = _validate(server)
        assert server.errors() == []
    assert stalled.returncode == base.returncode == 1, stalled.stderr
    assert "Traceback" not in stalled.stderr
    assert took < 4 * (kube.CALL_TIMEOUTS + 1) + 6, took
    assert after.keys() == before.keys()
    for check, now in after.items():
        if now["verdict"] in ("fail", "warn"):
            assert before[check]["verdict"] == now["verdict"], (check, now, before[check])
        else:
            assert now["verdict"] in (before[check]["verdict"], "unknown"), (check, now, before[check])
    assert before["gpu.fabric-manager"]["verdict"] != "unknown"
    assert after["gpu.fabric-manager"]["verdict"] == "unknown"
    assert "gpu-wk-01" in after["gpu.fabric-manager"]["summary"]
