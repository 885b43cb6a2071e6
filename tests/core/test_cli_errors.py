"""Errors never pass for findings: bad credentials, bad kubeconfigs, not-a-bundle and
crashes each leave one line on stderr and their own exit code (1 means findings only)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from gpunode.apiserver import RunningServer, serve_bundle
from inprocess import run_cli

MINI = Path(__file__).parent.parent / "live" / "fixtures" / "mini"


def run(*args: str, code: str = "") -> subprocess.CompletedProcess[str]:
    """The entry point's ``main``: in this process (tests/inprocess.py), or, with ``code`` to
    run first (a crash planted in the CLI), in a fresh interpreter."""
    if not code:
        return run_cli(*args)
    return subprocess.run(
        [sys.executable, "-c", f"import gpunode.cli as cli; {code}; cli.main()", *args],
        capture_output=True, text=True, timeout=120, check=False,
    )


def one_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with serve_bundle(MINI) as running:
        yield running


def _kubeconfig(server: RunningServer, tmp_path: Path, token: str) -> Path:
    config = yaml.safe_load(server.kubeconfig_path.read_text())
    config["users"][0]["user"]["token"] = token
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.parametrize("command", ["diagnose", "collect"])
def test_a_refused_token_is_one_line_exit_3(server: RunningServer, tmp_path: Path,
                                            command: str) -> None:
    kubeconfig = _kubeconfig(server, tmp_path, "expired-token")
    extra = ["-o", str(tmp_path / "out")] if command == "collect" else []
    proc = run(command, "--kubeconfig", str(kubeconfig), "-q", *extra)
    assert proc.returncode == 3
    line = one_line(proc)
    assert server.url in line and "401" in line and str(kubeconfig) in line
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
@pytest.mark.parametrize(("content", "says"), [
    ("", "empty"),
    ("clusters: [\n", "invalid YAML"),
    ("just a string\n", "not a kubeconfig"),
    ("clusters: []\ncontexts: []\n", "No current context"),
    ("clusters: [{name: a}]\ncontexts: [{name: c, context: {cluster: a}}]\ncurrent-context: c\n",
     "not a usable kubeconfig"),
], ids=["empty", "not-yaml", "scalar", "no-context", "no-server"])
def test_a_broken_kubeconfig_is_one_line_exit_2(tmp_path: Path, content: str, says: str) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text(content)
    proc = run("diagnose", "--kubeconfig", str(path), "-q")
    assert proc.returncode == 2
    line = one_line(proc)
    assert str(path) in line and says in line


def test_an_internal_error_exits_4_and_shows_the_traceback_only_with_debug(
        handmade: Path) -> None:
    boom = "cli.build_report = lambda *a, **k: 1 / 0"
    proc = run("diagnose", "--from", str(handmade), code=boom)
    assert proc.returncode == 4
    assert "internal error: ZeroDivisionError" in one_line(proc)
    debug = run("--debug", "diagnose", "--from", str(handmade), code=boom)
    assert debug.returncode == 4 and "Traceback" in debug.stderr


@pytest.mark.parametrize("make", [
    lambda p: p,  # an empty folder
    lambda p: (p / "notes.txt").write_text("hello") and p,
], ids=["empty", "unrelated"])
def test_a_folder_that_is_not_a_bundle_is_exit_2(tmp_path: Path, make: object) -> None:
    make(tmp_path)  # type: ignore[operator]
    for command in ("diagnose", "validate"):
        proc = run(command, "--from", str(tmp_path))
        assert proc.returncode == 2, proc.stdout
        assert str(tmp_path) in one_line(proc) and "not a gpunode bundle" in proc.stderr


def test_a_bundle_without_nodes_says_so(tmp_path: Path) -> None:
    (tmp_path / "cluster").mkdir()
    (tmp_path / "cluster" / "nodes.json").write_text('{"kind": "List", "items": []}')
    proc = run("diagnose", "--from", str(tmp_path))
    assert proc.returncode == 0
    assert "no GPU node found" in proc.stderr


def test_warnings_come_before_the_report(tmp_path: Path) -> None:
    (tmp_path / "cluster").mkdir()
    (tmp_path / "manifest.json").write_text(
        '{"format": "gpunode-bundle/v1", "partial": true, "warnings": ["cannot list pods"]}')
    proc = run("diagnose", "--from", str(tmp_path))
    assert proc.stderr.startswith("warning: cannot list pods")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_serve_bundle_removes_its_files_when_stopped(tmp_path: Path, sig: signal.Signals) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    kubeconfig = tmp_path / "kubeconfig"
    proc = subprocess.Popen(
        [sys.executable, "-c", "from gpunode.cli import main; main()", "serve-bundle", str(MINI),
         "--kubeconfig", str(kubeconfig)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(temp)})
    try:
        deadline = time.monotonic() + 60
        while not kubeconfig.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert list(temp.glob("gpunode-apiserver-*/*.key"))  # the server's TLS key, while it runs
    finally:
        proc.send_signal(sig)
        assert proc.wait(timeout=30) == 0
    assert list(temp.iterdir()) == []


@pytest.mark.parametrize("content", [b"", b"plain text\n"], ids=["empty", "not-a-tar"])
def test_serve_bundle_of_an_unreadable_archive_is_one_line(tmp_path: Path, content: bytes) -> None:
    archive = tmp_path / "b.tar.gz"
    archive.write_bytes(content)
    proc = run("serve-bundle", str(archive), "--kubeconfig", str(tmp_path / "kc"))
    assert proc.returncode == 2
    assert str(archive) in one_line(proc)
