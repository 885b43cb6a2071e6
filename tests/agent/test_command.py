"""``gpunode agent`` as a process: serves, stops cleanly on SIGTERM, refuses bad input in one line."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from agent_helpers import DEVICE, http_get

from gpunode.cli import main

SRC = Path(__file__).resolve().parents[2] / "src"
MAIN = "from gpunode.cli import main; main()"


def _env(home: Path) -> dict[str, str]:
    """No cluster access: no service account, no kubeconfig."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBERNETES_")}
    env.update(PYTHONPATH=str(SRC), HOME=str(home), KUBECONFIG=str(home / "no-kubeconfig"))
    env["NODE_NAME"] = "gpu-wk-01"
    return env


def _fake_host(root: Path) -> Path:
    """A host root with the driver's /proc files recorded on the H200."""
    files = DEVICE / "bundle" / "nodes" / "h200-device" / "files"
    for source in files.rglob("*"):
        if source.is_file():
            target = root / source.relative_to(files)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    return root


@pytest.fixture
def agent_process(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], int]]:
    host = _fake_host(tmp_path / "host")
    argv = [sys.executable, "-c", MAIN, "agent", "--port", "0", "--address", "127.0.0.1"]
    argv += ["--interval", "0.05", "--host-root", str(host)]
    proc = subprocess.Popen(argv, env=_env(tmp_path), stderr=subprocess.PIPE, text=True)
    try:
        yield proc, _port(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def _port(proc: subprocess.Popen[str]) -> int:
    assert proc.stderr is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        found = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        if found:
            return int(found.group(1))
        assert line, f"agent exited early with {proc.poll()}"
    raise AssertionError("agent did not say where it listens")


def test_serves_then_stops_cleanly_on_sigterm(agent_process: tuple[subprocess.Popen[str], int]) -> None:
    proc, port = agent_process
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while http_get(url + "/facts")[0] != 200 and time.monotonic() < deadline:
        time.sleep(0.05)
    code, _, body = http_get(url + "/facts")
    assert code == 200
    facts = msgspec.json.decode(body)
    assert (facts["node_name"], facts["host"]["driver"]["version"]) == ("gpu-wk-01", "580.159.04")
    assert http_get(url + "/healthz")[0] == 200
    assert b"gpunode_component_status{" in http_get(url + "/metrics")[2]
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(15) == 0
    assert proc.stderr is not None
    assert "received SIGTERM" in proc.stderr.read()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--host-root", "/no/such/host"], "gpunode: --host-root /no/such/host: no such directory"),
        (["--node-condition"], "gpunode: --node-condition needs Kubernetes API access"),
        (["--log-level", "chatty"], "gpunode: --log-level chatty: not a logging level"),
        (["--interval", "0"], "gpunode: --interval and --stale-after must be more than 0 seconds"),
        (["--port", "70000"], "gpunode: --port 70000: not a TCP port (0-65535)"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    for key, value in _env(tmp_path).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(sys, "argv", ["gpunode", "agent", "--port", "0", "--address", "127.0.0.1", *args])
    with pytest.raises(SystemExit) as stopped:
        main()
    assert stopped.value.code == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("gpunode:")]
    assert len(errors) == 1 and errors[0].startswith(message), errors
