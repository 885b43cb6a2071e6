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

``whole_run`` adds the run's own deadline (``--timeout``): the socket operations of every
thread inside a request's deadline end by it too (the collector's workers, the main
thread), the API client gives up a call that would outlast it, and a timer ends the run at
it plus ``BACKSTOP_S`` with ``RunTimedOut`` should anything not yet bounded still be
running. httpx2's WebSocket reader threads stay outside it, as outside the request's own
deadline: the exec's caller waits for them within its own, and an exception raised in
such a thread would be printed as a traceback.
"""

from __future__ import annotations

import signal
import ssl
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import Any

import httpcore2
import httpx2

from gpunode.errors import SourceUnreachable

_LOCAL = threading.local()
#: How long past ``--timeout`` the timer waits before it ends the run itself: what the
#: cooperative bounds let through (local work after the last read, a loop not yet bounded).
BACKSTOP_S = 2.0


class RunTimedOut(SourceUnreachable):
    """The run's ``--timeout`` passed (exit 3, as a source that could not be read)."""


@dataclass(frozen=True)
class RunDeadline:
    """The moment the whole run must have ended by (``--timeout``), on time.monotonic."""

    at: float
    #: the ``--timeout`` given, in seconds
    seconds: float

    def left(self) -> float:
        return self.at - time.monotonic()

    def passed(self) -> bool:
        return self.left() <= 0

    @property
    def reason(self) -> str:
        """Why something was not read, as ``missing`` and warnings say it."""
        return f"not read within the run's --timeout {self.seconds:g} s"


_RUN: list[RunDeadline] = []


def run_deadline() -> RunDeadline | None:
    """The deadline of the run under way, if ``--timeout`` gave one."""
    return _RUN[-1] if _RUN else None


def within_run(seconds: float) -> float:
    """``seconds``, shortened to what is left of the run (at least a moment, so a late call
    fails at once through its own timeout path)."""
    run = run_deadline()
    return seconds if run is None else max(0.01, min(seconds, run.left()))


def cut_short(reason: str = "") -> bool:
    """Whether the run's ``--timeout`` passed, or ``reason`` (a call given up on) says it
    ended the call (its retries would have outlasted the run)."""
    run = run_deadline()
    return run is not None and (run.passed() or run.reason in reason)


def out_of_time(server: str, not_read: str) -> None:
    """RunTimedOut (exit 3) naming what the run's ``--timeout`` left unread from ``server``;
    nothing without a deadline."""
    run = run_deadline()
    if run is not None:
        raise RunTimedOut(f"the run's --timeout {run.seconds:g} s ran out before {server} was read: "
                          f"not read: {not_read}")


@contextmanager
def whole_run(seconds: float | None, what: str = "--timeout") -> Iterator[RunDeadline | None]:
    """The run inside ends by ``seconds`` from now (None: no deadline). On the main thread a
    timer raises RunTimedOut ``BACKSTOP_S`` after it, should the run still be going."""
    if seconds is None:
        yield None
        return
    run = RunDeadline(time.monotonic() + seconds, seconds)
    _RUN.append(run)
    timer = _Backstop(run, what) if threading.current_thread() is threading.main_thread() else None
    try:
        yield run
    finally:
        if timer is not None:
            timer.cancel()
        _RUN.remove(run)


class _Backstop:
    """SIGALRM at the deadline plus BACKSTOP_S: RunTimedOut in the main thread, which takes
    Ctrl-C's path (queued work cancelled, partial and temporary bundles removed)."""

    def __init__(self, run: RunDeadline, what: str) -> None:
        self.run, self.what = run, what
        self.previous = signal.signal(signal.SIGALRM, self._fire)
        signal.setitimer(signal.ITIMER_REAL, max(run.left(), 0.0) + BACKSTOP_S)

    def _fire(self, _signum: int, _frame: FrameType | None) -> None:
        raise RunTimedOut(f"the run did not end within {self.what} {self.run.seconds:g} s: "
                          "stopped, nothing written")

    def cancel(self) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL if self.previous is None else self.previous)


@contextmanager
def outside_run() -> Iterator[None]:
    """This thread's requests ignore the run's deadline (clean-up after it, bounded by
    their own timeouts); on the main thread the backstop waits for it, then gives the run
    at least BACKSTOP_S more."""
    before = getattr(_LOCAL, "outside", False)
    _LOCAL.outside = True
    main = run_deadline() is not None and threading.current_thread() is threading.main_thread()
    left = signal.setitimer(signal.ITIMER_REAL, 0)[0] if main else 0.0
    try:
        yield
    finally:
        _LOCAL.outside = before
        if main and left:
            signal.setitimer(signal.ITIMER_REAL, max(left, BACKSTOP_S))


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
    run = run_deadline()
    if at is not None and run is not None and not getattr(_LOCAL, "outside", False):
        at = min(at, run.at)
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
