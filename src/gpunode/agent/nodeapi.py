"""The agent's calls to the API server: read its Node, patch its condition, keep its
GPUNodeReport. Beside, not inside, the condition and report modules whose paths and
values it sends, so neither of them imports the other's client."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import quote

import msgspec

from gpunode.agent.condition import FIELD_MANAGER, STRATEGIC_MERGE_PATCH
from gpunode.agent.nodereport import COLLECTION_PATH, JSON_PATCH, report_path


class NodeApiError(Exception):
    """The API server refused or failed a call (status code and its message)."""

    def __init__(self, message: str, code: int = 0) -> None:
        super().__init__(message)
        self.code = code


class LightkubeNodeApi:
    """NodeApi over the HTTP client lightkube builds from its config.

    lightkube handles in-cluster service accounts (re-reading rotated tokens),
    kubeconfigs and CA checks; the Node is read as raw JSON, not a typed model,
    so a field this lightkube-models version does not know never breaks a read.
    Each call ends within its timeout (twice it, for connect and answer), however
    the server dribbles its answer (gpunode/deadline.py).
    """

    def __init__(self, http: Any, timeout_s: float = 10.0) -> None:
        self._http = http
        self._call_s = 2 * timeout_s

    @classmethod
    def from_config(cls, config: Any, timeout_s: float = 10.0) -> LightkubeNodeApi:
        """From a lightkube ``SingleConfig`` (e.g. ``KubeConfig.from_env().get()``)."""
        import httpx2
        from lightkube.config.client_adapter import Client, ConnectionParams, verify_cluster
        from lightkube.config.models import User

        from gpunode.deadline import deadline_transport

        verify = verify_cluster(config.cluster, config.user or User(), config.abs_file, trust_env=False)
        params = ConnectionParams(timeout=httpx2.Timeout(timeout_s), transport=deadline_transport(verify))
        return cls(Client(config, params), timeout_s)

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        from gpunode.deadline import deadline

        with deadline(time.monotonic() + self._call_s):
            return getattr(self._http, method)(path, **kwargs)

    def get_node(self, name: str) -> dict[str, Any]:
        answer = self._call("get", f"/api/v1/nodes/{quote(name, safe='')}")
        _raise_for(answer)
        node: dict[str, Any] = msgspec.json.decode(answer.content)
        return node

    def patch_condition(self, name: str, condition: dict[str, str]) -> None:
        answer = self._call(
            "patch", f"/api/v1/nodes/{quote(name, safe='')}/status",
            content=msgspec.json.encode({"status": {"conditions": [condition]}}),
            headers={"Content-Type": STRATEGIC_MERGE_PATCH},
            params={"fieldManager": FIELD_MANAGER},
        )
        _raise_for(answer)

    def get_report(self, name: str) -> dict[str, Any] | None:
        """The node's GPUNodeReport, or None when there is none."""
        answer = self._call("get", report_path(quote(name, safe="")))
        if int(answer.status_code) == 404:
            return None
        _raise_for(answer)
        report: dict[str, Any] = msgspec.json.decode(answer.content)
        return report

    def create_report(self, body: dict[str, Any]) -> None:
        answer = self._call("post", COLLECTION_PATH, content=msgspec.json.encode(body),
                            headers={"Content-Type": "application/json"},
                            params={"fieldManager": FIELD_MANAGER})
        if int(answer.status_code) != 409:  # created meanwhile (a restart): fine
            _raise_for(answer)

    def set_report_status(self, name: str, status: dict[str, Any]) -> None:
        patch = [{"op": "add", "path": "/status", "value": status}]
        answer = self._call("patch", report_path(quote(name, safe="")) + "/status",
                            content=msgspec.json.encode(patch), headers={"Content-Type": JSON_PATCH},
                            params={"fieldManager": FIELD_MANAGER})
        _raise_for(answer)


def _raise_for(answer: Any) -> None:
    code = int(answer.status_code)
    if code >= 400:
        try:
            message = str(msgspec.json.decode(answer.content).get("message", ""))
        except (msgspec.DecodeError, AttributeError):
            message = " ".join(answer.content[:300].decode("utf-8", errors="replace").split())
        raise NodeApiError(f"{code} {message}".strip(), code)
