"""Server side of the Kubernetes exec stream over WebSocket (channel.k8s.io v4/v5).

After the HTTP upgrade every binary message starts with one channel byte:
1 stdout, 2 stderr, 3 error — a JSON ``Status`` that ends the stream and
carries the exit code. Framing is done by wsproto (sans-IO), the same
library the client side (httpx2) uses.
"""

from __future__ import annotations

import base64
import hashlib
import socket
from collections.abc import Iterator
from threading import Event
from typing import BinaryIO

import msgspec
from wsproto.connection import Connection, ConnectionType
from wsproto.events import BytesMessage, CloseConnection
from wsproto.utilities import RemoteProtocolError

from gpunode.apiserver.nodeview import ExecResult

SUBPROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")
_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
_CHUNK = 32 * 1024


def choose_subprotocol(offered: str) -> str | None:
    """The best protocol both sides speak, preferring v5 like the API server."""
    wanted = {p.strip() for p in offered.split(",") if p.strip()}
    return next((p for p in SUBPROTOCOLS if p in wanted), None)


def accept_key(client_key: str) -> str:
    return base64.b64encode(hashlib.sha1(client_key.encode() + _GUID).digest()).decode()


def error_status(result: ExecResult) -> bytes:
    """Channel-3 Status: Success, NonZeroExitCode with the code, or InternalError."""
    if result.internal_error:
        return msgspec.json.encode({
            "metadata": {}, "status": "Failure",
            "message": f"Internal error occurred: {result.internal_error}",
            "reason": "InternalError", "details": {"causes": [{"message": result.internal_error}]},
            "code": 500})
    if result.exit_code == 0:
        return b'{"metadata":{},"status":"Success"}'
    return msgspec.json.encode({
        "metadata": {}, "status": "Failure",
        "message": f"command terminated with non-zero exit code: error executing command, "
                   f"exit code {result.exit_code}",
        "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": str(result.exit_code)}]}})


def frames(result: ExecResult, stdout: bool, stderr: bool) -> Iterator[bytes]:
    """Channel-prefixed messages for one finished command, error channel last."""
    for channel, data, wanted in ((1, result.stdout, stdout), (2, result.stderr, stderr)):
        for start in range(0, len(data) if wanted else 0, _CHUNK):
            yield bytes((channel,)) + data[start:start + _CHUNK]
    yield b"\x03" + error_status(result)


def send_only(wfile: BinaryIO, messages: list[bytes]) -> None:
    """Send messages without the close that ends the stream (a command still running)."""
    conn = Connection(ConnectionType.SERVER)
    for message in messages:
        wfile.write(conn.send(BytesMessage(data=message)))
    wfile.flush()


def endless(wfile: BinaryIO, stopping: Event, chunk: bytes = b"x" * _CHUNK) -> None:
    """stdout for ever, never an exit status (a command that writes without end), until the
    client goes away or the server stops."""
    conn = Connection(ConnectionType.SERVER)
    frame = conn.send(BytesMessage(data=b"\x01" + chunk))
    try:
        while not stopping.is_set():
            wfile.write(frame)
    except OSError:
        return


def stream(wfile: BinaryIO, rfile: BinaryIO, sock: socket.socket,
           messages: Iterator[bytes]) -> None:
    """Send the messages, close, and wait briefly for the client's close frame."""
    conn = Connection(ConnectionType.SERVER)
    for message in messages:
        wfile.write(conn.send(BytesMessage(data=message)))
    wfile.write(conn.send(CloseConnection(code=1000)))
    wfile.flush()
    _drain_until_close(conn, rfile, sock)


def _drain_until_close(conn: Connection, rfile: BinaryIO, sock: socket.socket) -> None:
    sock.settimeout(2.0)
    try:
        while True:
            data = rfile.read1(65536)  # type: ignore[attr-defined]
            if not data:
                return
            conn.receive_data(data)
            if any(isinstance(e, CloseConnection) for e in conn.events()):
                return
    except (OSError, RemoteProtocolError):
        return
