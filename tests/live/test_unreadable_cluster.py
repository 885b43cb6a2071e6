"""Never green on nothing, nothing hangs: the console script against a hostile loopback server.

Each case starts ``.venv/bin/gpunode`` (the console script, a child process with a
timeout: no case can hang the suite) against a plain-HTTP server on 127.0.0.1 that
answers one way per path — an HTML login page, a redirect to another host, a stall
longer than ``--request-timeout``, a status line and headers trickled a byte at a
time, 500s, or the small mini cluster's own lists — through a kubeconfig pointing at
it, and checks:

- nothing read at all (every call failing, the lists failing while ``/version``
  answers): exit 3, one line on stderr naming what could not be read and why, nothing
  written, never a traceback;
- the node or pod list lost while the other is read: with GPU nodes found, the first
  stderr line names the lost list and the affected components are ``unknown``; with no
  GPU node found, exit 3 naming the list (never exit 0 on "no GPU nodes"); ``validate``
  says "Not ready: could not read …", never "Ready with warnings";
- an exec credential plugin that hangs (itself, or through a child holding its output
  open), fails, prints garbage or is missing: exit 3, one line naming the plugin, within
  the request timeout; a plugin that works authenticates every request;
- every case ends within a bound derived from the request timeout.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from lightkube.config.kubeconfig import SingleConfig
from lightkube.config.models import Cluster, Context, User
from livehelpers import running

from gpunode.apiserver import Faults, serve_bundle
from gpunode.collect import kube
from gpunode.collect.credentials import plugin_credentials
from gpunode.errors import SourceUnreachable

MINI = Path(__file__).parent / "fixtures" / "mini" / "cluster"
REPO = Path(__file__).resolve().parents[2]
GPUNODE = REPO / ".venv" / "bin" / "gpunode"
#: The request timeout every case runs with, and the longest a case may take: the lists,
#: then the pod-list fallback, each given up after CALL_TIMEOUTS timeouts, plus start-up
#: on a busy two-core machine.
TIMEOUT_S = 0.5
BOUND_S = 2 * (kube.CALL_TIMEOUTS + 1) * TIMEOUT_S + 8
#: What the subprocess may take at most before the test fails it (a hang, not slowness).
KILL_AFTER_S = 60
TOKEN = "hostile-test-token"
ELSEWHERE = "https://login.example.invalid/sso?return=/api"
LOGIN_PAGE = b"<!DOCTYPE html><html><head><title>Sign in</title></head><body>Sign in</body></html>"


# --- the hostile server ---------------------------------------------------------------------

#: How the server answers one path: ("json", body) | ("html",) | ("redirect",) | ("stall",)
#: | ("trickle",) | ("500",) | ("404",)
Answer = tuple[Any, ...]
Rules = Callable[[str], Answer]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, *_args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.server.seen.append((self.path, self.headers.get("Authorization", "")))
        answer = self.server.rules(urlsplit(self.path).path)
        kind = answer[0]
        if kind == "stall":
            self.server.stopping.wait(KILL_AFTER_S)
            return
        if kind == "trickle":
            self._trickle()
            return
        if kind == "json":
            self._send(200, answer[1], "application/json")
        elif kind == "html":
            self._send(200, LOGIN_PAGE, "text/html; charset=utf-8")
        elif kind == "redirect":
            self._send(302, b"", "text/plain", Location=ELSEWHERE)
        elif kind == "500":
            self._send(500, _status(500, "InternalError", "etcdserver: request timed out"),
                       "application/json")
        else:
            self._send(404, _status(404, "NotFound", "the server could not find the requested resource"),
                       "application/json")

    def _send(self, code: int, body: bytes, content_type: str, **headers: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _trickle(self) -> None:
        """A status line, then one header byte every 0.1 s: each read answers in time, the
        headers never end."""
        self.close_connection = True
        try:
            self.wfile.write(b"HTTP/1.1 200 OK\r\n")
            self.wfile.flush()
            while not self.server.stopping.wait(0.1):
                self.wfile.write(b"X")
                self.wfile.flush()
        except OSError:
            pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, rules: Rules) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.rules = rules
        self.seen: list[tuple[str, str]] = []
        self.stopping = threading.Event()


@dataclass
class Hostile:
    """A running hostile server and a kubeconfig for it."""

    url: str
    kubeconfig: Path
    server: _Server
    requests: list[tuple[str, str]] = field(default_factory=list)


@pytest.fixture()
def hostile(tmp_path: Path) -> Iterator[Callable[..., Hostile]]:
    started: list[_Server] = []

    def start(rules: Rules, *, user: dict[str, Any] | None = None) -> Hostile:
        server = _Server(rules)
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        started.append(server)
        url = f"http://127.0.0.1:{server.server_address[1]}"
        kubeconfig = tmp_path / f"kubeconfig-{len(started)}"
        kubeconfig.write_text(json.dumps({
            "apiVersion": "v1", "kind": "Config", "current-context": "hostile",
            "clusters": [{"name": "hostile", "cluster": {"server": url}}],
            "users": [{"name": "tester", "user": user or {"token": TOKEN}}],
            "contexts": [{"name": "hostile", "context": {"cluster": "hostile", "user": "tester"}}],
        }))
        return Hostile(url, kubeconfig, server, server.seen)

    yield start
    for server in started:
        server.stopping.set()
        server.shutdown()
        server.server_close()


def _status(code: int, reason: str, message: str) -> bytes:
    return json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message,
                       "reason": reason, "code": code}).encode()


def _list(name: str, items: list[Any] | None = None) -> Answer:
    """A list answer: the mini cluster's own items of ``name`` (or ``items``)."""
    if items is None:
        source = MINI / f"{name}.json"
        items = json.loads(source.read_text())["items"] if source.exists() else []
    return ("json", json.dumps({"kind": "List", "apiVersion": "v1", "metadata": {"resourceVersion": "1"},
                                "items": items}).encode())


VERSION = ("json", (MINI / "version.json").read_bytes())
NO_GROUPS = ("json", b'{"kind":"APIGroupList","groups":[]}')


def everything(kind: str) -> Rules:
    """Every path answered the same way, /version included."""
    return lambda _path: (kind,)


#: What the collector lists (cluster-wide or in a namespace).
PLURALS = frozenset({"nodes", "pods", "events", "services", "persistentvolumeclaims", "daemonsets",
                     "deployments", "storageclasses", "csidrivers", "csinodes", "runtimeclasses",
                     "configmaps"})


def lists(kind: str, **kept: Answer) -> Rules:
    """/version and discovery answer; every list answers ``kind`` ("empty": an empty list)
    unless ``kept`` names it (``nodes=_list("nodes")``); anything else (logs, execs,
    scrapes) is 404."""
    def rule(path: str) -> Answer:
        if path == "/version":
            return VERSION
        if path in ("/apis", "/api"):
            return NO_GROUPS
        plural = path.rstrip("/").rpartition("/")[2]
        if plural not in PLURALS:
            return ("404",)
        if plural in kept:
            return kept[plural]
        return _list(plural, []) if kind == "empty" else (kind,)
    return rule


# --- running the console script ---------------------------------------------------------------


@dataclass(frozen=True)
class Ran:
    code: int
    stdout: str
    stderr: str
    seconds: float


@pytest.fixture()
def gpunode(tmp_path: Path) -> Callable[..., Ran]:
    """``gpunode ARGS`` as a user runs it (the console script), HOME and TMPDIR in the test's
    folder, killed (and the test failed) if it outlives KILL_AFTER_S."""
    for sub in ("home", "tmp", "cwd"):
        (tmp_path / sub).mkdir(exist_ok=True)
    env = {**os.environ, "HOME": str(tmp_path / "home"), "TMPDIR": str(tmp_path / "tmp"), "COLUMNS": "200"}
    env.pop("KUBECONFIG", None)

    def run(*args: str) -> Ran:
        started = time.monotonic()
        done = subprocess.run([str(GPUNODE), *args], capture_output=True, text=True, env=env,
                              cwd=tmp_path / "cwd", timeout=KILL_AFTER_S, check=False)
        return Ran(done.returncode, done.stdout, done.stderr, time.monotonic() - started)
    return run


def _live(h: Hostile, *args: str) -> tuple[str, ...]:
    return (*_live_at(h.kubeconfig), *args)


def _live_at(kubeconfig: Path) -> tuple[str, ...]:
    return ("-q", "--kubeconfig", str(kubeconfig), "--request-timeout", f"{TIMEOUT_S:g}s")


def assert_one_line(ran: Ran, code: int, *words: str) -> str:
    """Exit ``code``, nothing on stdout, one ``gpunode:`` line on stderr holding ``words``."""
    assert "Traceback" not in ran.stderr, ran.stderr
    assert ran.code == code, f"exit {ran.code}: {ran.stderr}"
    lines = ran.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpunode: "), ran.stderr
    for word in words:
        assert word in lines[0], lines[0]
    assert ran.stdout == ""
    assert ran.seconds < BOUND_S, f"{ran.seconds:.1f} s"
    return lines[0]


# --- 1. nothing read: every call failing, or every list --------------------------------------

NOTHING_READ = [
    # (id, rules, words the one line must hold)
    ("html-everywhere", everything("html"), ("does not answer as a Kubernetes API server", "HTML page")),
    ("redirect-everywhere", everything("redirect"), ("redirected to", "login.example.invalid",
                                                     "another host")),
    ("stall-everywhere", everything("stall"), ("cannot reach", "timed out")),
    ("trickled-headers-everywhere", everything("trickle"), ("cannot reach", "timed out")),
    ("500-everywhere", everything("500"), ("cannot reach", "500")),
    ("html-lists", lists("html"), ("cannot read the cluster", "nodes or pods", "HTML page")),
    ("redirect-lists", lists("redirect"), ("cannot read the cluster", "redirected to", "another host")),
    ("stall-lists", lists("stall"), ("cannot read the cluster", "nodes or pods", "timed out")),
    ("trickled-headers-lists", lists("trickle"), ("cannot read the cluster", "timed out")),
    ("500-lists", lists("500"), ("cannot read the cluster", "500")),
]


@pytest.mark.slow
@pytest.mark.parametrize(("rules", "words"), [c[1:] for c in NOTHING_READ], ids=[c[0] for c in NOTHING_READ])
def test_nothing_read_exits_3(rules: Rules, words: tuple[str, ...], hostile: Callable[..., Hostile],
                              gpunode: Callable[..., Ran], tmp_path: Path) -> None:
    h = hostile(rules)
    assert_one_line(gpunode("diagnose", *_live(h)), 3, h.url, *words)


@pytest.mark.slow
@pytest.mark.parametrize("command", ["collect", "validate", "stack"])
def test_nothing_read_exits_3_for_every_live_command(command: str, hostile: Callable[..., Hostile],
                                                     gpunode: Callable[..., Ran], tmp_path: Path) -> None:
    """collect writes nothing, validate gives no verdict: the same one line as diagnose."""
    h = hostile(lists("html"))
    out = tmp_path / "bundle"
    extra = ("-o", str(out)) if command == "collect" else ()
    assert_one_line(gpunode(command, *_live(h, *extra)), 3, "cannot read the cluster", "HTML page")
    assert not out.exists()
    assert list((tmp_path / "tmp").iterdir()) == []


# --- 1. partial: the node or the pod list lost ------------------------------------------------


def _json(ran: Ran) -> dict[str, Any]:
    assert "Traceback" not in ran.stderr, ran.stderr
    report: dict[str, Any] = json.loads(ran.stdout)
    return report


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["html", "redirect", "stall", "500"])
def test_node_list_lost_gpu_nodes_unknown(kind: str, gpunode: Callable[..., Ran]) -> None:
    """The test API server serving the mini cluster, its node list answered ``kind``: the GPU
    nodes the pods and their node files show are reported, the node list's loss is said first,
    and every component judged from the Node object is unknown, saying why."""
    with serve_bundle(MINI.parent, faults=Faults(answers=(f"{kind} list nodes",))) as server:
        ran = gpunode("diagnose", "-o", "json", "--all-nodes", *_live_at(server.kubeconfig_path))
    assert ran.seconds < BOUND_S, f"{ran.seconds:.1f} s"
    first = ran.stderr.splitlines()[0]
    assert first.startswith("warning: listing nodes cluster-wide failed ("), ran.stderr
    report = _json(ran)
    assert ran.code == (1 if report["groups"] or report["cluster"]["root_causes"] else 0)
    assert [n["name"] for n in report["nodes"]] == ["gpu-wk-01", "gpu-wk-02"]
    for node in report["nodes"]:
        status = {c["component"]: c for c in node["components"]}
        for component in ("kernel", "kubelet", "container-runtime"):
            assert status[component]["status"] == "unknown", (node["name"], status[component])
            assert "no Node object: could not list nodes" in status[component]["summary"]


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "words"), [("html", ("HTML page",)), ("redirect", ("redirected to",)),
                                             ("stall", ("timed out",)), ("500", ("500",))])
def test_node_list_lost_no_gpu_node_exits_3(kind: str, words: tuple[str, ...],
                                            hostile: Callable[..., Hostile],
                                            gpunode: Callable[..., Ran]) -> None:
    """No pod shows a GPU node: never "No GPU nodes found" with exit 0."""
    h = hostile(lists("empty", nodes=(kind,), pods=_list("pods", [])))
    line = assert_one_line(gpunode("diagnose", *_live(h)), 3, "could not read the node list", *words)
    assert "no GPU node can be judged" in line
    assert_one_line(gpunode("stack", *_live(h)), 3, "could not read the node list")


def test_pod_list_lost_no_gpu_node_exits_3(hostile: Callable[..., Hostile],
                                           gpunode: Callable[..., Ran]) -> None:
    """Nodes without GPU labels and no pod list (every namespace of the fallback redirected):
    a GPU node the pods alone would show is not ruled out."""
    cpu = [n for n in json.loads((MINI / "nodes.json").read_text())["items"]
           if n["metadata"]["name"] == "mgmt-01"]
    h = hostile(lists("empty", nodes=_list("nodes", cpu), pods=("redirect",)))
    assert_one_line(gpunode("diagnose", *_live(h)), 3, "could not read the pod list", "redirected to")


@pytest.mark.slow
def test_validate_not_ready_when_the_node_list_is_lost(gpunode: Callable[..., Ran]) -> None:
    """validate: "Not ready: could not read the node list (…)", exit 1 in every format; never
    ready with warnings."""
    with serve_bundle(MINI.parent, faults=Faults(answers=("html list nodes",))) as server:
        live = _live_at(server.kubeconfig_path)
        table, as_json, junit = (gpunode("validate", "--scrape-interval", "0", *live, *fmt)
                                 for fmt in ((), ("-o", "json"), ("-o", "junit")))
    assert "Traceback" not in table.stderr + as_json.stderr + junit.stderr, table.stderr
    assert table.code == 1, table.stderr
    headline = table.stdout.splitlines()[0]
    assert headline.startswith("Verdict: Not ready: could not read the node list (could not list "
                               "nodes cluster-wide (200 an HTML page"), headline
    assert "Ready with warnings" not in table.stdout
    report = json.loads(as_json.stdout)
    assert as_json.code == 1 and report["verdict"] == "not-ready"
    check = next(c for cat in report["categories"] for c in cat["checks"] if c["id"] == "infra.api-reachable")
    assert check["verdict"] == "fail" and check["summary"].startswith("could not read the node list")
    assert junit.code == 1 and "could not read the node list" in junit.stdout


def test_a_saved_bundle_that_could_not_read_the_node_list(tmp_path: Path,
                                                         gpunode: Callable[..., Ran]) -> None:
    """The same rule offline: a bundle whose manifest records the node list as not read, with
    no GPU node in what it holds, is exit 3 for diagnose and not ready for validate; one that
    simply has no node list (made by hand) is the empty report it always was."""
    bundle = tmp_path / "bundle"
    (bundle / "cluster").mkdir(parents=True)
    (bundle / "cluster" / "pods.json").write_text('{"kind": "PodList", "items": []}')
    reason = "could not list nodes cluster-wide (302 redirected to https://login.example.invalid/sso)"
    (bundle / "manifest.json").write_text(json.dumps({
        "format": "gpunode-bundle/v1", "source": "live", "partial": True,
        "warnings": ["listing nodes cluster-wide failed (302 redirected to "
                     "https://login.example.invalid/sso): what needs nodes is unknown"],
        "missing": [{"path": "cluster/nodes.json", "reason": reason}]}))
    line = assert_one_line(gpunode("diagnose", "--from", str(bundle)), 3, str(bundle),
                           f"could not read the node list ({reason})")
    assert line.endswith("no GPU node can be judged without it")
    ran = gpunode("validate", "--from", str(bundle))
    assert ran.code == 1 and ran.stdout.startswith("Verdict: Not ready: could not read the node list"), ran
    (bundle / "manifest.json").unlink()
    handmade = gpunode("diagnose", "--from", str(bundle))
    assert handmade.code == 0 and "no GPU node found" in handmade.stderr, handmade


# --- 3. exec credential plugins ----------------------------------------------------------------


def _plugin(tmp_path: Path, body: str) -> str:
    script = tmp_path / "plugin" / "kube-login"
    script.parent.mkdir(exist_ok=True)
    script.write_text(f"#!{sys.executable}\nimport json, os, sys, time\n{body}\n")
    script.chmod(0o755)
    return str(script)


def _exec_user(command: str) -> dict[str, Any]:
    return {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": command,
                     "args": ["get-token", "--cluster", "hostile"]}}


_CREDENTIAL = json.dumps({"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential",
                          "status": {"token": TOKEN}})
PLUGINS = [
    # (id, plugin body, words the one line must hold)
    ("hangs", "time.sleep(600)", ("did not answer within 0.5 s",)),
    ("child-holds-output", "import subprocess\n"
     "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', __file__])\ntime.sleep(600)",
     ("did not answer within 0.5 s",)),
    ("fails", "sys.stderr.write('error: the SSO session has expired\\n'); sys.exit(1)",
     ("exited 1: error: the SSO session has expired",)),
    ("prints-garbage", "print('<html>not a credential</html>')", ("printed no ExecCredential",)),
    ("prints-no-token", "print(json.dumps({'kind': 'ExecCredential', 'status': {}}))",
     ("without a token",)),
    ("endless-output", "sys.stdout.write('x' * (1 << 22)); sys.stdout.flush(); time.sleep(600)",
     ("printed more than",)),
]


@pytest.mark.slow
@pytest.mark.parametrize(("body", "words"), [p[1:] for p in PLUGINS], ids=[p[0] for p in PLUGINS])
def test_credential_plugin_failure_is_one_line(body: str, words: tuple[str, ...], tmp_path: Path,
                                               hostile: Callable[..., Hostile],
                                               gpunode: Callable[..., Ran]) -> None:
    command = _plugin(tmp_path, body)
    h = hostile(lists("empty", nodes=_list("nodes"), pods=_list("pods")), user=_exec_user(command))
    for args in (("diagnose", *_live(h)), ("collect", *_live(h, "-o", str(tmp_path / "b")))):
        line = assert_one_line(gpunode(*args), 3, "kubeconfig user tester: credential plugin", command,
                               *words)
        assert ran_plugin_only(h), line
    assert not (tmp_path / "b").exists()
    assert not _alive(tmp_path), "the plugin (or a child it started) outlived the run"


def ran_plugin_only(h: Hostile) -> bool:
    """No request reached the server without credentials."""
    return h.requests == []


def _alive(tmp_path: Path) -> list[str]:
    """Processes still running a plugin script of this test."""
    return running(str(tmp_path / "plugin"))


def test_credential_plugin_missing(tmp_path: Path, hostile: Callable[..., Hostile],
                                   gpunode: Callable[..., Ran]) -> None:
    user = _exec_user("gpunode-test-no-such-plugin")
    user["exec"]["installHint"] = "install it with: brew install no-such-plugin\nmore text"
    h = hostile(lists("empty"), user=user)
    # a local error, as kubectl's (issue 22): exit 2, before any request
    assert_one_line(gpunode("diagnose", *_live(h)), 2, "credential plugin 'gpunode-test-no-such-plugin' "
                    "not found (install it with: brew install no-such-plugin)")


def test_credential_plugin_token_authenticates_every_request(tmp_path: Path, hostile: Callable[..., Hostile],
                                                             gpunode: Callable[..., Ran]) -> None:
    """The plugin runs once, told it is not interactive; its token goes with every request."""
    said = tmp_path / "plugin-env"
    command = _plugin(tmp_path, f"open({str(said)!r}, 'a').write(os.environ.get('KUBERNETES_EXEC_INFO', '') "
                                f"+ '\\n')\nprint({_CREDENTIAL!r})")
    h = hostile(lists("empty", nodes=_list("nodes"), pods=_list("pods"), daemonsets=_list("daemonsets")),
                user=_exec_user(command))
    ran = gpunode("diagnose", *_live(h, "-o", "json"))
    assert ran.code in (0, 1) and [n["name"] for n in _json(ran)["nodes"]] == ["gpu-wk-01", "gpu-wk-02"]
    assert h.requests and all(auth == f"Bearer {TOKEN}" for _, auth in h.requests), h.requests[:3]
    info = [json.loads(line) for line in said.read_text().splitlines()]
    assert info == [{"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential",
                     "spec": {"interactive": False}}]


def test_credential_plugin_default_timeout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without --request-timeout the plugin still has a deadline (the default, shortened here)."""
    from gpunode.collect import credentials

    assert kube.Timeouts.of(None).plugin_s == credentials.PLUGIN_TIMEOUT_S
    assert kube.Timeouts.of(2.5).plugin_s == 2.5
    command = _plugin(tmp_path, "time.sleep(600)")
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": "http://127.0.0.1:9"}}],
        "users": [{"name": "u", "user": _exec_user(command)}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
    monkeypatch.setattr(credentials, "PLUGIN_TIMEOUT_S", 0.3)
    started = time.monotonic()
    with pytest.raises(SourceUnreachable, match=r"did not answer within 0\.3 s"):
        plugin_credentials(kube.load_config(kubeconfig), credentials.PLUGIN_TIMEOUT_S)
    assert time.monotonic() - started < 5
    assert not _alive(tmp_path)


def test_trickled_headers_end_at_the_request_deadline() -> None:
    """One GET against a server that never finishes its headers gives up within the request
    timeout (plus the sockets' slack), not when the server stops."""
    stop = threading.Event()
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\n")
            while not stop.wait(0.05):
                conn.sendall(b"X")

    threading.Thread(target=serve, daemon=True).start()
    config = SingleConfig("c", Context(cluster="c"),
                          Cluster(server=f"http://127.0.0.1:{listener.getsockname()[1]}"), User(token=TOKEN))
    api = kube.KubeApi(config, timeouts=kube.Timeouts(0.4, 0.4, 0.4),
                       policy=kube.RetryPolicy(attempts=1, deadline_s=0.4))
    started = time.monotonic()
    try:
        with pytest.raises(kube.ApiFailure, match="timed out"):
            api.get("/version")
    finally:
        stop.set()
        api.close()
        listener.close()
    assert time.monotonic() - started < 0.4 + 1.5
