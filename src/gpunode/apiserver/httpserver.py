"""The test API server's HTTP server: TLS in the worker thread, request counters and the
audit trail. The request handler is passed in (``handler.ApiHandler``, or a test's own), so
this module sits below the handler that reads its state."""

from __future__ import annotations

import contextlib
import socket
import ssl
import sys
import threading
from collections import Counter
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from socketserver import BaseRequestHandler
from typing import Any

from gpunode.apiserver.faults import Faults
from gpunode.apiserver.store import BundleStore
from gpunode.apiserver.tls import TlsFiles

DEFAULT_USER = "system:serviceaccount:gpunode:gpunode-reader"


@dataclass(frozen=True)
class AuditRecord:
    """One authorised-or-not resource request, in RBAC terms."""

    verb: str
    resource: str
    namespace: str
    name: str


@dataclass
class Counters:
    """Thread-safe request counters and the audit trail of resource requests."""

    total: int = 0
    by_path: Counter[str] = field(default_factory=Counter)
    audit: list[AuditRecord] = field(default_factory=list)
    hits: Counter[int] = field(default_factory=Counter)
    #: Exceptions the handler raised (one line each): a test server bug, never a fault.
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, method: str, path: str) -> int:
        with self.lock:
            self.total += 1
            self.by_path[f"{method} {path}"] += 1
            return self.total

    def record(self, verb: str, resource: str, namespace: str, name: str) -> None:
        with self.lock:
            self.audit.append(AuditRecord(verb, resource, namespace, name))

    def take(self, rule: int, limit: int) -> bool:
        """Count one use of fault rule ``rule``; False once its ``limit`` (0: none) is spent."""
        with self.lock:
            if limit and self.hits[rule] >= limit:
                return False
            self.hits[rule] += 1
            return True

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            return {"requests": self.total, "by_path": dict(self.by_path),
                    "errors": list(self.errors),
                    "audit": [[a.verb, a.resource, a.namespace, a.name] for a in self.audit]}


class ApiHTTPServer(ThreadingHTTPServer):
    """ThreadingHTTPServer that does the TLS handshake in the worker thread."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256

    def __init__(self, address: tuple[str, int], handler: type[BaseRequestHandler], store: BundleStore,
                 *, faults: Faults, token: str, tls: TlsFiles, user: str = DEFAULT_USER) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, handler)
        self.store, self.faults, self.token, self.user = store, faults, token, user
        self.counters = Counters()
        #: Set when the server stops: ``stall`` faults let go of their connections.
        self.stopping = threading.Event()
        self.ssl_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ssl_context.load_cert_chain(tls.server_cert, tls.server_key)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Record a handler's exception for the tests to see, instead of printing it
        into the stderr of a client that may run in the same process."""
        kind, exc, _ = sys.exc_info()
        with self.counters.lock:
            self.counters.errors.append(f"{kind.__name__ if kind else 'error'}: {exc}")

    def finish_request(self, request: Any, client_address: Any) -> None:
        try:
            conn = self.ssl_context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return
        try:
            self.RequestHandlerClass(conn, client_address, self)  # type: ignore[arg-type]
        except (OSError, ssl.SSLError):
            pass
        finally:
            with contextlib.suppress(OSError):
                conn.close()
