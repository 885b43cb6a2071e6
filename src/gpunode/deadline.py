"""Deadlines on every socket read and write of a live request, not only on each read.

httpx2 bounds each read and write by its timeout, so a server that sends one byte
of its status line or headers every second, or stops between them, never trips it:
the answer's headers never complete and the call waits for ever (the body is read by
``collect.kube._read_by``, which checks its own deadline between chunks). The transport built
here gives every connection a stream whose reads, writes, TLS handshake and connect
are each clipped to the time left before the deadline the calling thread set with
``deadline`` (a thread-local: each worker thread runs its own call), and fail with
httpcore2's own timeout errors once it has passed, which httpx2 turns into its
``TimeoutException`` as for any other timeout. Threads that set no deadline (httpx2's
WebSocket reader behind an exec, whose caller waits with its own timeout) read as
before.

Name resolution happens inside ``socket.create_connection`` and is bounded by the
system resolver's own timeouts (resolv.conf), not by this deadline.
"""

from __future__ import annotations

import ssl
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import httpcore2
import httpx2

_LOCAL = threading.local()


@contextmanager
def deadline(at: float) -> Iterator[None]:
    """Every socket operation of this thread's requests ends by ``at`` (time.monotonic)."""
    before = getattr(_LOCAL, "at", None)
    _LOCAL.at = at if before is None else min(at, before)
    try:
        yield
    finally:
        _LOCAL.at = before


def _clipped(timeout: float | None, error: type[Exception]) -> float | None:
    """``timeout`` shortened to the time left before this thread's deadline; ``error`` past it."""
    at: float | None = getattr(_LOCAL, "at", None)
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        raise error("the request's deadline passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore2.NetworkStream):
    """A connection whose every operation ends by the calling thread's deadline."""

    def __init__(self, inner: httpcore2.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _clipped(timeout, httpcore2.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        # one clip per piece: a peer that takes a little at a time still meets the deadline
        view = memoryview(buffer)
        step = 16 * 1024
        for start in range(0, len(view), step):
            self._inner.write(bytes(view[start:start + step]), _clipped(timeout, httpcore2.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore2.NetworkStream:
        inner = self._inner.start_tls(ssl_context, server_hostname,
                                      _clipped(timeout, httpcore2.ConnectTimeout))
        return _DeadlineStream(inner)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore2.NetworkBackend):
    """httpcore2's own sync backend, its streams bounded by the calling thread's deadline."""

    def __init__(self) -> None:
        self._inner = httpcore2.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore2.NetworkStream:
        stream = self._inner.connect_tcp(host, port, _clipped(timeout, httpcore2.ConnectTimeout),
                                         local_address, socket_options)
        return _DeadlineStream(stream)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> httpcore2.NetworkStream:
        stream = self._inner.connect_unix_socket(path, _clipped(timeout, httpcore2.ConnectTimeout),
                                                 socket_options)
        return _DeadlineStream(stream)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def deadline_transport(verify: ssl.SSLContext) -> httpx2.HTTPTransport:
    """An httpx2 transport (TLS as ``verify`` says, no proxy from the environment) whose
    connections honour ``deadline``; give it to a client with ``transport=``."""
    transport = httpx2.HTTPTransport(verify=verify, trust_env=False)
    # The pool HTTPTransport builds, the same but for the network backend (httpx2 has no
    # argument for it); tests/live/test_unreadable_cluster.py holds the behaviour.
    transport._pool = httpcore2.ConnectionPool(
        ssl_context=verify, max_connections=100, max_keepalive_connections=20, keepalive_expiry=5.0,
        network_backend=_DeadlineBackend())
    return transport
