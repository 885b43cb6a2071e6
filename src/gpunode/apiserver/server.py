"""Run the test API server: in a thread for tests, or as a subprocess for benchmarks."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import ssl
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.request
import zlib
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

import msgspec

from gpunode.apiserver.faults import Faults
from gpunode.apiserver.handler import EXPIRE_PATH, STATS_PATH, ApiHandler
from gpunode.apiserver.httpserver import ApiHTTPServer, AuditRecord
from gpunode.apiserver.kubeconfig import write_kubeconfig
from gpunode.apiserver.store import BundleStore
from gpunode.apiserver.tls import make_tls_files
from gpunode.errors import BundleError

NO_FAULTS = Faults()


def _warm_types() -> None:
    """Build msgspec's type information and the catalog before handler threads exist:
    doing that for the first time from several threads at once can crash CPython."""
    from gpunode.catalog import load_catalog
    from gpunode.collect.slim import Pod

    msgspec.json.decode(b"{}", type=Pod)
    load_catalog()


class RunningServer:
    """A started test API server (thread or subprocess); a context manager.

    Counters are read over the server's own control endpoint, so both modes
    behave the same; the endpoint itself is not counted.
    """

    def __init__(self, url: str, kubeconfig_path: Path, ca_cert_path: Path, token: str,
                 stopper: Callable[[], None], *, pid: int | None = None,
                 workdir: Path | None = None) -> None:
        self.url = url
        #: The server's own files (TLS key, unpacked bundle): removed on stop or exit.
        self.workdir = workdir
        #: The server's process when it runs in a subprocess (benchmarks read its CPU time).
        self.pid = pid
        self.kubeconfig_path = kubeconfig_path
        self.ca_cert_path = ca_cert_path
        self.token = token
        self._stopper: Callable[[], None] | None = stopper

    def __enter__(self) -> RunningServer:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def stop(self) -> None:
        """Shut the server down and remove its files; safe to call twice."""
        stopper, self._stopper = self._stopper, None
        if stopper is not None:
            stopper()

    def _call(self, method: str, path: str) -> dict[str, Any]:
        context = ssl.create_default_context(cafile=str(self.ca_cert_path))
        request = urllib.request.Request(self.url + path, method=method,
                                         headers={"Authorization": f"Bearer {self.token}"})
        with urllib.request.urlopen(request, context=context, timeout=30) as answer:
            result: dict[str, Any] = json.loads(answer.read())
            return result

    def stats(self) -> dict[str, Any]:
        """``{"requests": n, "by_path": {...}, "audit": [[verb, resource, ns, name], ...]}``."""
        return self._call("GET", STATS_PATH)

    def expire_continue_tokens(self) -> None:
        """Make every continue token handed out so far stale (the next use gets 410)."""
        self._call("POST", EXPIRE_PATH)

    @property
    def request_count(self) -> int:
        return int(self.stats()["requests"])

    def path_counts(self) -> Counter[str]:
        return Counter(self.stats()["by_path"])

    def errors(self) -> list[str]:
        """Exceptions the server's handler raised (empty when it behaved)."""
        return list(self.stats()["errors"])

    def audit(self) -> list[AuditRecord]:
        return [AuditRecord(*row) for row in self.stats()["audit"]]


def _bundle_dir(bundle: Path, workdir: Path) -> Path:
    """A bundle directory; a .tar.gz is unpacked into ``workdir`` first."""
    if bundle.is_dir():
        return bundle
    if not bundle.is_file():
        raise BundleError(f"{bundle}: no such bundle")
    target = workdir / "bundle"
    try:
        with tarfile.open(bundle, "r:*") as tar:
            tar.extractall(target, filter="data")
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        lines = str(exc).strip().splitlines()
        why = lines[0] if lines else type(exc).__name__
        raise BundleError(f"{bundle}: not a readable bundle archive ({why})") from None
    entries = list(target.iterdir())
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else target


def serve_bundle(bundle_dir: Path, *, host: str = "127.0.0.1", port: int = 0,
                 faults: Faults = NO_FAULTS, token: str | None = None,
                 kubeconfig_path: Path | None = None, in_subprocess: bool = False,
                 cache_pages: bool = True) -> RunningServer:
    """Serve ``bundle_dir`` over the Kubernetes API on loopback HTTPS and return at once.

    ``in_subprocess`` runs the server in its own Python process (benchmarks: the
    client's and server's CPU time do not share one GIL).
    """
    if in_subprocess:
        return _serve_subprocess(bundle_dir, host=host, port=port, faults=faults, token=token,
                                 kubeconfig_path=kubeconfig_path, cache_pages=cache_pages)
    workdir = Path(tempfile.mkdtemp(prefix="gpunode-apiserver-"))
    try:
        store = BundleStore(_bundle_dir(Path(bundle_dir), workdir), cache_pages=cache_pages)
        tls = make_tls_files(workdir, host)
        token = token or secrets.token_urlsafe(24)
        httpd = ApiHTTPServer((host, port), ApiHandler, store, faults=faults, token=token, tls=tls)
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    url = _url(host, httpd.server_address[1])
    kubeconfig = write_kubeconfig(kubeconfig_path or workdir / "kubeconfig", url,
                                  tls.ca_cert.read_bytes(), token,
                                  name=store.cluster_name() or "gpunode-test")
    _warm_types()
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.1},
                              name="gpunode-apiserver", daemon=True)
    thread.start()

    def stop() -> None:
        httpd.stopping.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
        shutil.rmtree(workdir, ignore_errors=True)

    return RunningServer(url, kubeconfig, tls.ca_cert, token, stop, workdir=workdir)


def _url(host: str, port: int) -> str:
    return f"https://[{host}]:{port}" if ":" in host else f"https://{host}:{port}"


def fault_args(faults: Faults) -> list[str]:
    """The command-line flags that recreate ``faults`` in a subprocess."""
    args = ["--latency", str(faults.latency_s), "--too-many-every", str(faults.too_many_every),
            "--retry-after", str(faults.retry_after_s), "--error-500-every",
            str(faults.error_500_every), "--drop-every", str(faults.drop_every)]
    for rule in faults.forbid:
        args += ["--forbid", rule]
    for rule in faults.answers:
        args += ["--answer", rule]
    return [*args, "--hang", str(faults.hang_s)]


def _serve_subprocess(bundle_dir: Path, *, host: str, port: int, faults: Faults,
                      token: str | None, kubeconfig_path: Path | None,
                      cache_pages: bool) -> RunningServer:
    workdir = Path(tempfile.mkdtemp(prefix="gpunode-apiserver-"))
    ready = workdir / "ready.json"
    argv = [sys.executable, "-m", "gpunode.apiserver", str(bundle_dir), "--host", host,
            "--port", str(port), "--ready-file", str(ready),
            # one argument: a random token may begin with "-", which argparse would take for an option
            f"--token={token or secrets.token_urlsafe(24)}", "--kubeconfig",
            str(kubeconfig_path or workdir / "kubeconfig"), *fault_args(faults)]
    if not cache_pages:
        argv.append("--no-page-cache")
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, env=dict(os.environ))
    info = _wait_ready(proc, ready)

    def stop() -> None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(workdir, ignore_errors=True)

    return RunningServer(info["url"], Path(info["kubeconfig"]), Path(info["ca"]),
                         info["token"], stop, pid=proc.pid)


def _wait_ready(proc: subprocess.Popen[bytes], ready: Path,
                timeout_s: float = 600) -> dict[str, str]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if ready.is_file():
            info: dict[str, str] = json.loads(ready.read_text())
            return info
        if proc.poll() is not None:
            raise BundleError(f"test API server exited with status {proc.returncode}")
        time.sleep(0.05)
    proc.kill()
    raise BundleError("test API server did not start in time")
