"""The agent's HTTP endpoints on one port (stdlib server, a bounded pool of workers).

``/metrics``  Prometheus text (or OpenMetrics when asked for) from the agent's registry.
``/healthz``  200 while probes are fresh, 503 once the last one is older than stale_after.
``/facts``    the last probe's JSON (``gpunode-probe.json``); ``?raw=1`` adds the raw
              texts the probe read, which is what the cluster CLI folds into a bundle.
``/report``   the node's diagnosis (report JSON v1).

Responses are built from the agent's latest snapshot, which is replaced as a
whole after each probe, so a request never sees half of one probe and half of
the next.
"""

from __future__ import annotations

import logging
import socket
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import msgspec
from prometheus_client.exposition import choose_encoder

from gpunode.agent.loop import Agent, encode_report

log = logging.getLogger(__name__)

JSON = "application/json"
TEXT = "text/plain; charset=utf-8"
_TRUE = ("1", "true", "yes")


#: Connections served at once; more wait for a worker instead of each holding a thread.
WORKERS = 64
#: Seconds a connection may sit idle (or trickle a request) before it is closed.
IDLE_TIMEOUT_S = 10.0


class AgentHTTPServer(HTTPServer):
    """Serves one agent with a bounded pool of workers; client errors are one debug line."""

    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], agent: Agent, workers: int = WORKERS) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, AgentHandler)
        self.agent = agent
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="gpunode-agent-http")

    def process_request(self, request: Any, client_address: Any) -> None:
        self._pool.submit(self._serve, request, client_address)

    def _serve(self, request: Any, client_address: Any) -> None:
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self.shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that disconnects or stalls is routine: one line, no traceback."""
        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError | TimeoutError):
            log.debug("client %s: %s", client_address, exc)
        else:
            log.warning("request from %s failed: %s: %s", client_address, type(exc).__name__, exc)

    def server_close(self) -> None:
        super().server_close()
        self._pool.shutdown(wait=False, cancel_futures=True)


class AgentHandler(BaseHTTPRequestHandler):
    """Routes GET requests to the four endpoints."""

    server: AgentHTTPServer
    protocol_version = "HTTP/1.1"
    server_version = "gpunode-agent"
    timeout = IDLE_TIMEOUT_S

    def log_message(self, format: str, *args: object) -> None:
        log.debug("%s %s", self.address_string(), format % args)

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        routes = {
            "/metrics": self._metrics,
            "/healthz": self._healthz,
            "/facts": self._facts,
            "/report": self._report,
        }
        handler = routes.get(url.path.rstrip("/") or "/")
        if handler is None:
            self._send(404, b"not found; try /metrics, /healthz, /facts, /report\n", TEXT)
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
            self._send(200, encode_report(snap.report), JSON)

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
