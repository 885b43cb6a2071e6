"""Probe JSON variants built from the probe recorded on a real H200, and judging them.

Every variant starts from ``tests/fixtures/node/h200-device/probe.json`` and changes
only what the scenario needs; host facts that are parsed files (runtime configs,
CDI specs) come from running the probe's own host collector over real config files,
so their shape is what the probe writes.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

import msgspec

from gpunode.cli import build_report
from gpunode.model import ComponentReport, NodeReport, RootCause, Status
from gpunode.probe import load_probe_json, write_probe_bundle
from gpunode.probe.host import collect_host
from gpunode.probe.hostfs import HostFS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "node"
DEVICE = FIXTURES / "h200-device"
RUNTIME = FIXTURES / "runtime"
NODE = "h200-device"
RECORDED_NODE_DIR = DEVICE / "bundle" / "nodes" / NODE

Facts = dict[str, Any]


@cache
def _recorded_text() -> str:
    return (DEVICE / "probe.json").read_text()


def recorded() -> Facts:
    """A fresh, mutable copy of the recorded probe facts."""
    return copy.deepcopy(json.loads(_recorded_text()))


def recorded_raw(*, nvidia_smi: bool = False) -> dict[str, str]:
    """The raw texts the recorded probe wrote (dmesg, host files); nvidia-smi only on request."""
    raw = {}
    for path in sorted(RECORDED_NODE_DIR.rglob("*")):
        rel = path.relative_to(RECORDED_NODE_DIR).as_posix()
        if path.is_file() and rel != "cmd/gpunode-probe.json" and (nvidia_smi or "nvidia-smi" not in rel):
            raw[rel] = path.read_text()
    return raw


def gpu(facts: Facts, index: int = 0) -> dict[str, Any]:
    gpus: list[dict[str, Any]] = facts["nvml"]["gpus"]
    return gpus[index]


def add_gpus(facts: Facts, count: int) -> None:
    """Turn the one recorded H200 into ``count`` alike GPUs on their own bus ids."""
    first = facts["nvml"]["gpus"][0]
    facts["nvml"]["gpus"] = []
    for index in range(count):
        clone = copy.deepcopy(first)
        clone.update(index=index, minor_number=index, pci_bus_id=f"00000000:{0x18 + index * 0x10:02X}:00.0")
        clone["uuid"] = f"GPU-21a3e46f-2d1d-09b3-8f24-c0c5fa2840{index:02x}"
        facts["nvml"]["gpus"].append(clone)
    facts["nvml"]["device_count"] = count


def no_nvidia_stack(facts: Facts) -> None:
    """What the probe reports on a machine with no NVIDIA driver at all (this dev box)."""
    facts["nvml"].update(
        init_ok=False,
        init_error="library_not_found",
        init_error_message="NVML Shared Library Not Found",
        driver_version=None,
        cuda_driver_version=None,
        nvml_version=None,
        device_count=None,
        gpus=[],
        calls={},
    )
    host = facts["host"]
    host.update(driver=None, driver_error="absent", driver_loaded_at=None, device_nodes=[])
    host["modules"] = {}
    host["kernel_log"]["driver_loaded"] = None


def module(name: str, size: int = 1_000_000, used_by: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"name": name, "size": size, "refcount": None, "used_by": list(used_by), "state": "Live"}


def host_files(tmp_path: Path, files: dict[str, str]) -> tuple[Facts, dict[str, str]]:
    """Run the probe's host collector over a fake host root holding ``files``.

    Returns the collected host facts (as JSON-able data) and the raw texts the probe
    would put in its bundle (``files/<path>``).
    """
    root = tmp_path / "host"
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    fs = HostFS(str(root))
    host, _ = collect_host(fs, kernel_log=False)
    raw = {f"files{path}": text for path, text in fs.texts.items()}
    return msgspec.to_builtins(host), raw


def runtime_file(rel: str) -> str:
    return (RUNTIME / rel).read_text()


def write_bundle(
    tmp_path: Path, facts: Facts, raw: dict[str, str] | None = None, node: dict[str, Any] | None = None
) -> Path:
    """The bundle ``write_probe_bundle`` writes for these facts (plus a Node object if given)."""
    result = load_probe_json(json.dumps(facts))
    result = msgspec.structs.replace(result, raw=recorded_raw() if raw is None else raw)
    out = tmp_path / "bundle"
    write_probe_bundle(result, out)
    if node is not None:
        (out / "cluster").mkdir()
        node_list = {"apiVersion": "v1", "kind": "List", "items": [node]}
        (out / "cluster" / "nodes.json").write_text(json.dumps(node_list))
    return out


def judge(
    tmp_path: Path, facts: Facts, raw: dict[str, str] | None = None, node: dict[str, Any] | None = None
) -> NodeReport:
    """Diagnose the probe's node with the normal engine."""
    report = build_report(write_bundle(tmp_path, facts, raw, node), [facts["node_name"]])
    return report.nodes[0]


def component(report: NodeReport, cid: str) -> ComponentReport:
    return next(c for c in report.components if c.component == cid)


def status(report: NodeReport, cid: str) -> Status:
    return component(report, cid).status


def root_causes(report: NodeReport) -> list[tuple[str, str]]:
    return [(rc.component, rc.cause) for rc in report.root_causes]


def root_cause(report: NodeReport, cid: str) -> RootCause:
    return next(rc for rc in report.root_causes if rc.component == cid)


def excerpts(rc: RootCause) -> str:
    return "\n".join(ev.excerpt for ev in rc.evidence)


def node_object(name: str = NODE, gpus: int = 1) -> dict[str, Any]:
    """A GPU node as ``kubectl get nodes -o json`` lists it (trimmed to what checks read)."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "nvidia.com/gpu.present": "true",
                "nvidia.com/gpu.count": str(gpus),
                "nvidia.com/gpu.product": "NVIDIA-H200",
            },
        },
        "spec": {},
        "status": {
            "capacity": {"cpu": "64", "memory": "1056545288Ki", "nvidia.com/gpu": str(gpus)},
            "allocatable": {"cpu": "63900m", "memory": "1045211656Ki", "nvidia.com/gpu": str(gpus)},
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "message": "kubelet is posting ready status",
                    "lastHeartbeatTime": "2026-11-30T19:48:50Z",
                    "lastTransitionTime": "2026-11-30T08:02:11Z",
                }
            ],
            "nodeInfo": {
                "kernelVersion": "6.18.44-fc-v657-gpu",
                "osImage": "Ubuntu 24.04.3 LTS",
                "containerRuntimeVersion": "containerd://1.7.27",
                "kubeletVersion": "v1.31.6",
                "kubeProxyVersion": "v1.31.6",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
        },
    }
