"""Helpers shared by the live tests (importable as ``livehelpers``: tests/live is on sys.path)."""

from __future__ import annotations

import copy
import json
import shutil
import ssl
from pathlib import Path
from typing import Any

import httpx2

from gpunode.apiserver import RunningServer


def http(server: RunningServer, token: str | None = None) -> httpx2.Client:
    """A plain HTTP client for the test server, verifying its CA like any client would."""
    context = ssl.create_default_context(cafile=str(server.ca_cert_path))
    return httpx2.Client(base_url=server.url, verify=context,
                         headers={"Authorization": f"Bearer {token or server.token}"})


def read_list(path: Path) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = json.loads(path.read_text())["items"]
    return items


def key(obj: dict[str, Any]) -> str:
    meta = obj["metadata"]
    return f"{meta.get('namespace', '')}/{meta['name']}"


def widen(src: Path, dest: Path, pods: int) -> Path:
    """A copy of ``src`` whose pod list is padded to ``pods`` workload pods (for paging)."""
    shutil.copytree(src, dest)
    doc = json.loads((dest / "cluster" / "pods.json").read_text())
    template = next(p for p in doc["items"] if p["metadata"]["name"].startswith("prometheus"))
    for i in range(pods - len(doc["items"])):
        extra = copy.deepcopy(template)
        extra["metadata"].update(name=f"trainer-{i:05d}", namespace="ml-team",
                                 labels={"app": "trainer", "shard": str(i % 7)},
                                 ownerReferences=[])
        extra["spec"]["nodeName"] = "gpu-wk-01" if i % 2 else "gpu-wk-02"
        extra["spec"]["containers"] = [{"image": "registry.example.com/ml/trainer:2.4",
                                        "name": "trainer", "resources": {}}]
        extra["status"]["containerStatuses"] = [{**extra["status"]["containerStatuses"][0],
                                                 "name": "trainer", "image": "trainer:2.4"}]
        doc["items"].append(extra)
    (dest / "cluster" / "pods.json").write_text(json.dumps(doc))
    return dest


def running(needle: str) -> list[str]:
    """Command lines of live processes holding ``needle`` (what a test left running)."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if needle in cmdline:
                found.append(cmdline)
    return found
