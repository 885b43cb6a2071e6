"""Offline commands load no HTTP or Kubernetes client (start-up time; timings are in bench/README.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

CLIENTS = {"lightkube", "httpx", "httpx2", "httpcore", "httpcore2", "wsproto", "prometheus_client"}
PROBE = """
import contextlib, io, sys
sys.argv = ["gpunode", *sys.argv[1:]]
from gpunode.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
    main()
print(" ".join(sorted({m.split(".")[0] for m in sys.modules})))
"""


def imported(*args: str) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stderr[-1000:]
    return set(proc.stdout.split())


@pytest.fixture(scope="module")
def gpu_host(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("host")
    device = root / "sys/bus/pci/devices/0000:9a:00.0"
    device.mkdir(parents=True)
    (device / "vendor").write_text("0x10de\n")
    return root


@pytest.mark.parametrize(
    "args",
    [
        ("--help",),
        ("diagnose", "--help"),
        ("demo",),
        ("diagnose", "--from", "{handmade}"),
        ("stack", "--from", "{handmade}", "-o", "json"),
        ("validate", "--from", "{handmade}"),
        ("probe", "--host-root", "{host}"),
        ("causes",),
        ("version", "--client"),
    ],
)
def test_offline_commands_import_no_http_or_kubernetes_client(
    args: tuple[str, ...], handmade: Path, gpu_host: Path
) -> None:
    argv = [a.format(handmade=handmade, host=gpu_host) for a in args]
    assert imported(*argv) & CLIENTS == set()


def test_live_commands_do_load_the_client() -> None:
    """The check above can fail: a live command's import of the client is seen."""
    assert "lightkube" in imported("collect", "-d", "/nonexistent/b", "--kubeconfig", "/nonexistent/k")
