"""Talking to the Kubernetes API through lightkube, with retries and clear failures.

lightkube supplies what is fiddly to get right — kubeconfig and in-cluster
config, bearer tokens, exec credential plugins, client certificates, CA
verification — and its exec over WebSocket. Plain GETs (list pages, logs,
pod proxy) go through the httpx2 client lightkube builds from the same
config, so each page arrives as bytes that the collector decodes itself:
raw for the bundle, slim Structs for its decisions.
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpcore2
import httpx2
import msgspec
import yaml
from httpx2.websockets import HTTPXWSException, WebSocketUpgradeError
from lightkube import Client
from lightkube.config.client_adapter import Client as adapter_client
from lightkube.config.client_adapter import ConnectionParams, verify_cluster
from lightkube.config.kubeconfig import KubeConfig, SingleConfig
from lightkube.config.models import User
from lightkube.core.exceptions import ApiError, ConfigError

from gpunode.bounded import IN_FLIGHT, MAX_ERROR_BODY_BYTES, Capped, CappedSink, OutputCut
from gpunode.collect.credentials import PLUGIN_TIMEOUT_S, check_exec, plugin_credentials
from gpunode.collect.slim import RawPage
from gpunode.deadline import deadline, deadline_transport, run_deadline, within_run
from gpunode.errors import SourceUnreachable, UsageError
from gpunode.kubeconfig import kubeconfig_files, merged, read_kubeconfig
from gpunode.limits import (
    MAX_BODY_BYTES,
    MAX_DOC_BYTES,
    MAX_EXEC_OUTPUT_BYTES,
    MAX_LIST_ITEMS,
    MAX_LIST_PAGES,
    MAX_PAGE_BYTES,
    MAX_PAGE_ITEMS,
    MemoryBudget,
    memory_limit_hint,
)

T = TypeVar("T")
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
IN_CLUSTER_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


class ApiFailure(Exception):
    """The API answered with an error that retrying will not fix (401, 403, 404, …)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class NotTheApi(ApiFailure):
    """A 2xx/3xx answer that is not the API's: an HTML page (a login page, a proxy's error
    page) or a redirect (to a login host). Retrying gives the same answer."""


class ListCut(ApiFailure):
    """A list given up on past a bound of docs/limits.md (items, pages, page size, memory):
    what was read of it is not kept, so what needs it is unknown, never judged from part."""

    def __init__(self, message: str) -> None:
        super().__init__(0, message)


class BodyCut(ApiFailure):
    """An answer larger than the limit its caller gave (an endless body, a server that
    ignores ``limitBytes``): not read further; the message is the one line naming the cut."""

    def __init__(self, message: str, head: bytes = b"") -> None:
        super().__init__(0, message)
        self.head = head


#: Decoding a page costs up to about 28 times its bytes before its items can be counted;
#: one page is decoded at a time (msgspec holds the GIL while it decodes anyway).
_DECODE_LOCK = threading.Lock()


def load_config(kubeconfig: Path | None = None, context: str | None = None) -> SingleConfig:
    """kubectl's order: --kubeconfig, $KUBECONFIG, ~/.kube/config, then in-cluster."""
    loaded, doc = _kubeconfig(kubeconfig)
    where = str(loaded.fname) if loaded.fname else "kubeconfig"
    try:
        config = loaded.get(context)
    except (ConfigError, KeyError, TypeError, AttributeError, ValueError) as exc:
        raise UsageError(f"{where}: {_reason(exc)}") from None
    if config is None:
        raise UsageError(f"{where}: no current context (pass --context)")
    check_exec(config, _raw_exec(doc, config.context.user))
    return config


def _raw_exec(doc: dict[str, Any], user: str | None) -> dict[str, Any]:
    """The ``exec`` entry of ``user`` as written (lightkube's model drops ``interactiveMode``)."""
    for entry in doc.get("users") or ():
        if isinstance(entry, dict) and entry.get("name") == user:
            body = entry.get("user")
            found = body.get("exec") if isinstance(body, dict) else None
            return found if isinstance(found, dict) else {}
    return {}


def _kubeconfig(explicit: Path | None) -> tuple[KubeConfig, dict[str, Any]]:
    """The kubeconfig kubectl would use, and its document as written (empty in-cluster)."""
    files = kubeconfig_files(explicit)
    if explicit is not None:
        return _read(explicit)
    if len(files) == 1:
        return _read(files[0])
    if files:
        # several files in $KUBECONFIG: merged by kubectl's first-wins rules
        doc = merged(files)
        return _from_dict(doc, files[0]), doc
    if os.environ.get("KUBERNETES_SERVICE_HOST") and (IN_CLUSTER_DIR / "token").is_file():
        return KubeConfig.from_service_account(IN_CLUSTER_DIR), {}
    raise UsageError("no kubeconfig found: pass --kubeconfig, set KUBECONFIG, or run in a pod")


def _read(path: Path) -> tuple[KubeConfig, dict[str, Any]]:
    """A kubeconfig file and its document, or a one-line UsageError naming it (empty, not
    YAML, wrong shape)."""
    path = path.expanduser()
    try:
        doc = read_kubeconfig(path)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read kubeconfig: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise UsageError(f"{path}: not a kubeconfig (invalid YAML: {_reason(exc)})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("clusters"), list) \
            or not isinstance(doc.get("contexts"), list):
        shape = "empty" if not doc else "no clusters/contexts lists"
        raise UsageError(f"{path}: not a kubeconfig ({shape})")
    return _from_dict(doc, path), doc


def _from_dict(doc: dict[str, Any], path: Path) -> KubeConfig:
    try:
        return KubeConfig.from_dict(doc, fname=path)
    except (ConfigError, KeyError, TypeError, AttributeError, ValueError) as exc:
        raise UsageError(f"{path}: not a usable kubeconfig ({_reason(exc)})") from None


def _reason(exc: BaseException) -> str:
    """The first line of an exception's message (YAML errors span several)."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


@dataclass(frozen=True)
class RetryPolicy:
    """Backoff for 429/5xx/timeouts; every call gives up at its own deadline."""

    attempts: int = 6
    deadline_s: float = 60.0
    base_delay_s: float = 0.2
    max_delay_s: float = 5.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Exponential backoff with jitter; the server's Retry-After wins when given."""
        if retry_after is not None:
            return min(retry_after, self.max_delay_s)
        ceiling = min(self.max_delay_s, self.base_delay_s * 2.0**attempt)
        return ceiling / 2 + random.uniform(0, ceiling / 2)


_PROBE_POLICY = RetryPolicy(attempts=4, deadline_s=20.0)
#: Defaults of every KubeApi (module-level, so a test can shorten them).
DEFAULT_POLICY = RetryPolicy()
REQUEST_TIMEOUT_S = 15.0
EXEC_TIMEOUT_S = 60.0
#: With ``--request-timeout T`` a call and its retries give up after this many times T.
CALL_TIMEOUTS = 3.0


@dataclass(frozen=True)
class Timeouts:
    """How long the API may take: one attempt of a request or an exec, and a call with its
    retries. Each bound is a deadline of its own, so a server that accepts and never
    answers (or stops mid-body) costs a bounded time, never a hung collection."""

    #: one GET: connecting, the answer and its whole body
    request_s: float
    #: one exec: the WebSocket handshake (``request_s``), then the command's whole output
    exec_s: float
    #: a call with its retries; None: the retry policy's deadline
    call_s: float | None = None
    #: the kubeconfig's exec credential plugin, run once before the first request
    plugin_s: float = PLUGIN_TIMEOUT_S

    @classmethod
    def of(cls, request_timeout_s: float | None = None) -> Timeouts:
        """``--request-timeout``: every request, exec and credential plugin bounded by it,
        every call with its retries by ``CALL_TIMEOUTS`` times it; None or 0: the defaults."""
        if not request_timeout_s:
            return cls(REQUEST_TIMEOUT_S, EXEC_TIMEOUT_S)
        return cls(request_timeout_s, request_timeout_s, CALL_TIMEOUTS * request_timeout_s,
                   request_timeout_s)

    def describe(self) -> str:
        return f"request {self.request_s:g} s, exec {self.exec_s:g} s"


@dataclass(frozen=True)
class ExecOutput:
    stdout: bytes
    stderr: bytes
    exit_code: int
    #: the line naming a cut output (past MAX_EXEC_OUTPUT_BYTES: the command was left), or ""
    cut: str = ""


class _Retry(Exception):
    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


@dataclass
class CallStats:
    """API calls made (every attempt counts), for benchmarks and the manifest."""

    calls: int = 0
    retries: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, retried: bool, kind: str = "get") -> None:
        with self.lock:
            self.calls += 1
            self.retries += retried
            self.by_kind[kind] = self.by_kind.get(kind, 0) + 1

    def kinds(self) -> dict[str, int]:
        with self.lock:
            return dict(sorted(self.by_kind.items()))


def call_kind(path: str, params: dict[str, Any]) -> str:
    """``list`` (a page), ``log``, ``proxy`` (exporter or agent through the pod proxy) or ``get``."""
    if "/proxy/" in path or path.endswith("/proxy"):
        return "proxy"
    if path.endswith("/log"):
        return "log"
    return "list" if "limit" in params else "get"


class KubeApi:
    """The handful of API operations collection needs, each retried and bounded."""

    def __init__(self, config: SingleConfig, *, timeouts: Timeouts | None = None,
                 policy: RetryPolicy | None = None) -> None:
        self.server = config.cluster.server
        self.config_file = str(config.fname) if config.fname else "kubeconfig"
        self.cluster_name = config.context.cluster
        self.policy = policy or DEFAULT_POLICY
        self.timeouts = timeouts or Timeouts.of()
        self.stats = CallStats()
        #: memory grown since the client was made, checked after each list page
        self.budget = MemoryBudget()
        config = plugin_credentials(config, within_run(self.timeouts.plugin_s))
        self._http, self._client = bounded_clients(config, self.timeouts.request_s, self.config_file)

    def close(self) -> None:
        self._http.close()
        self._client.close()

    def _retrying(self, call: Callable[[float], T], policy: RetryPolicy | None = None,
                  kind: str = "get") -> T:
        """``call(budget)`` until it answers; each attempt gets the time left to the call's
        deadline as its budget, so retries never outlast the deadline."""
        policy = policy or self.policy
        started = time.monotonic()
        deadline = started + (self.timeouts.call_s or policy.deadline_s)
        run = run_deadline()
        if run is not None:  # --timeout: no call outlives the run, none starts after it
            if run.passed():
                raise ApiFailure(0, run.reason)
            deadline = min(deadline, run.at)
        for attempt in range(policy.attempts):
            self.stats.add(attempt > 0, kind)
            try:
                return call(max(deadline - time.monotonic(), _MIN_BUDGET_S))
            except _Retry as why:
                if run is not None and run.passed():
                    raise ApiFailure(0, run.reason) from None
                pause = policy.delay(attempt, why.retry_after)
                if attempt + 1 == policy.attempts or time.monotonic() + pause >= deadline:
                    spent = time.monotonic() - started
                    cut = f" ({run.reason})" if run is not None and run.at <= deadline else ""
                    raise ApiFailure(0, f"gave up after {attempt + 1} attempts ({spent:.1f} s): "
                                        f"{why}{cut}") from None
                time.sleep(pause)
        raise ApiFailure(0, "no attempts allowed")

    def get(self, path: str, params: dict[str, Any] | None = None, *,
            retry_503: bool = True, max_bytes: int = MAX_BODY_BYTES) -> bytes:
        """GET ``path`` and return the (decompressed) body; errors become ApiFailure. At
        most ``max_bytes`` of the body are read (and, with every answer being read at once,
        at most bounded.IN_FLIGHT_BYTES): past them, BodyCut (not retried) names the cut and
        holds the head read."""
        params = params or {}
        return self._retrying(
            lambda budget: self._get_once(path, params, retry_503, budget, max_bytes),
            kind=call_kind(path, params))

    def _get_once(self, path: str, params: dict[str, Any], retry_503: bool,
                  budget: float, max_bytes: int) -> bytes:
        """One GET whose answer, body included, must come within the request timeout."""
        limit = min(self.timeouts.request_s, budget)
        started = time.monotonic()
        ends = started + limit
        try:
            with deadline(ends + _READ_SLACK_S), \
                    self._http.stream("GET", path, params=params, headers={"Accept-Encoding": "gzip"},
                                      timeout=httpx2.Timeout(limit)) as response:
                code = response.status_code
                log_request("GET", str(response.request.url), f"{code} {response.reason_phrase}", started)
                if 300 <= code < 400:
                    raise _redirected(response)
                body = _read_by(response, ends, self.timeouts.request_s, max_bytes,
                                f"the answer to GET {path}")
        except httpx2.TimeoutException as exc:
            log_request("GET", self._url(path, params), "timed out", started)
            raise _Retry(_timed_out(self.timeouts.request_s)) from exc
        except httpx2.TransportError as exc:
            log_request("GET", self._url(path, params), type(exc).__name__, started)
            raise _Retry(f"{type(exc).__name__}: {exc}") from exc
        except (ConfigError, OSError, ValueError) as exc:  # credential plugin, cert files
            raise ApiFailure(401, f"credentials from {self.config_file} unusable: {_reason(exc)}") from None
        if code < 400:
            if _is_html(response):
                raise NotTheApi(code, _HTML)
            return body
        message = _status_message(body)
        if code in RETRY_STATUSES and (retry_503 or code != 503):
            raise _Retry(f"{code} {message}", _retry_after(response))
        raise ApiFailure(code, message)

    def _url(self, path: str, params: dict[str, Any]) -> str:
        return str(self._http.build_request("GET", path, params=params).url)

    def probe(self) -> bytes:
        """GET /version once, a little patiently; unreachable means SourceUnreachable, and so
        does an answer that is not the API's (an HTML page, a redirect, not a JSON object)."""
        try:
            body = self._retrying(lambda budget: self._get_once("/version", {}, True, budget,
                                                                MAX_DOC_BYTES), _PROBE_POLICY)
        except NotTheApi as exc:
            raise SourceUnreachable(f"{self.server} does not answer as a Kubernetes API server: "
                                    f"/version {exc.code} {exc.message}") from None
        except ApiFailure as exc:
            if exc.code == 0:
                raise SourceUnreachable(
                    f"cannot reach the Kubernetes API at {self.server}: {exc.message}") from None
            if exc.code in (401, 403):
                raise SourceUnreachable(
                    f"the Kubernetes API at {self.server} refused the credentials from "
                    f"{self.config_file} ({exc.code} {exc.message}): expired or invalid token "
                    "or certificate?") from None
            raise SourceUnreachable(
                f"the Kubernetes API at {self.server} answered /version with {exc.code} "
                f"{exc.message}") from None
        if not _json_object(body):
            raise SourceUnreachable(f"{self.server} does not answer as a Kubernetes API server: "
                                    f"/version {_not_json(body)}")
        return body

    def list_pages(self, path: str, params: dict[str, Any],
                   limit: int = 500) -> Iterator[tuple[bytes, RawPage]]:
        """Every page of a list call as (body, items as raw JSON slices).

        A 410 on ``continue`` (the token expired) restarts from the first page; the
        caller sees ``(b"", RawPage())`` first so it can drop what it kept.
        A list is cut (``ListCut``) past MAX_LIST_ITEMS items or MAX_LIST_PAGES pages, at a
        continue token answered again, at a page of more than MAX_PAGE_ITEMS items or larger than
        MAX_PAGE_BYTES even at one item a page, and when memory grew past the run's limit (MemoryBudget).
        """
        token, restarts, pages, items = "", 0, 0, 0
        while True:
            try:
                body = self.get(path, {**params, "limit": limit, **({"continue": token}
                                                                   if token else {})},
                                max_bytes=MAX_PAGE_BYTES)
            except BodyCut as cut:
                if limit <= 1:
                    raise ListCut(f"cut at {items:,} items: {cut.message} (one item asked)") from None
                limit = max(1, limit // 4)  # large objects: ask again for fewer
                continue
            except ApiFailure as exc:
                if exc.code != 410 or restarts >= 3:
                    raise
                token, restarts, pages, items = "", restarts + 1, 0, 0
                yield b"", RawPage()
                continue
            page = _page_within(body, limit, items)
            pages, items = pages + 1, items + len(page.items)
            self._within_bounds(items, pages, page.metadata.continue_, token)
            yield body, page
            token = page.metadata.continue_
            if not token:
                return

    def _within_bounds(self, items: int, pages: int, token: str, asked: str) -> None:
        """Raise ListCut when a list read so far passes a bound (see ``list_pages``)."""
        why = ""
        if items > MAX_LIST_ITEMS:
            why = f"more than {MAX_LIST_ITEMS:,} items (the limit for one list)"
        elif self.budget.over():
            why = f"memory grew past {memory_limit_hint(self.budget.limit)} while listing"
        elif token and token == asked:
            why = "the API server answered the same continue token again"
        elif token and pages >= MAX_LIST_PAGES:
            why = f"more than {MAX_LIST_PAGES:,} pages"
        if why:
            raise ListCut(f"cut at {items:,} items: {why}")

    def exec(self, namespace: str, pod: str, container: str, argv: list[str],
             timeout_s: float | None = None, *, hold: bool = False) -> ExecOutput:
        """Run ``argv`` through pods/exec (lightkube's WebSocket driver); the command's whole
        output must come within the exec timeout (a hung nvidia-smi is given up on). ``hold``:
        the output's share of bounded.IN_FLIGHT stays taken until the calling thread's
        ``bounded.release_held()`` (a collector's job that stores it first)."""
        timeout_s = timeout_s or self.timeouts.exec_s
        return self._retrying(
            lambda budget: self._exec_once(namespace, pod, container, argv, min(timeout_s, budget),
                                           hold=hold),
            kind="exec")

    def _exec_once(self, namespace: str, pod: str, container: str, argv: list[str],
                   timeout_s: float, *, hold: bool = False) -> ExecOutput:
        started = time.monotonic()
        url = f"{self.server}/api/v1/namespaces/{namespace}/pods/{pod}/exec?container={container}"
        out = Capped(MAX_EXEC_OUTPUT_BYTES, f"the output of {argv[0]} in {namespace}/{pod}", IN_FLIGHT)
        err = Capped(MAX_ERROR_BODY_BYTES, "stderr")
        try:
            with deadline(started + timeout_s + _READ_SLACK_S):  # handshake included
                result = self._client.exec(pod, namespace=namespace, container=container,
                                           command=argv, stdout=CappedSink(out),  # type: ignore[arg-type]
                                           stderr=_Quiet(err),  # type: ignore[arg-type]
                                           decode=None, timeout=timeout_s)
        except OutputCut as cut:
            log_request("POST", url, "output cut", started)
            return ExecOutput(out.held() if hold else out.value(), err.value(), -1, str(cut))
        except WebSocketUpgradeError as exc:
            self._upgrade_failed(exc)
        except ApiError as exc:
            return ExecOutput(b"", (exc.status.message or "").encode(), -1)
        except (httpx2.TimeoutException, httpcore2.TimeoutException, TimeoutError) as exc:
            # httpx2's WebSocket raises the builtin TimeoutError when the command's output
            # stops (lightkube expects queue.Empty): a hung command, not a crash; its close
            # frame written past the deadline raises httpcore2's own, unmapped, WriteTimeout
            log_request("POST", url, "timed out", started)
            raise _Retry(_timed_out(self.timeouts.exec_s)) from exc
        except (httpx2.TransportError, httpcore2.NetworkError, HTTPXWSException) as exc:
            log_request("POST", url, type(exc).__name__, started)
            raise _Retry(f"{type(exc).__name__}: {exc}") from exc
        finally:
            out.release()
        log_request("POST", url, f"exit {result.exit_code}", started)
        return ExecOutput(out.held() if hold else out.value(), err.value(), result.exit_code)

    @staticmethod
    def _upgrade_failed(exc: WebSocketUpgradeError) -> None:
        response = exc.response
        code = response.status_code
        if 300 <= code < 400:
            raise _redirected(response)
        if _is_html(response):
            raise NotTheApi(code, _HTML)
        try:
            message = _status_message(response.read())
        except httpx2.StreamError:  # the handshake response is closed before its body is read
            message = response.reason_phrase
        if code in RETRY_STATUSES:
            raise _Retry(f"{code} {message}", _retry_after(response))
        raise ApiFailure(code, message)


#: The least time an attempt is given (a retry decided just before the deadline).
_MIN_BUDGET_S = 0.05
#: How far past its own deadline an attempt's sockets may go: ``_read_by`` names a late body
#: as timed out itself; the sockets' deadline (gpunode/deadline.py) catches what it cannot
#: see, an answer whose status line or headers never complete.
_READ_SLACK_S = 0.5
_IN_FRONT = "a login page or a proxy in front of the API server?"
_HTML = f"an HTML page instead of the API's JSON: {_IN_FRONT}"


#: ``-v 6`` and above (kubectl's level for request lines): every API request on stderr.
API_LOG = logging.getLogger("gpunode.api")


def log_request(verb: str, url: str, answer: str, started: float) -> None:
    """One request as kubectl logs it at ``-v 6`` (``GET <url> 200 OK in 12 milliseconds``)."""
    if API_LOG.isEnabledFor(logging.DEBUG):
        spent = (time.monotonic() - started) * 1000
        API_LOG.debug("%s %s %s in %.0f milliseconds", verb, url, answer, spent)


def bounded_clients(config: SingleConfig, request_s: float,
                    where: str = "kubeconfig") -> tuple[httpx2.Client, Client]:
    """The plain httpx2 client (list pages, logs, proxy) and lightkube's (exec) for ``config``,
    both on transports whose sockets honour ``gpunode.deadline``; a UsageError naming the
    kubeconfig when its TLS or credential settings are unusable."""
    timeout = httpx2.Timeout(request_s)
    try:
        verify = verify_cluster(config.cluster, config.user or User(), config.abs_file, trust_env=False)
        params = ConnectionParams(timeout=timeout, trust_env=False, transport=deadline_transport(verify))
        http: httpx2.Client = adapter_client(config, params)
    except (ConfigError, OSError, ValueError, TypeError, AttributeError, AssertionError) as exc:
        raise UsageError(f"{where}: {_reason(exc)}") from None
    return http, lightkube_client(config, request_s, where)


def lightkube_client(config: SingleConfig, request_s: float, where: str = "kubeconfig",
                     **options: Any) -> Client:
    """lightkube's client for ``config`` on a transport whose sockets honour
    ``gpunode.deadline`` (``options``: lightkube's own, e.g. ``field_manager``)."""
    try:
        verify = verify_cluster(config.cluster, config.user or User(), config.abs_file, trust_env=False)
        return Client(config, timeout=httpx2.Timeout(request_s), trust_env=False,
                      transport=deadline_transport(verify), **options)
    except (ConfigError, OSError, ValueError, TypeError, AttributeError, AssertionError) as exc:
        raise UsageError(f"{where}: {_reason(exc)}") from None


def _redirected(response: httpx2.Response) -> NotTheApi:
    """A redirect is never the API's answer (it would carry the credentials to another host)."""
    target = response.headers.get("Location", "")
    here = response.request.url
    try:
        there = httpx2.URL(target)
        other = bool(there.host) and (there.host, there.port) != (here.host, here.port)
    except (httpx2.InvalidURL, ValueError, TypeError):
        other = False
    shown = target[:200] or "nowhere (no Location)"
    return NotTheApi(response.status_code,
                     f"redirected to {shown}{' (another host)' if other else ''}: {_IN_FRONT}")


def _is_html(response: httpx2.Response) -> bool:
    return response.headers.get("Content-Type", "").lower().lstrip().startswith(
        ("text/html", "application/xhtml"))


def _json_object(body: bytes) -> bool:
    try:
        return isinstance(msgspec.json.decode(body), dict)
    except (msgspec.DecodeError, RecursionError):
        return False


def _not_json(body: bytes) -> str:
    """What a body that should be a JSON object is instead, for a one-line message."""
    head = body.lstrip()[:512].lower()
    if head.startswith(b"<"):
        return _HTML
    if not head:
        return "an empty answer instead of the API's JSON"
    shown = body.lstrip()[:60].decode(errors="replace").splitlines()[0]
    return f"{shown!r} instead of the API's JSON"


def _timed_out(limit: float) -> str:
    return f"timed out (no complete answer within {limit:g} s)"


def _read_by(response: httpx2.Response, ends: float, limit: float, max_bytes: int,
             what: str) -> bytes:
    """The whole (decompressed) body, unless the time runs out first: each read waits
    at most the timeout, and the deadline is checked between reads. Past ``max_bytes``
    (or the collector's pool of bytes in flight) the rest is not read: BodyCut; an error answer is read up to
    MAX_ERROR_BODY_BYTES and kept cut (its first line is its message)."""
    error = response.status_code >= 400
    capped = Capped(MAX_ERROR_BODY_BYTES if error else max_bytes, what, IN_FLIGHT)
    try:
        for chunk in response.iter_bytes():
            if not capped.add(chunk):
                break
            if time.monotonic() > ends:
                raise _Retry(_timed_out(limit))
        if capped.cut and not error:
            raise BodyCut(capped.note(), capped.value())
        return capped.value()
    finally:
        capped.release()


class _Quiet(CappedSink):
    """stderr: kept up to its limit, the rest dropped without ending the command."""

    def write(self, data: bytes) -> int:
        self.capped.add(bytes(data))
        return len(data)


class _Status(msgspec.Struct):
    message: str = ""


#: Built here, once: worker threads decode error bodies concurrently (see live._warm_types).
_STATUS = msgspec.json.Decoder(_Status)


def _status_message(body: bytes) -> str:
    try:
        return _STATUS.decode(body).message or body[:200].decode(errors="replace")
    except (msgspec.DecodeError, msgspec.ValidationError):
        return body[:200].decode(errors="replace").strip()


def _retry_after(response: httpx2.Response) -> float | None:
    value = response.headers.get("Retry-After", "")
    return float(value) if value.isdigit() else None


def _page_within(body: bytes, limit: int, before: int) -> RawPage:
    """A page decoded one at a time; one of more than MAX_PAGE_ITEMS items (a server that
    ignores ``limit``: millions of tiny items fit in MAX_PAGE_BYTES) is cut at once, so
    only pages of a bounded number of items are held."""
    with _DECODE_LOCK:
        page = _decode_page(body)
        if len(page.items) > max(limit, MAX_PAGE_ITEMS):
            count = len(page.items)
            del page
            raise ListCut(f"cut at {before:,} items: the API server answered {count:,} "
                          f"items to a page of {limit}")
    return page


def _decode_page(body: bytes) -> RawPage:
    try:
        return msgspec.json.decode(body, type=RawPage)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        if body.lstrip()[:1] == b"<" or not body.strip():
            raise NotTheApi(200, _not_json(body)) from exc
        raise ApiFailure(0, f"malformed list response: {exc}") from exc
