"""The agent's GPUNodeReport: created once, status on change and every interval, fits the CRD and RBAC."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jsonschema
import pytest
from agent_helpers import NODE, XID_79, node_object, recorded_probe, with_kernel_lines
from lightkube import KubeConfig
from manifests import DEPLOY, load_docs, render
from test_node_api import _rbac_calls

from gpunode.agent.history import HistoryStore
from gpunode.agent.judge import judge_probe
from gpunode.agent.loop import Agent, AgentConfig
from gpunode.agent.nodeapi import LightkubeNodeApi
from gpunode.agent.nodereport import COLLECTION_PATH, GROUP, PLURAL, ReportPublisher, report_path
from gpunode.probe import ProbeResult

NODE_UID = "3f1c9a0e-7b1d-4a55-9c1e-2d7f0a6b8e21"
VERBS = {"GET": "get", "POST": "create", "PATCH": "patch", "PUT": "update"}


class ReportStub(ThreadingHTTPServer):
    """Plain-HTTP stand-in for the API server: one Node, GPUNodeReports with a status subresource."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), ReportHandler)
        node = node_object()
        node["metadata"]["uid"] = NODE_UID
        self.node = node
        self.reports: dict[str, dict[str, Any]] = {}
        self.requests: list[dict[str, Any]] = []
        self.forbid_reports = False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class ReportHandler(BaseHTTPRequestHandler):
    server: ReportStub

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""

    def _reply(self, code: int, obj: Any) -> None:
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _status(self, code: int, message: str) -> None:
        self._reply(code, {"kind": "Status", "apiVersion": "v1", "code": code, "message": message})

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        url = urlsplit(self.path)
        self.server.requests.append({"method": self.command, "path": url.path, "body": body,
                                     "query": parse_qs(url.query),
                                     "content_type": self.headers.get("Content-Type", "")})
        if url.path == f"/api/v1/nodes/{NODE}" and self.command == "GET":
            self._reply(200, self.server.node)
        elif url.path.startswith(COLLECTION_PATH) and self.server.forbid_reports:
            self._status(403, f'{PLURAL}.{GROUP} is forbidden: User "system:serviceaccount:gpunode:'
                              f'gpunode-agent" cannot {VERBS[self.command]} resource "{PLURAL}"')
        elif url.path.startswith(COLLECTION_PATH):
            self._report(url.path.removeprefix(COLLECTION_PATH).strip("/").split("/"), body)
        else:
            self._status(404, "not found")

    def _report(self, parts: list[str], body: Any) -> None:
        reports = self.server.reports
        if parts == [""] and self.command == "POST":
            name = body["metadata"]["name"]
            if name in reports:
                self._status(409, f'{PLURAL}.{GROUP} "{name}" already exists')
                return
            reports[name] = {k: v for k, v in body.items() if k != "status"}  # status subresource
            self._reply(201, reports[name])
        elif len(parts) == 1 and self.command == "GET":
            found = reports.get(parts[0])
            self._reply(200, found) if found else self._status(404, f'"{parts[0]}" not found')
        elif parts[1:] == ["status"] and self.command == "PATCH" and parts[0] in reports:
            (op,) = body
            assert (op["op"], op["path"]) == ("add", "/status")
            reports[parts[0]]["status"] = op["value"]
            self._reply(200, reports[parts[0]])
        else:
            self._status(404, "not found")

    do_GET = do_POST = do_PATCH = do_PUT = _handle


@pytest.fixture
def stub() -> Iterator[ReportStub]:
    server = ReportStub()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(5)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Probe:
    def __init__(self, result: ProbeResult) -> None:
        self.result = result

    def __call__(self) -> ProbeResult:
        return self.result


def _api(url: str) -> LightkubeNodeApi:
    config = KubeConfig.from_dict({
        "clusters": [{"name": "c", "cluster": {"server": url}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }).get()
    return LightkubeNodeApi.from_config(config)


def _agent(stub: ReportStub, probe: Probe, clock: Clock, interval_s: float = 300.0) -> Agent:
    api = _api(stub.url)
    reports = ReportPublisher(api, NODE, interval_s, clock=clock)
    return Agent(AgentConfig(NODE, interval_s=30), probe, judge=judge_probe, node_api=api, clock=clock,
                 reports=reports)


def _crd_schema() -> dict[str, Any]:
    (crd,) = [d for d in load_docs(DEPLOY / "gpunodereport-crd.yaml")]
    (version,) = crd["spec"]["versions"]
    schema: dict[str, Any] = version["schema"]["openAPIV3Schema"]
    return schema


def _writes(stub: ReportStub) -> list[tuple[str, str]]:
    return [(r["method"], r["path"]) for r in stub.requests if r["method"] != "GET"]


def test_first_cycle_creates_the_report_owned_by_its_node_and_sets_its_status(stub: ReportStub) -> None:
    _agent(stub, Probe(recorded_probe()), Clock()).run_once()
    assert [(r["method"], r["path"]) for r in stub.requests] == [
        ("GET", f"/api/v1/nodes/{NODE}"), ("GET", report_path(NODE)),
        ("POST", COLLECTION_PATH), ("PATCH", report_path(NODE) + "/status")]
    created, patched = (r for r in stub.requests if r["method"] != "GET")
    owner = {"apiVersion": "v1", "kind": "Node", "name": NODE, "uid": NODE_UID}
    assert created["body"]["metadata"]["ownerReferences"] == [owner]
    assert created["body"]["spec"] == {"nodeName": NODE}
    assert patched["content_type"] == "application/json-patch+json"
    assert patched["query"] == {"fieldManager": ["gpunode-agent"]}
    report = stub.reports[NODE]
    jsonschema.validate(report, _crd_schema())
    status = report["status"]
    assert (status["verdict"], status["rootCause"], status["rootCauses"]) == ("ok", "", [])
    assert status["facts"]["node_name"] == NODE and "raw" not in status["facts"]
    assert status["probedAt"] == recorded_probe().collected_at
    assert {"component": "driver", "status": "ok"} in status["components"]


def test_status_carries_the_trends_of_the_history(stub: ReportStub, tmp_path: Path) -> None:
    agent = _agent(stub, Probe(with_kernel_lines(recorded_probe(), XID_79)), Clock())
    agent.history = HistoryStore(tmp_path, NODE)
    agent.run_once()
    report = stub.reports[NODE]
    jsonschema.validate(report, _crd_schema())
    (trend,) = report["status"]["trends"]
    assert (trend["kind"], trend["count"]) == ("xid", 1) and trend["message"].startswith("Xid 79 once in")


def test_status_is_written_on_change_and_at_least_every_interval(stub: ReportStub) -> None:
    clock, probe = Clock(), Probe(recorded_probe())
    agent = _agent(stub, probe, clock, interval_s=300)
    agent.run_once()
    for _ in range(5):  # unchanged verdict within the interval: no writes
        clock.now += 30
        agent.run_once()
    assert len(_writes(stub)) == 2
    clock.now += 160  # 310 s after the first publication
    agent.run_once()
    assert _writes(stub)[-1] == ("PATCH", report_path(NODE) + "/status")
    assert len(_writes(stub)) == 3
    probe.result = with_kernel_lines(recorded_probe(), XID_79)
    clock.now += 30
    agent.run_once()  # a changed verdict is published at once
    assert len(_writes(stub)) == 4
    status = stub.reports[NODE]["status"]
    assert status["verdict"] == "failed" and status["rootCause"]
    assert any(rc["cause"] == status["rootCause"] and rc["status"] == "failed" for rc in status["rootCauses"])
    jsonschema.validate(stub.reports[NODE], _crd_schema())


def test_a_restarted_agent_reuses_its_report(stub: ReportStub) -> None:
    _agent(stub, Probe(recorded_probe()), Clock()).run_once()
    _agent(stub, Probe(recorded_probe()), Clock()).run_once()
    assert [m for m, _ in _writes(stub)] == ["POST", "PATCH", "PATCH"]


def test_without_permission_it_keeps_probing_and_says_so_once(
        stub: ReportStub, caplog: pytest.LogCaptureFixture) -> None:
    stub.forbid_reports = True
    clock = Clock()
    agent = _agent(stub, Probe(recorded_probe()), clock, interval_s=300)
    with caplog.at_level(logging.INFO, logger="gpunode.agent.nodereport"):
        for _ in range(12):  # 6 minutes of 30 s cycles
            agent.run_once()
            clock.now += 30
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "403" in warnings[0].getMessage()
    tries = [r for r in stub.requests if r["path"].startswith(COLLECTION_PATH)]
    assert len(tries) == 2  # once at start, once after the interval
    snap = agent.snapshot
    assert snap is not None and snap.node_report is not None  # /metrics, /report keep being served
    errors = agent.metrics.probe_errors.labels(step="node-report")._value.get()
    assert errors == 2
    stub.forbid_reports = False  # granted: the next try after the interval succeeds
    clock.now += 300
    agent.run_once()
    assert "status" in stub.reports[NODE]


def test_rbac_allows_every_report_call_the_agent_makes(stub: ReportStub) -> None:
    agent = _agent(stub, Probe(recorded_probe()), Clock())
    agent.run_once()
    stub.reports.clear()  # deleted meanwhile: recreated on the next publication
    agent._reports._exists = False  # type: ignore[union-attr]
    agent.run_once()
    made = set()
    for r in stub.requests:
        if r["path"].startswith(COLLECTION_PATH):
            sub = "/status" if r["path"].endswith("/status") else ""
            made.add((VERBS[r["method"]], PLURAL + sub))
    assert made == {("get", PLURAL), ("create", PLURAL), ("patch", f"{PLURAL}/status")}
    assert made <= _rbac_calls(render(), GROUP)
    reader = [d for d in load_docs(DEPLOY.parent / "rbac-readonly.yaml") if d["kind"] == "ClusterRole"]
    allowed = {(v, r) for role in reader for rule in role["rules"] if rule["apiGroups"] == [GROUP]
               for v in rule["verbs"] for r in rule["resources"]}
    assert ("list", PLURAL) in allowed and not {v for v, _ in allowed} - {"get", "list"}


def test_a_stale_agent_publishes_unknown_once_then_every_interval(stub: ReportStub) -> None:
    clock, probe = Clock(), Probe(recorded_probe())
    agent = _agent(stub, probe, clock, interval_s=300)
    agent.run_once()

    def failing() -> ProbeResult:
        raise RuntimeError("NVML: driver gone")

    agent._probe = failing  # type: ignore[assignment]
    for _ in range(14):  # probes fail for 7 minutes; stale after 90 s (3 intervals)
        clock.now += 30
        agent.run_once()
    patches = [r for r in stub.requests if r["method"] == "PATCH"]
    assert [p["body"][0]["value"]["verdict"] for p in patches] == ["ok", "unknown", "unknown"]
    assert patches[1]["body"][0]["value"]["message"] == "no successful gpunode probe for more than 90s"
