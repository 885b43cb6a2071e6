"""HTTP request handling: routing, auth, faults, and the answers themselves.

One handler instance serves one connection (HTTP/1.1 keep-alive). Every
answer is either JSON (objects, lists, Status errors), text (logs, metrics)
or an upgraded WebSocket stream (exec).
"""

from __future__ import annotations

import gzip
import hmac
import socket
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import msgspec

from gpunode.apiserver import discovery, execws, nodeview
from gpunode.apiserver.faults import LOGIN_PAGE, REDIRECT_TO
from gpunode.apiserver.selectors import SelectorError
from gpunode.apiserver.status import forbidden, not_found, status_bytes
from gpunode.apiserver.store import EXPIRED_MESSAGE, Collection, ContinueError, ListQuery
from gpunode.collect.slim import Container, Pod

if TYPE_CHECKING:
    from gpunode.apiserver.httpserver import ApiHTTPServer

STATS_PATH = "/_gpunode/stats"
EXPIRE_PATH = "/_gpunode/expire-continue"
GZIP_THRESHOLD = 128 * 1024  # the API server compresses only large responses
MAX_DRAIN_BYTES = 16 * 1024 * 1024  # larger request bodies close the connection instead
_TRUE = {"1", "t", "T", "TRUE", "true", "True"}
_FALSE = {"0", "f", "F", "FALSE", "false", "False"}


class HttpError(Exception):
    """Stop handling and answer with this Status body."""

    def __init__(self, code: int, body: bytes, headers: dict[str, str] | None = None,
                 content_type: str = "application/json") -> None:
        super().__init__(code)
        self.code = code
        self.body = body
        self.headers = headers or {}
        self.content_type = content_type


#: ``answers`` faults that are not the API's answer at all: a login page, a redirect to one.
_NOT_THE_API = {
    "html": HttpError(200, LOGIN_PAGE, content_type="text/html; charset=utf-8"),
    "redirect": HttpError(302, b"", {"Location": REDIRECT_TO}, content_type="text/plain"),
}


def _answered(what: str, code: int, req: ResourcePath, retry_after_s: int) -> HttpError | None:
    """The answer an ``answers`` fault gives instead of the real one; None for a damaged body."""
    if code == 410:
        return HttpError(410, status_bytes(410, EXPIRED_MESSAGE))
    if code == 429:
        return HttpError(429, status_bytes(429, "Too many requests, please try again later.",
                                           details={"retryAfterSeconds": retry_after_s}),
                         {"Retry-After": str(retry_after_s)})
    if code == 404:
        return HttpError(404, not_found(req.plural, req.name or req.plural, req.group))
    if code:
        return HttpError(code, status_bytes(code, f"injected {code}"))
    return _NOT_THE_API.get(what)


def bad_request(message: str) -> HttpError:
    return HttpError(400, status_bytes(400, message))


def go_bool(values: dict[str, list[str]], key: str) -> bool:
    """Query booleans as Go's strconv.ParseBool reads them (``watch=True`` is true)."""
    raw = values.get(key, [""])[-1]
    if raw in _TRUE:
        return True
    if raw in _FALSE or raw == "":
        return False
    raise bad_request(f'strconv.ParseBool: parsing "{raw}": invalid syntax')


def go_int(values: dict[str, list[str]], key: str) -> int | None:
    raw = values.get(key, [""])[-1]
    if raw == "":
        return None
    try:
        return int(raw)
    except ValueError:
        raise bad_request(f'strconv.ParseInt: parsing "{raw}": invalid syntax') from None


@dataclass(frozen=True)
class ResourcePath:
    """A parsed ``/api[s]/...`` path; ``plural`` is empty for discovery."""

    group: str
    version: str
    namespace: str = ""
    plural: str = ""
    name: str = ""
    sub: str = ""
    rest: str = ""

    @property
    def resource(self) -> str:
        return f"{self.plural}/{self.sub}" if self.sub else self.plural


def parse_resource_path(path: str) -> ResourcePath | None:
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 2 and parts[0] == "api":
        group, version, rest = "", parts[1], parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    namespace = ""
    if len(rest) == 2 and rest[0] == "namespaces" and not group:
        return ResourcePath(group, version, plural="namespaces", name=rest[1])
    if len(rest) >= 3 and rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
    fields = [*rest[:3], "/".join(rest[3:])] + [""] * 4
    return ResourcePath(group, version, namespace, fields[0], fields[1], fields[2],
                        "/" + fields[3] if fields[3] else "")


def verb_of(req: ResourcePath, query: dict[str, list[str]]) -> str:
    if req.sub == "exec":
        return "create"
    if req.name:
        return "get"
    return "watch" if go_bool(query, "watch") else "list"


#: The longest a ``stall`` fault holds a connection (the server's stop ends it sooner).
STALL_MAX_S = 600.0


class Stalled(Exception):
    """A ``stall`` fault ends: close the connection without an answer."""


class ApiHandler(BaseHTTPRequestHandler):
    """Answers the Kubernetes REST API from a BundleStore."""

    protocol_version = "HTTP/1.1"
    server_version = "gpunode-test-apiserver"
    disable_nagle_algorithm = True  # headers and body are separate writes: no 40 ms stalls
    server: ApiHTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the counters tell what happened."""

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    def _handle(self, method: str) -> None:
        self.damage = ""  # "cut" or "garble" from an ``answers`` fault, for this answer
        url = urlsplit(self.path)
        path = url.path.rstrip("/") or "/"
        query = parse_qs(url.query, keep_blank_values=True)
        try:
            self._drain_body()
            if path.startswith("/_gpunode/"):
                self._control(method, path)
            elif self._inject_fault(method, path):
                self._check_auth()
                self._route(method, path, query)
        except HttpError as err:
            self._send(err.code, err.body, headers=err.headers, content_type=err.content_type)
        except (BrokenPipeError, ConnectionResetError, Stalled):
            self.close_connection = True

    def _drain_body(self) -> None:
        """Read the request body before answering (every answer here ignores it).

        Unread, a refused write's body would stay on the kept-alive connection and be
        parsed as the next request line (the client then gets a 501). A body over
        ``MAX_DRAIN_BYTES``, or one that ends early, closes the connection instead.
        """
        self.request_body = b""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            complete = self._drain_chunks()
        else:
            length = self.headers.get("Content-Length", "0").strip() or "0"
            body = self._read(int(length)) if length.isdigit() and int(length) <= MAX_DRAIN_BYTES else None
            complete = body is not None
            self.request_body = body or b""
        if not complete:
            self.close_connection = True

    def _read(self, length: int) -> bytes | None:
        """Exactly ``length`` body bytes (kept for handlers that accept writes), or None."""
        data = self.rfile.read(length) if length else b""
        return data if len(data) == length else None

    def _drain_chunks(self) -> bool:
        """Read a chunked body to its end (chunk sizes, data, trailers)."""
        total = 0
        while True:
            size_line = self.rfile.readline(1024).split(b";", 1)[0].strip()
            try:
                size = int(size_line, 16)
            except ValueError:
                return False
            total += size
            if total > MAX_DRAIN_BYTES or not self._skip(size + 2 if size else 0):
                return False
            if size == 0:
                return self._skip_trailers()

    def _skip_trailers(self) -> bool:
        for _ in range(100):
            line = self.rfile.readline(8192)
            if line in (b"\r\n", b"\n"):
                return True
            if not line:
                return False
        return False

    def _skip(self, remaining: int) -> bool:
        while remaining > 0:
            chunk = self.rfile.read(min(remaining, 64 * 1024))
            if not chunk:
                return False
            remaining -= len(chunk)
        return True

    def _inject_fault(self, method: str, path: str) -> bool:
        number = self.server.counters.count(method, path)
        faults = self.server.faults
        if faults.latency_s:
            time.sleep(faults.latency_s)
        action = faults.action_for(number)
        if action == "drop":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return False
        if action == "429":
            seconds = faults.retry_after_s
            raise HttpError(429, status_bytes(429, "Too many requests, please try again later.",
                                              details={"retryAfterSeconds": seconds}),
                            {"Retry-After": str(seconds)})
        if action == "500":
            raise HttpError(500, status_bytes(500, "Internal error occurred: injected fault"))
        return True

    def _check_auth(self) -> None:
        header = self.headers.get("Authorization", "")
        expected = f"Bearer {self.server.token}"
        if not hmac.compare_digest(header.encode(), expected.encode()):
            raise HttpError(401, status_bytes(401, "Unauthorized"))

    def _control(self, method: str, path: str) -> None:
        """Test-only endpoints: read counters, expire continue tokens."""
        self._check_auth()
        if path == STATS_PATH:
            self._json(self.server.counters.snapshot())
        elif path == EXPIRE_PATH and method == "POST":
            self.server.store.expire_continue_tokens()
            self._json({"resourceVersion": self.server.store.resource_version})
        else:
            raise HttpError(404, status_bytes(404, "the server could not find the requested "
                                                   "resource"))

    def _route(self, method: str, path: str, query: dict[str, list[str]]) -> None:
        simple = self._simple_document(path)
        if simple is not None:
            self._send(200, simple)
            return
        req = parse_resource_path(path)
        if req is None:
            raise HttpError(404, status_bytes(404, "the server could not find the requested "
                                                   "resource"))
        if not req.plural:
            self._json(self._discovery(req))
            return
        self._resource(method, req, query)

    def _simple_document(self, path: str) -> bytes | None:
        store = self.server.store
        if path in ("/healthz", "/livez", "/readyz"):
            return b"ok"
        if path == "/version":
            return store.version_json()
        if path == "/api":
            host, port = self.server.server_address[:2]
            address = f"{host!s}:{port}"
            return msgspec.json.encode(discovery.api_versions(address))
        if path == "/apis":
            types = [c.rtype for c in store.collections.values()]
            return msgspec.json.encode(discovery.api_group_list(types))
        return None

    def _discovery(self, req: ResourcePath) -> dict[str, Any]:
        types = [c.rtype for c in self.server.store.collections.values()]
        if req.group and not req.version:
            doc = discovery.api_group(types, req.group)
        else:
            doc = discovery.resource_list(types, req.group, req.version)
        if doc is None:
            raise HttpError(404, status_bytes(404, "the server could not find the requested "
                                                   "resource"))
        return doc

    def _resource(self, method: str, req: ResourcePath, query: dict[str, list[str]]) -> None:
        verb = verb_of(req, query) if method == "GET" else method.lower()
        self.server.counters.record(verb, req.resource, req.namespace, req.name)
        if self.server.faults.is_forbidden(verb, req.resource, req.namespace, req.name):
            raise HttpError(403, forbidden(self.server.user, verb, req.resource, group=req.group,
                                           namespace=req.namespace, name=req.name))
        self._answer_fault(verb, req, query)
        coll = self.server.store.by_type(req.group, req.version, req.plural)
        if coll is None:
            raise HttpError(404, status_bytes(404, "the server could not find the requested "
                                                   "resource"))
        if method != "GET":
            raise HttpError(405, status_bytes(405, f"the test API server is read-only: {verb} "
                                                   f"{req.resource} is not allowed"))
        self._dispatch_get(verb, req, coll, query)

    def _answer_fault(self, verb: str, req: ResourcePath, query: dict[str, list[str]]) -> None:
        """Apply the first ``answers`` rule that matches and still has uses left."""
        continued = bool(query.get("continue", [""])[-1])
        faults = self.server.faults
        for answer in faults.answers_for(verb, req.resource, req.namespace, continued, req.name):
            if not self.server.counters.take(answer.index, answer.limit):
                continue
            if answer.what == "hang":
                time.sleep(faults.hang_s)
            elif answer.what in ("stall", "stall-later"):
                self._stall()
            elif (error := _answered(answer.what, answer.code, req, faults.retry_after_s)) is not None:
                raise error
            else:
                self.damage = answer.what
            return

    def _dispatch_get(self, verb: str, req: ResourcePath, coll: Collection,
                      query: dict[str, list[str]]) -> None:
        if verb == "watch":
            raise HttpError(405, status_bytes(405, "watch is not supported by the test API "
                                                   "server"))
        if verb == "list":
            self._list(req, coll, query)
        elif not req.sub:
            self._send(200, coll.with_typemeta(self._object(req, coll)))
        elif req.plural == "pods" and req.sub == "log":
            self._log(req, coll, query)
        elif req.plural == "pods" and req.sub == "exec":
            self._exec(req, coll, query)
        elif req.plural == "pods" and req.sub == "proxy":
            self._proxy(req, coll, query)
        else:
            raise HttpError(404, status_bytes(404, "the server could not find the requested "
                                                   "resource"))

    def _object(self, req: ResourcePath, coll: Collection, name: str = "") -> bytes:
        name = name or req.name
        item = coll.get(req.namespace, name)
        if item is None:
            raise HttpError(404, not_found(coll.rtype.plural, name, coll.rtype.group))
        return item

    def _list(self, req: ResourcePath, coll: Collection, query: dict[str, list[str]]) -> None:
        limit = 0 if self.damage == "whole" else go_int(query, "limit") or 0
        asked = query.get("continue", [""])[-1]
        if self.damage == "endless":
            body = msgspec.json.encode({"kind": coll.rtype.list_kind, "apiVersion": "v1",
                                        "metadata": {"continue": asked or "endless"},
                                        "items": []})
            self._send(200, body)
            return
        gz = "gzip" in self.headers.get("Accept-Encoding", "")
        try:
            page = self.server.store.list_page(coll, ListQuery(
                req.namespace, query.get("labelSelector", [""])[-1],
                query.get("fieldSelector", [""])[-1], limit, query.get("continue", [""])[-1]),
                accept_gzip=gz, gzip_threshold=GZIP_THRESHOLD)
        except SelectorError as exc:
            raise bad_request(str(exc)) from None
        except ContinueError as exc:
            raise HttpError(exc.code, status_bytes(exc.code, str(exc))) from None
        self._send(200, page.body, encoded=page.gzipped)

    def _pod(self, req: ResourcePath, coll: Collection, name: str = "") -> Pod:
        return msgspec.json.decode(self._object(req, coll, name), type=Pod)

    def _container(self, pod: Pod, query: dict[str, list[str]], *, init_ok: bool) -> Container:
        wanted = query.get("container", [""])[-1]
        containers = [*pod.spec.containers, *(pod.spec.init_containers if init_ok else ())]
        if not wanted and len(pod.spec.containers) == 1:
            return pod.spec.containers[0]
        if not wanted:
            names = " ".join(c.name for c in pod.spec.containers)
            raise bad_request(f"a container name must be specified for pod "
                              f"{pod.metadata.name}, choose one of: [{names}]")
        found = next((c for c in containers if c.name == wanted), None)
        if found is None:
            raise bad_request(f"container {wanted} is not valid for pod {pod.metadata.name}")
        return found

    def _log(self, req: ResourcePath, coll: Collection, query: dict[str, list[str]]) -> None:
        pod = self._pod(req, coll)
        container = self._container(pod, query, init_ok=True)
        answer = nodeview.read_log(self.server.store.root, pod, container.name,
                                   go_bool(query, "previous"))
        if answer.code != 200:
            raise bad_request(answer.body.decode())
        body = nodeview.tail(answer.body, go_int(query, "tailLines"), go_int(query, "limitBytes"))
        self._send(200, body, content_type="text/plain")

    def _exec(self, req: ResourcePath, coll: Collection, query: dict[str, list[str]]) -> None:
        pod = self._pod(req, coll)
        container = self._container(pod, query, init_ok=False)
        argv = query.get("command", [])
        protocol = self._exec_preflight(pod, container, argv)
        result = nodeview.run_command(self.server.store.root, pod, container, argv)
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept",
                         execws.accept_key(self.headers.get("Sec-WebSocket-Key", "")))
        self.send_header("Sec-WebSocket-Protocol", protocol)
        self.end_headers()
        frames = execws.frames(result, go_bool(query, "stdout"), go_bool(query, "stderr"))
        if self.damage == "stall-body":  # the output, never the exit status: a hung command
            execws.send_only(self.wfile, list(frames)[:-1])  # type: ignore[arg-type]
            self._stall()
        if self.damage == "endless":  # output without end: a command that writes for ever
            execws.endless(self.wfile, self.server.stopping)  # type: ignore[arg-type]
            self.close_connection = True
            return
        execws.stream(self.wfile, self.rfile, self.connection, frames)  # type: ignore[arg-type]
        self.close_connection = True

    def _exec_preflight(self, pod: Pod, container: Container, argv: list[str]) -> str:
        """Refuse before upgrading, as the API server does, and pick the subprotocol."""
        if self.headers.get("Upgrade", "").lower() != "websocket":
            raise bad_request("Upgrade request required")
        if not argv:
            raise bad_request("you must specify at least 1 command")
        if pod.status.phase in ("Succeeded", "Failed"):
            raise bad_request(f"cannot exec into a container in a completed pod; current "
                              f"phase is {pod.status.phase}")
        running = {s.name for s in pod.status.container_statuses if s.state.running}
        if container.name not in running:
            raise bad_request(f'unable to upgrade connection: container not found '
                              f'("{container.name}")')
        protocol = execws.choose_subprotocol(self.headers.get("Sec-WebSocket-Protocol", ""))
        if protocol is None:
            raise bad_request("unable to upgrade connection: no supported subprotocol "
                              f"(want one of {', '.join(execws.SUBPROTOCOLS)})")
        return protocol

    def _proxy(self, req: ResourcePath, coll: Collection, query: dict[str, list[str]]) -> None:
        target = req.name.split(":")
        if target[0] in ("http", "https") and len(target) > 1:
            target = target[1:]
        pod = self._pod(req, coll, target[0])
        port = target[1] if len(target) > 1 else ""
        raw = query.get("raw", [""])[-1].lower() in ("1", "true", "yes")  # the agent's parsing
        answer = nodeview.proxy(self.server.store.root, pod, port, req.rest or "/", raw)
        if answer.proxy_error:
            raise HttpError(503, status_bytes(503, answer.body.decode()))
        self._send(answer.code, answer.body, content_type=answer.content_type)

    def _json(self, obj: Any) -> None:
        self._send(200, msgspec.json.encode(obj))

    def _send(self, code: int, body: bytes, *, content_type: str = "application/json",
              headers: dict[str, str] | None = None, encoded: bool = False) -> None:
        wants_gzip = "gzip" in self.headers.get("Accept-Encoding", "")
        if self.damage == "garble" and code == 200:
            body = gzip.decompress(body) if encoded else body
            body, encoded, wants_gzip = body[:len(body) // 2], False, False
        if not encoded and wants_gzip and len(body) >= GZIP_THRESHOLD:
            body, encoded = gzip.compress(body, compresslevel=1, mtime=0), True
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if self.damage == "cut" and code == 200:
            body, self.close_connection = body[:len(body) // 2], True
        if encoded:
            self.send_header("Content-Encoding", "gzip")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.damage == "stall-body" and code == 200:
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            self._stall()
        self.wfile.write(body)

    def _stall(self) -> None:
        """Keep the connection open and say nothing more, until the server stops."""
        self.server.stopping.wait(STALL_MAX_S)
        raise Stalled
