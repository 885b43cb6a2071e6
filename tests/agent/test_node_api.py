"""The agent's API calls over HTTP: their exact shape, and that RBAC allows exactly them."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import msgspec
import pytest
from agent_helpers import NODE, XID_79, node_object, recorded_probe, with_kernel_lines
from lightkube import KubeConfig
from manifests import by_kind, render

from gpunode.agent.condition import CONDITION_TYPE
from gpunode.agent.judge import judge_probe
from gpunode.agent.loop import Agent, AgentConfig
from gpunode.agent.nodeapi import LightkubeNodeApi, NodeApiError
from gpunode.apiserver import serve_bundle

TOKEN = "agent-test-token"


class StubApiServer(ThreadingHTTPServer):
    """Plain-HTTP stand-in for the API server: one Node, conditions merged by type."""

    daemon_threads = True

    def __init__(self, node: dict[str, Any]) -> None:
        super().__init__(("127.0.0.1", 0), StubHandler)
        self.node = node
        self.requests: list[dict[str, Any]] = []


class StubHandler(BaseHTTPRequestHandler):
    server: StubApiServer

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""

    def _record(self) -> tuple[str, bytes]:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        url = urlsplit(self.path)
        self.server.requests.append(
            {
                "method": self.command,
                "path": url.path,
                "query": parse_qs(url.query),
                "content_type": self.headers.get("Content-Type", ""),
                "auth": self.headers.get("Authorization", ""),
                "body": json.loads(body) if body else None,
            }
        )
        return url.path, body

    def _reply(self, code: int, obj: Any) -> None:
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        path, _ = self._record()
        if path == f"/api/v1/nodes/{NODE}":
            self._reply(200, self.server.node)
        else:
            self._reply(404, {"kind": "Status", "code": 404, "message": f'nodes "{path}" not found'})

    def do_PATCH(self) -> None:
        path, body = self._record()
        if path != f"/api/v1/nodes/{NODE}/status":
            self._reply(404, {"kind": "Status", "code": 404, "message": "not found"})
            return
        for cond in json.loads(body)["status"]["conditions"]:
            kept = [c for c in self.server.node["status"]["conditions"] if c["type"] != cond["type"]]
            self.server.node["status"]["conditions"] = [*kept, cond]
        self._reply(200, self.server.node)


@pytest.fixture
def stub() -> Iterator[StubApiServer]:
    server = StubApiServer(node_object())
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(5)


def _api(server: str) -> LightkubeNodeApi:
    config = KubeConfig.from_dict(
        {
            "clusters": [{"name": "c", "cluster": {"server": server}}],
            "users": [{"name": "u", "user": {"token": TOKEN}}],
            "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
            "current-context": "x",
        }
    ).get()
    return LightkubeNodeApi.from_config(config)


def _agent(api: LightkubeNodeApi, probe: Any, set_condition: bool = True) -> Agent:
    return Agent(AgentConfig(NODE, interval_s=60), lambda: probe, judge=judge_probe, node_api=api,
                 set_condition=set_condition)


def test_requests_have_the_shape_the_api_server_expects(stub: StubApiServer) -> None:
    agent = _agent(_api(f"http://127.0.0.1:{stub.server_address[1]}"), recorded_probe())
    agent.run_once()
    get, patch = stub.requests
    assert (get["method"], get["path"], get["auth"]) == ("GET", f"/api/v1/nodes/{NODE}", f"Bearer {TOKEN}")
    assert (patch["method"], patch["path"]) == ("PATCH", f"/api/v1/nodes/{NODE}/status")
    assert patch["content_type"] == "application/strategic-merge-patch+json"
    assert patch["query"] == {"fieldManager": ["gpunode-agent"]}
    (cond,) = patch["body"]["status"]["conditions"]
    assert set(cond) == {"type", "status", "reason", "message", "lastHeartbeatTime", "lastTransitionTime"}
    assert (cond["type"], cond["status"], cond["reason"]) == (CONDITION_TYPE, "True", "NoRootCause")
    assert [c["type"] for c in stub.node["status"]["conditions"]] == ["Ready", CONDITION_TYPE]


def test_a_restarted_agent_does_not_repatch_an_unchanged_condition(stub: StubApiServer) -> None:
    url = f"http://127.0.0.1:{stub.server_address[1]}"
    broken = with_kernel_lines(recorded_probe(), XID_79)
    first = _agent(_api(url), broken)
    first.run_once()
    first.run_once()
    assert [r["method"] for r in stub.requests] == ["GET", "PATCH"]
    restarted = _agent(_api(url), broken)
    restarted.run_once()
    assert [r["method"] for r in stub.requests] == ["GET", "PATCH", "GET"]
    healed = _agent(_api(url), recorded_probe())
    healed.run_once()
    assert [r["method"] for r in stub.requests][-2:] == ["GET", "PATCH"]
    assert stub.requests[-1]["body"]["status"]["conditions"][0]["status"] == "True"


def test_api_errors_carry_the_status_message(stub: StubApiServer) -> None:
    api = _api(f"http://127.0.0.1:{stub.server_address[1]}")
    with pytest.raises(NodeApiError, match=r"^404 nodes .* not found"):
        api.get_node("gpu-wk-99")


def _rbac_calls(objects: list[dict[str, Any]], group: str = "") -> set[tuple[str, str]]:
    """(verb, resource) pairs the ClusterRoles allow in one API group (the core group by default)."""
    calls = set()
    for role in by_kind(objects, "ClusterRole"):
        for rule in role["rules"]:
            assert len(rule["apiGroups"]) == 1 and "resourceNames" not in rule
            if rule["apiGroups"] == [group]:
                calls |= {(v, r) for v in rule["verbs"] for r in rule["resources"]}
    return calls


def _node_bundle(tmp_path: Path) -> Path:
    (tmp_path / "cluster").mkdir()
    nodes = {"apiVersion": "v1", "kind": "List", "items": [node_object()]}
    (tmp_path / "cluster" / "nodes.json").write_bytes(msgspec.json.encode(nodes))
    return tmp_path


@pytest.mark.parametrize(("components", "set_condition"), [((), False), (("node-condition",), True)])
def test_rbac_allows_exactly_the_calls_the_agent_makes(
    tmp_path: Path, components: tuple[str, ...], set_condition: bool
) -> None:
    with serve_bundle(_node_bundle(tmp_path)) as server:
        api = LightkubeNodeApi.from_config(KubeConfig.from_file(server.kubeconfig_path).get())
        agent = _agent(api, with_kernel_lines(recorded_probe(), XID_79), set_condition)
        agent.run_once()
        audit = server.audit()
    assert {(a.verb, a.resource) for a in audit} == _rbac_calls(render(*components))
    assert {a.name for a in audit} == {NODE}  # only its own node, though RBAC cannot say so
