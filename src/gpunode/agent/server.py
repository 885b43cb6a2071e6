"""The agent's HTTP endpoints on one port (stdlib server: one thread reads request heads,
a reserved path answers /healthz, a bounded pool of workers the rest).

``/metrics``  Prometheus text (or OpenMetrics when asked for) from the agent's registry.
``/healthz``  200 while probes are fresh, 503 once the last one is older than stale_after.
``/facts``    the last probe's JSON (``gpunode-probe.json``); ``?raw=1`` adds the raw
              texts the probe read, which is what the cluster CLI folds into a bundle.
``/report``   the node's diagnosis (report JSON v1).
``/history``  the node's history file (``gpunode-history/v1``; gpunode.fleet.history).
``/trends``   the trends over that history (Xid counts, ECC, remapped rows, NVLink, restarts).

Responses are built from the agent's latest snapshot, which is replaced as a
whole after each probe, so a request never sees half of one probe and half of
the next.
"""

from __future__ import annotations

import contextlib
import io
import logging
import selectors
import socket
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, HTTPServer
from socketserver import _SocketWriter  # type: ignore[attr-defined]
from typing import Any
from urllib.parse import parse_qs, urlsplit

import msgspec
from prometheus_client.exposition import choose_encoder

from gpunode.agent.loop import Agent, encode_report

log = logging.getLogger(__name__)

JSON = "application/json"
TEXT = "text/plain; charset=utf-8"
_TRUE = ("1", "true", "yes")


#: Requests served at once by the pool (metrics, facts, reports); more wait for a worker.
WORKERS = 64
#: Seconds a connection may take to send a whole request head, or sit idle between two
#: requests, before it is closed (a trickling or idle client holds no worker meanwhile).
IDLE_TIMEOUT_S = 10.0
#: Seconds a worker may spend sending one answer to a client that reads slowly.
WRITE_TIMEOUT_S = 10.0
#: A request head (request line and headers) larger than this is refused (431).
MAX_HEAD_BYTES = 16 * 1024
#: Connections waiting for a request at once; past it the one idle longest is closed, so
#: new clients (the kubelet's probe among them) are always read.
MAX_WAITING = 512
_HEALTH = "/healthz"


class _Conn:
    """A connection waiting for its next request head."""

    __slots__ = ("address", "buffer", "ends", "sock")

    def __init__(self, sock: socket.socket, address: Any, buffer: bytes = b"") -> None:
        self.sock = sock
        self.address = address
        self.buffer = bytearray(buffer)
        self.ends = time.monotonic() + IDLE_TIMEOUT_S


class AgentHTTPServer(HTTPServer):
    """Serves one agent: one thread reads request heads from every connection at once
    (selectors, non-blocking, each connection given IDLE_TIMEOUT_S), answers /healthz
    itself, and hands other complete requests to a bounded pool of workers. So idle,
    trickling and slow clients hold no worker, and the health check never waits behind
    them; client errors are one debug line."""

    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], agent: Agent, workers: int = WORKERS) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, AgentHandler)
        self.agent = agent
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="gpunode-agent-http")
        self._heads = _HeadReader(self)
        self._heads.start()

    def process_request(self, request: Any, client_address: Any) -> None:
        self._heads.add(_Conn(request, client_address))

    def dispatch(self, conn: _Conn, head: bytes) -> None:
        """A complete request head: /healthz answered at once, the rest by a worker."""
        if _path_of(head) == _HEALTH:
            fresh, detail = self.agent.health()
            body = f"{'ok' if fresh else 'stale'}: {detail}\n".encode()
            answer = (f"HTTP/1.1 {200 if fresh else 503} {'OK' if fresh else 'Service Unavailable'}"
                      f"\r\nServer: gpunode-agent\r\nContent-Type: {TEXT}\r\n"
                      f"Content-Length: {len(body)}\r\n\r\n").encode() + body
            try:
                sent = conn.sock.send(answer)  # non-blocking: a client that reads nothing is closed
            except OSError:
                sent = -1
            if sent == len(answer) and _keeps_alive(head):
                self._heads.add(conn)
            else:
                self.shutdown_request(conn.sock)
            return
        self._pool.submit(self._serve, conn, head)

    def _serve(self, conn: _Conn, head: bytes) -> None:
        keep = False
        try:
            conn.sock.setblocking(True)
            conn.sock.settimeout(WRITE_TIMEOUT_S)  # sendall: the whole answer within it
            handler = AgentHandler(_Request(conn.sock, head), conn.address, self)  # type: ignore[arg-type]
            keep = not handler.close_connection
        except Exception:
            self.handle_error(conn.sock, conn.address)
        if keep:
            self._heads.add(conn)
        else:
            self.shutdown_request(conn.sock)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that disconnects or stalls is routine: one line, no traceback."""
        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError | TimeoutError):
            log.debug("client %s: %s", client_address, exc)
        else:
            log.warning("request from %s failed: %s: %s", client_address, type(exc).__name__, exc)

    def server_close(self) -> None:
        self._heads.stop()
        super().server_close()
        self._pool.shutdown(wait=False, cancel_futures=True)


class _Request:
    """A connection and the request head already read from it, as a handler's request."""

    def __init__(self, sock: socket.socket, head: bytes) -> None:
        self.sock = sock
        self.head = head


def _path_of(head: bytes) -> str:
    parts = head.split(b"\r\n", 1)[0].split()
    if len(parts) < 2 or parts[0] != b"GET":
        return ""
    return urlsplit(parts[1].decode("latin-1")).path.rstrip("/") or "/"


def _keeps_alive(head: bytes) -> bool:
    lines = head.lower().split(b"\r\n")
    if not lines[0].endswith(b"http/1.1"):
        return any(line.replace(b" ", b"") == b"connection:keep-alive" for line in lines[1:])
    return not any(line.replace(b" ", b"") == b"connection:close" for line in lines[1:])


class _HeadReader(threading.Thread):
    """Reads request heads from every waiting connection in one thread (see AgentHTTPServer)."""

    def __init__(self, server: AgentHTTPServer) -> None:
        super().__init__(name="gpunode-agent-heads", daemon=True)
        self.server = server
        self.selector = selectors.DefaultSelector()
        self.waiting: dict[int, _Conn] = {}
        self._incoming: list[_Conn] = []
        self._lock = threading.Lock()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self.selector.register(self._wake_r, selectors.EVENT_READ)
        self._stopping = False

    def add(self, conn: _Conn) -> None:
        """A connection to read the next request of (from any thread)."""
        conn.ends = time.monotonic() + IDLE_TIMEOUT_S
        with self._lock:
            self._incoming.append(conn)
        self._wake()

    def stop(self) -> None:
        self._stopping = True
        self._wake()
        self.join(timeout=5)

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # a full pipe: the reader is awake anyway
            self._wake_w.send(b"\0")

    def run(self) -> None:
        try:
            while not self._stopping:
                self._take_incoming()
                for key, _ in self.selector.select(self._wait()):
                    if key.fileobj is self._wake_r:
                        self._drain_wake()
                    else:
                        self._readable(key.data)
                self._expire()
        finally:
            for conn in list(self.waiting.values()):
                self._close(conn)
            self.selector.close()
            self._wake_r.close()
            self._wake_w.close()

    def _wait(self) -> float:
        if not self.waiting:
            return 1.0
        return max(0.0, min(1.0, min(c.ends for c in self.waiting.values()) - time.monotonic()))

    def _drain_wake(self) -> None:
        try:
            while self._wake_r.recv(4096):
                pass
        except (BlockingIOError, OSError):
            pass

    def _take_incoming(self) -> None:
        with self._lock:
            incoming, self._incoming = self._incoming, []
        for conn in incoming:
            if len(self.waiting) >= MAX_WAITING:  # the one idle longest makes room
                self._close(min(self.waiting.values(), key=lambda c: c.ends))
            try:
                conn.sock.setblocking(False)
                self.selector.register(conn.sock, selectors.EVENT_READ, conn)
            except (OSError, ValueError):
                self.server.shutdown_request(conn.sock)
                continue
            self.waiting[conn.sock.fileno()] = conn
            if b"\r\n\r\n" in conn.buffer:  # pipelined: the next request is already here
                self._complete(conn)

    def _readable(self, conn: _Conn) -> None:
        try:
            chunk = conn.sock.recv(MAX_HEAD_BYTES)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if not chunk:
            self._close(conn)
            return
        conn.buffer += chunk
        self._complete(conn)

    def _complete(self, conn: _Conn) -> None:
        end = conn.buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(conn.buffer) > MAX_HEAD_BYTES:
                self._refuse(conn)
            return
        head, rest = bytes(conn.buffer[:end + 4]), bytes(conn.buffer[end + 4:])
        self._forget(conn)
        conn.buffer = bytearray(rest)
        self.server.dispatch(conn, head)

    def _refuse(self, conn: _Conn) -> None:
        with contextlib.suppress(OSError):
            conn.sock.send(b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
                           b"Content-Length: 0\r\nConnection: close\r\n\r\n")
        self._close(conn)

    def _expire(self) -> None:
        now = time.monotonic()
        for conn in [c for c in self.waiting.values() if c.ends <= now]:
            log.debug("client %s: no complete request within %.0f s", conn.address, IDLE_TIMEOUT_S)
            self._close(conn)

    def _forget(self, conn: _Conn) -> None:
        self.waiting.pop(conn.sock.fileno(), None)
        with contextlib.suppress(KeyError, ValueError, OSError):
            self.selector.unregister(conn.sock)

    def _close(self, conn: _Conn) -> None:
        self._forget(conn)
        self.server.shutdown_request(conn.sock)


class AgentHandler(BaseHTTPRequestHandler):
    """Answers one request whose head was read already (``_Request``): the four endpoints."""

    server: AgentHTTPServer
    protocol_version = "HTTP/1.1"
    server_version = "gpunode-agent"

    def setup(self) -> None:
        request: _Request = self.request
        self.connection = request.sock
        self.rfile = io.BytesIO(request.head)
        self.wfile = _SocketWriter(request.sock)

    def handle(self) -> None:
        self.close_connection = True
        self.handle_one_request()

    def finish(self) -> None:
        self.wfile.flush()

    def log_message(self, format: str, *args: object) -> None:
        log.debug("%s %s", self.address_string(), format % args)

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        routes = {
            "/metrics": self._metrics,
            "/healthz": self._healthz,
            "/facts": self._facts,
            "/report": self._report,
            "/history": self._history,
            "/trends": self._trends,
        }
        handler = routes.get(url.path.rstrip("/") or "/")
        if handler is None:
            self._send(404, b"not found; try /metrics, /healthz, /facts, /report, /history, /trends\n", TEXT)
            return
        handler(parse_qs(url.query))

    def _metrics(self, _query: dict[str, list[str]]) -> None:
        encoder, content_type = choose_encoder(self.headers.get("Accept", ""))
        self._send(200, encoder(self.server.agent.metrics.registry), content_type)

    def _healthz(self, _query: dict[str, list[str]]) -> None:
        fresh, detail = self.server.agent.health()
        self._send(200 if fresh else 503, f"{'ok' if fresh else 'stale'}: {detail}\n".encode(), TEXT)

    def _facts(self, query: dict[str, list[str]]) -> None:
        snap = self.server.agent.snapshot
        if snap is None:
            self._send(503, b'{"error": "no probe result yet"}\n', JSON)
        elif query.get("raw", [""])[-1].lower() in _TRUE:
            self._send(200, msgspec.json.encode(snap.result), JSON)
        else:
            self._send(200, snap.facts_json, JSON)

    def _report(self, _query: dict[str, list[str]]) -> None:
        snap = self.server.agent.snapshot
        if snap is None or snap.report is None:
            self._send(503, b'{"error": "no diagnosis yet"}\n', JSON)
        else:
            agent = self.server.agent
            report = snap.report
            if agent.history is not None:  # the node's trends ride along (report JSON v1 field)
                report = msgspec.structs.replace(report, trends=agent.trends())
            self._send(200, encode_report(report), JSON)

    def _history(self, _query: dict[str, list[str]]) -> None:
        store = self.server.agent.history
        if store is None:
            self._send(404, b'{"error": "this agent keeps no history (--history-dir \'\')"}\n', JSON)
        else:
            self._send(200, store.data, JSON)

    def _trends(self, _query: dict[str, list[str]]) -> None:
        self._send(200, msgspec.json.encode({"trends": self.server.agent.trends()}), JSON)

    def _send(self, code: int, body: bytes, content_type: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class RunningServer:
    """A started endpoint server; ``stop()`` closes the socket and joins its thread."""

    def __init__(self, httpd: AgentHTTPServer, thread: threading.Thread) -> None:
        self._httpd = httpd
        self._thread = thread

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


def start_server(agent: Agent, host: str = "0.0.0.0", port: int = 9808) -> RunningServer:
    """Listen on ``host:port`` (port 0 picks a free one) in a background thread."""
    httpd = AgentHTTPServer((host, port), agent)
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.2}, name="gpunode-agent-http", daemon=True
    )
    thread.start()
    return RunningServer(httpd, thread)
