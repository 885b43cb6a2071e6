"""Helpers for the agent tests: a recorded probe, a scripted probe, a fake Node API, HTTP."""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from gpunode.agent.loop import Agent
from gpunode.agent.server import RunningServer
from gpunode.parse.kernel_log import parse_kernel_log
from gpunode.probe import ProbeResult, load_probe_json
from gpunode.probe.host_facts import KernelLogFacts

DEVICE = Path(__file__).resolve().parents[1] / "fixtures" / "node" / "h200-device"
NODE = "gpu-wk-01"
XID_79 = (
    "[ 9120.551877] NVRM: Xid (PCI:0000:00:06): 79, pid='<unknown>', name=<unknown>, "
    "GPU has fallen off the bus."
)
XID_48 = (
    "[ 9121.104412] NVRM: Xid (PCI:0000:00:06): 48, pid=91237, name=python3, Ch 00000076, "
    "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6."
)


def recorded_probe(node: str = NODE) -> ProbeResult:
    """The probe recorded on a real H200, with the raw texts its bundle holds."""
    result = load_probe_json((DEVICE / "probe.json").read_bytes())
    node_dir = DEVICE / "bundle" / "nodes" / "h200-device"
    raw = {
        p.relative_to(node_dir).as_posix(): p.read_text()
        for p in sorted(node_dir.rglob("*"))
        if p.is_file() and p.name != "gpunode-probe.json"
    }
    return msgspec.structs.replace(result, node_name=node, raw=raw)


def with_kernel_lines(result: ProbeResult, *lines: str) -> ProbeResult:
    """The same probe, as if the kernel had logged ``lines`` since (dmesg text and parsed facts)."""
    text = result.raw.get("cmd/dmesg.txt", "") + "".join(line + "\n" for line in lines)
    log = parse_kernel_log(text)
    facts = KernelLogFacts(
        source="/dev/kmsg",
        xids=log.xids,
        fallen_off_bus=log.fallen_off_bus,
        nvrm_errors=log.nvrm_errors,
        driver_loaded=log.driver_loaded,
        pci_to_uuid=log.pci_to_uuid,
    )
    host = msgspec.structs.replace(result.host, kernel_log=facts)
    return msgspec.structs.replace(result, host=host, raw={**result.raw, "cmd/dmesg.txt": text})


class ScriptedProbe:
    """A probe function that answers from a script; the last entry repeats.

    An entry is a ProbeResult or an exception to raise. ``script`` may be
    replaced while the agent runs (tests change what the node "shows").
    """

    def __init__(self, *script: ProbeResult | Exception) -> None:
        self.script: list[ProbeResult | Exception] = list(script)
        self.calls = 0
        self._lock = threading.Lock()

    def set(self, *script: ProbeResult | Exception) -> None:
        with self._lock:
            self.script, self.calls = list(script), 0

    def __call__(self) -> ProbeResult:
        with self._lock:
            entry = self.script[min(self.calls, len(self.script) - 1)]
            self.calls += 1
        if isinstance(entry, Exception):
            raise entry
        return entry


class FakeNodeApi:
    """Keeps a Node object in memory and applies condition patches as the API server does."""

    def __init__(self, node: dict[str, Any] | None = None) -> None:
        self.node = node or node_object()
        self.calls: list[tuple[str, str]] = []
        self.patches: list[dict[str, str]] = []
        self.fail_patch = False
        self._lock = threading.Lock()

    def get_node(self, name: str) -> dict[str, Any]:
        with self._lock:
            self.calls.append(("get", name))
            return msgspec.json.decode(msgspec.json.encode(self.node))

    def patch_condition(self, name: str, condition: dict[str, str]) -> None:
        with self._lock:
            self.calls.append(("patch", name))
            if self.fail_patch:
                raise ConnectionError("API server unreachable")
            self.patches.append(dict(condition))
            conditions = self.node["status"].setdefault("conditions", [])
            kept = [c for c in conditions if c["type"] != condition["type"]]
            self.node["status"]["conditions"] = [*kept, dict(condition)]


def node_object(name: str = NODE, conditions: list[dict[str, str]] | None = None) -> dict[str, Any]:
    """A GPU worker's Node, shaped like ``kubectl get node -o json`` (trimmed)."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "nvidia.com/gpu.present": "true",
                "nvidia.com/gpu.count": "1",
                "nvidia.com/gpu.product": "NVIDIA-H200",
            },
        },
        "spec": {},
        "status": {
            "capacity": {"cpu": "64", "memory": "263854212Ki", "nvidia.com/gpu": "1"},
            "conditions": conditions
            or [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "message": "kubelet is posting ready status",
                    "lastHeartbeatTime": "2026-11-30T10:00:00Z",
                    "lastTransitionTime": "2026-11-29T08:00:00Z",
                }
            ],
            "nodeInfo": {
                "machineID": "5e3b8f0c6a0d4d8c9f1e2a3b4c5d6e7f",
                "systemUUID": "4c4c4544-0047-3510-8052-b4c04f4d4a32",
                "bootID": "0f6e1c52-8d3e-4c3b-9a57-1f0c2e9d7a41",
                "kernelVersion": "6.8.0-45-generic",
                "osImage": "Ubuntu 24.04.1 LTS",
                "containerRuntimeVersion": "containerd://1.7.24",
                "kubeletVersion": "v1.31.4",
                "kubeProxyVersion": "",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
            "images": [{"names": ["nvcr.io/nvidia/cuda:12.4.1-base"], "sizeBytes": 100}],
        },
    }


def wait_until(predicate: Callable[[], bool], timeout_s: float = 5.0) -> bool:
    """Poll ``predicate`` every 10 ms; True as soon as it holds."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


def http_get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str, bytes]:
    """Status, content type and body; error statuses are returned, not raised."""
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            return answer.status, answer.headers.get("Content-Type", ""), answer.read()
    except urllib.error.HTTPError as err:
        return err.code, err.headers.get("Content-Type", ""), err.read()


class RunningAgent:
    """An agent with its endpoint server on a loopback port."""

    def __init__(self, agent: Agent, server: RunningServer) -> None:
        self.agent = agent
        self.server = server
        self.url = f"http://127.0.0.1:{server.port}"

    def get(self, path: str, headers: dict[str, str] | None = None) -> tuple[int, str, bytes]:
        return http_get(self.url + path, headers)


AgentFactory = Callable[..., RunningAgent]
