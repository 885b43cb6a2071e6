"""Agent facts folded into live collection, end to end through the test API server.

The simulated Falcon AI cluster gets a gpunode agent pod on each GPU node and a
probe result recorded on a real H200, adapted to the node it is filed under; the
test server answers the agents' ``/facts`` through the pod proxy from that file.
Also here: the test server drains refused request bodies (keep-alive safety).
"""

from __future__ import annotations

import http.client
import ssl
from collections.abc import Iterator

from gpunode.apiserver import RunningServer

PATCH_BODY = b'{"status":{"conditions":[{"type":"GPUStackHealthy","status":"True"}]}}'


def _connection(server: RunningServer) -> http.client.HTTPSConnection:
    context = ssl.create_default_context(cafile=str(server.ca_cert_path))
    host, port = server.url.removeprefix("https://").rsplit(":", 1)
    return http.client.HTTPSConnection(host, int(port), context=context, timeout=30)


def _headers(server: RunningServer) -> dict[str, str]:
    return {"Authorization": f"Bearer {server.token}",
            "Content-Type": "application/strategic-merge-patch+json"}


def test_refused_write_leaves_the_kept_alive_connection_usable(mini_server: RunningServer) -> None:
    conn = _connection(mini_server)
    try:
        conn.request("PATCH", "/api/v1/nodes/gpu-wk-01/status", body=PATCH_BODY,
                     headers=_headers(mini_server))
        refused = conn.getresponse()
        assert (refused.status, refused.getheader("Connection")) == (405, None)
        refused.read()
        conn.request("GET", "/version", headers=_headers(mini_server))
        answer = conn.getresponse()
        assert answer.status == 200
        assert b'"gitVersion"' in answer.read()
    finally:
        conn.close()


def test_refused_write_of_unknown_length_closes_the_connection(
        mini_server: RunningServer) -> None:
    def chunks() -> Iterator[bytes]:
        yield PATCH_BODY[:20]
        yield PATCH_BODY[20:]

    conn = _connection(mini_server)
    try:
        conn.request("PATCH", "/api/v1/nodes/gpu-wk-01/status", body=chunks(),
                     headers=_headers(mini_server), encode_chunked=True)
        refused = conn.getresponse()
        assert (refused.status, refused.getheader("Connection")) == (405, "close")
        refused.read()
        conn.request("GET", "/version", headers=_headers(mini_server))  # reconnects
        assert conn.getresponse().status == 200
    finally:
        conn.close()

