"""The agent's endpoint under many clients: bounded workers, no tracebacks for clients that
go away, quick answers (10,000 requests from 50 clients)."""

from __future__ import annotations

import http.client
import logging
import resource
import socket
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from agent_helpers import AgentFactory, recorded_probe

CLIENTS = 50
REQUESTS = 10_000


@pytest.mark.slow
def test_many_clients_get_quick_answers_from_a_bounded_server(run_agent: AgentFactory) -> None:
    agent = run_agent(recorded_probe)
    port = int(agent.url.rsplit(":", 1)[1])
    time.sleep(0.2)

    def client(count: int) -> list[float]:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        took = []
        for _ in range(count):
            started = time.perf_counter()
            conn.request("GET", "/healthz")
            conn.getresponse().read()
            took.append(time.perf_counter() - started)
        conn.close()
        return took

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with ThreadPoolExecutor(CLIENTS) as pool:
        latencies = sorted(t for ts in pool.map(client, [REQUESTS // CLIENTS] * CLIENTS) for t in ts)
    assert len(latencies) == REQUESTS
    p99 = latencies[int(len(latencies) * 0.99)]
    # Clients and server share one interpreter here; 1.5 s leaves room for a loaded CI machine
    # while still catching a server that serialises clients (the old one: ~1 s p99 at 20).
    assert p99 < 1.5, f"p99 {p99:.3f} s"
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 100 * 1024


def test_a_client_that_disconnects_early_leaves_no_traceback(
        run_agent: AgentFactory, caplog: pytest.LogCaptureFixture,
        capsys: pytest.CaptureFixture[str]) -> None:
    agent = run_agent(recorded_probe)
    port = int(agent.url.rsplit(":", 1)[1])
    caplog.set_level(logging.DEBUG)
    for _ in range(20):
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(b"GET /facts?raw=1 HTTP/1.1\r\nHost: x\r\n\r\n")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    time.sleep(0.5)
    status, _, _ = agent.get("/healthz")
    assert status in (200, 503)
    assert "Traceback" not in capsys.readouterr().err
    assert not [r for r in caplog.records if r.exc_info]
