"""Place one real file from a public source into an otherwise healthy simulated bundle.

The healthy ``falcon-ai`` bundle is built once; each case copies it and puts the real
file where that node's data lives, then makes the rest of the bundle agree with the
file the way a real cluster with that node would: the driver version everywhere
(labels, /proc, dmesg, driver pods, metrics), the GPU model and count on the node
(labels, capacity, DCGM scrape), MIG labels and resources when the GPUs are in MIG
mode, the distribution's containerd config path and kubelet/runtime versions.
"""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpunode.cli import build_report
from gpunode.model import NodeReport, Status

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
NODE = "gpu-wk-01"
SIM_DRIVER = "570.133.20"
SIM_PRODUCT = "NVIDIA H100 80GB HBM3"
BAD = (Status.FAILED, Status.DEGRADED)


@dataclass
class GpuSet:
    """What a node's GPUs look like to Kubernetes and to the exporters."""

    product: str
    count: int
    memory_mib: int | None = None
    # MIG instances by profile ("1g.10gb": 7) when the GPUs are partitioned
    mig: dict[str, int] = field(default_factory=dict)
    vgpu: bool = False


@dataclass
class Placed:
    """A bundle holding one real file, ready to diagnose."""

    root: Path
    node: str = NODE

    def node_dir(self) -> Path:
        return self.root / "nodes" / self.node

    def report(self) -> NodeReport:
        return build_report(self.root, [self.node]).nodes[0]


def fixture_files(kind: str) -> list[Path]:
    """The real files of one kind, sorted by name."""
    return sorted(p for p in (REAL / kind).iterdir() if p.is_file())


def new_bundle(base: Path, dest: Path, node: str = NODE) -> Placed:
    shutil.copytree(base, dest)
    return Placed(dest, node)


# ---------------------------------------------------------------- cluster-wide edits


def set_driver_version(placed: Placed, version: str) -> None:
    """The whole cluster runs ``version``: every mention of the simulator's driver changes."""
    if version == SIM_DRIVER:
        return
    for path in placed.root.rglob("*"):
        if path.is_file():
            text = path.read_text(errors="replace")
            if SIM_DRIVER in text:
                path.write_text(text.replace(SIM_DRIVER, version))
    parts = [*version.split("."), "", ""]
    labels = {
        "nvidia.com/cuda.driver.major": parts[0],
        "nvidia.com/cuda.driver.minor": parts[1],
        "nvidia.com/cuda.driver.rev": parts[2],
        "nvidia.com/cuda.driver-version.major": parts[0],
        "nvidia.com/cuda.driver-version.minor": parts[1],
        "nvidia.com/cuda.driver-version.revision": parts[2],
    }
    for name in _gpu_node_names(placed):
        edit_node(placed, name, lambda n: n["metadata"]["labels"].update(labels))


def _gpu_node_names(placed: Placed) -> list[str]:
    return sorted(p.name for p in (placed.root / "nodes").iterdir() if p.is_dir())


def edit_node(placed: Placed, name: str, change: Any) -> None:
    """Apply ``change(node_dict)`` to one Node object in cluster/nodes.json."""
    path = placed.root / "cluster" / "nodes.json"
    data = json.loads(path.read_text())
    for item in data["items"]:
        if item["metadata"]["name"] == name:
            change(item)
    path.write_text(json.dumps(data, indent=1))


def set_node_info(placed: Placed, **info: str) -> None:
    edit_node(placed, placed.node, lambda n: n["status"]["nodeInfo"].update(info))


# ---------------------------------------------------------------- the node's GPUs


def set_gpus(placed: Placed, gpus: GpuSet, *, keep_smi: bool = False, keep_dcgm: bool = False) -> None:
    """Labels, capacity and DCGM scrape of the node say what ``gpus`` says.

    The simulator's nvidia-smi output describes its own H100s, so it goes unless the
    caller puts a real one in its place (``keep_smi``).
    """
    edit_node(placed, placed.node, lambda n: _relabel(n, gpus))
    cmd = placed.node_dir() / "cmd"
    if not keep_smi:
        for name in ("nvidia-smi-q.xml", "nvidia-smi.txt"):
            (cmd / name).unlink(missing_ok=True)
    if not keep_dcgm:
        scrape = placed.node_dir() / "metrics" / "dcgm-exporter.prom"
        scrape.write_text(_dcgm_for(scrape.read_text(), gpus))


def _relabel(node: dict[str, Any], gpus: GpuSet) -> None:
    labels: dict[str, str] = node["metadata"]["labels"]
    labels["nvidia.com/gpu.product"] = gpus.product.replace(" ", "-")
    labels["nvidia.com/gpu.count"] = str(gpus.count)
    if gpus.memory_mib:
        labels["nvidia.com/gpu.memory"] = str(gpus.memory_mib)
    labels["nvidia.com/vgpu.present"] = "true" if gpus.vgpu else "false"
    resources = {"nvidia.com/gpu": str(gpus.count)}
    if gpus.mig:
        labels["nvidia.com/mig.strategy"] = "mixed"
        labels["nvidia.com/mig.config"] = "custom"
        resources["nvidia.com/gpu"] = "0"
        for profile, count in gpus.mig.items():
            resources[f"nvidia.com/mig-{profile}"] = str(count)
            labels[f"nvidia.com/mig-{profile}.count"] = str(count)
            labels[f"nvidia.com/mig-{profile}.product"] = f"{labels['nvidia.com/gpu.product']}-MIG-{profile}"
    for key in ("capacity", "allocatable"):
        node["status"][key].update(resources)


_SAMPLE = re.compile(
    r'^(\w+)\{gpu="(\d+)",UUID="([^"]*)",pci_bus_id="([^"]*)",device="nvidia\d+",modelName="([^"]*)"(.*)$'
)


def _dcgm_for(scrape: str, gpus: GpuSet) -> str:
    """The simulator's scrape re-dressed for ``gpus``: GPU 0's samples cloned per GPU."""
    out: list[str] = []
    for line in scrape.splitlines():
        match = _SAMPLE.match(line)
        if match is None:
            out.append(line)
            continue
        family, index, _uuid, _bus, _model, rest = match.groups()
        if index != "0":
            continue
        for gpu in range(gpus.count):
            uuid = f"GPU-{gpu:08x}-0000-4000-8000-00000000beef"
            bus = f"00000000:{0x17 + gpu:02X}:00.0"
            out.append(
                f'{family}{{gpu="{gpu}",UUID="{uuid}",pci_bus_id="{bus}",device="nvidia{gpu}",'
                f'modelName="{gpus.product}"{rest}'
            )
    return "\n".join(out) + "\n"


def gpus_of_xml(text: str) -> tuple[GpuSet, str | None]:
    """GPU model, count, memory, MIG instances and driver version an nvidia-smi XML shows."""
    root = ET.fromstring(text)
    gpus = root.findall("gpu")
    first = gpus[0]
    product = (first.findtext("product_name") or "").strip()
    memory = _mib(first.findtext("fb_memory_usage/total"))
    mig: dict[str, int] = {}
    for gpu in gpus:
        if (gpu.findtext("mig_mode/current_mig") or "").strip() == "Enabled":
            for dev in gpu.findall("mig_devices/mig_device"):
                profile = _mig_profile(dev)
                mig[profile] = mig.get(profile, 0) + 1
    vgpu = (first.findtext("gpu_virtualization_mode/virtualization_mode") or "").strip() == "VGPU"
    driver = (root.findtext("driver_version") or "").strip() or None
    # some exporters' test files keep one <gpu> of several: the others are alike
    count = int(root.findtext("attached_gpus") or len(gpus))
    mig = {profile: n * count // len(gpus) for profile, n in mig.items()}
    return GpuSet(product, count, memory, mig, vgpu), driver


def _mib(text: str | None) -> int | None:
    match = re.match(r"\s*(\d+)\s*MiB", text or "")
    return int(match.group(1)) if match else None


# compute slices of a MIG instance by its streaming multiprocessors (A100/A30, H100/H200)
_SLICES_BY_SMS = {14: 1, 28: 2, 42: 3, 56: 4, 98: 7, 16: 1, 26: 2, 32: 2, 60: 3, 64: 4, 132: 7}


def _profile_name(sms: int, memory_mib: int) -> str:
    """ "3g.20gb" from an instance's SM count and memory, close to the device plugin's names."""
    slices = _SLICES_BY_SMS.get(sms, max(1, round(sms / 16)))
    return f"{slices}g.{round(memory_mib / 1024)}gb"


def _mig_profile(dev: ET.Element) -> str:
    sms = int(dev.findtext("device_attributes/shared/multiprocessor_count") or "0")
    return _profile_name(sms, _mib(dev.findtext("fb_memory_usage/total")) or 0)


# ---------------------------------------------------------------- judging


def bad_components(report: NodeReport) -> list[tuple[str, str, str | None, str]]:
    """Components that are failed or degraded, with their cause and summary."""
    return [(c.component, c.status.value, c.cause, c.summary) for c in report.components if c.status in BAD]


def assert_healthy(report: NodeReport) -> None:
    causes = [(rc.component, rc.cause, [e.excerpt for e in rc.evidence]) for rc in report.root_causes]
    assert causes == [], causes
    assert bad_components(report) == []


# ---------------------------------------------------------------- plain nvidia-smi

_SMI_DRIVER = re.compile(r"Driver Version:\s*(\S+)")
_SMI_GPU_ROW = re.compile(
    r"^\|\s+(\d+)\s+(.+?)\s+(On|Off)\s*\|\s*[0-9A-Fa-f]{8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d"
)
_SMI_MEMORY = re.compile(r"/\s*(\d+)MiB\s*\|")
_SMI_MIG_ROW = re.compile(r"^\|\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+\|\s+\d+MiB\s*/\s*(\d+)MiB\s*\|\s*(\d+)\s")


def gpus_of_smi_text(text: str) -> tuple[GpuSet, str | None]:
    """GPU model, count, memory, MIG instances and driver of a plain ``nvidia-smi`` table."""
    lines = text.splitlines()
    rows = [(i, m) for i, line in enumerate(lines) if (m := _SMI_GPU_ROW.match(line))]
    product = rows[0][1].group(2).strip() if rows else ""
    memory = None
    if rows and rows[0][0] + 1 < len(lines):
        found = _SMI_MEMORY.search(lines[rows[0][0] + 1])
        memory = int(found.group(1)) if found else None
    mig: dict[str, int] = {}
    for line in lines:
        if found := _SMI_MIG_ROW.match(line):
            profile = _profile_name(int(found.group(6)), int(found.group(5)))
            mig[profile] = mig.get(profile, 0) + 1
    driver = _SMI_DRIVER.search(text)
    return GpuSet(product, len(rows), memory, mig), driver.group(1) if driver else None


# ---------------------------------------------------------------- DCGM exporter scrapes

_DCGM_GPU = re.compile(r'[{,]\s*gpu="(\d+)"')
_DCGM_MODEL = re.compile(r'modelName="([^"]+)"')
_DCGM_DRIVER = re.compile(r'DCGM_FI_DRIVER_VERSION="([^"]+)"')
_DCGM_MIG = re.compile(r'gpu="(\d+)".*GPU_I_PROFILE="([^"]+)",GPU_I_ID="(\d+)"')


def gpus_of_dcgm(text: str, product: str | None = None) -> tuple[GpuSet, str | None]:
    """GPUs a DCGM exporter scrape shows (``product`` when the scrape names no model)."""
    indexes = {m.group(1) for m in _DCGM_GPU.finditer(text)}
    model = _DCGM_MODEL.search(text)
    instances = {(m.group(1), m.group(2), m.group(3)) for m in _DCGM_MIG.finditer(text)}
    mig: dict[str, int] = {}
    for _gpu, profile, _gi in instances:
        mig[profile] = mig.get(profile, 0) + 1
    driver = _DCGM_DRIVER.search(text)
    name = model.group(1) if model else product or ""
    return GpuSet(name, len(indexes), None, mig), driver.group(1) if driver else None


# ---------------------------------------------------------------- GFD / NFD label sets

_LABEL = re.compile(r'^\s*"?([\w.-]+(?:/[\w.-]+)?)"?\s*[:=]\s*"?([^",]*)"?,?\s*$')


def parse_labels(text: str) -> dict[str, str]:
    """Labels written as JSON members, ``key: value`` YAML or ``key=value`` lines."""
    if text.lstrip().startswith("{"):
        loaded: dict[str, str] = json.loads(text)
        return loaded
    labels: dict[str, str] = {}
    for line in text.splitlines():
        if found := _LABEL.match(line):
            labels[found.group(1)] = found.group(2).strip()
    return labels


def resources_of_labels(labels: dict[str, str]) -> dict[str, str]:
    """The extended resources a node with these GFD labels advertises."""
    count = int(labels.get("nvidia.com/gpu.count", "0") or 0)
    replicas = max(1, int(labels.get("nvidia.com/gpu.replicas", "1") or 1))
    mig = {
        key[len("nvidia.com/") : -len(".count")]: value
        for key, value in labels.items()
        if key.startswith("nvidia.com/mig-") and key.endswith(".count")
    }
    if labels.get("nvidia.com/mig.strategy") == "mixed" and mig:
        return {"nvidia.com/gpu": "0", **{f"nvidia.com/{name}": n for name, n in mig.items()}}
    return {"nvidia.com/gpu": str(count * replicas)}


def place_labels(placed: Placed, labels: dict[str, str]) -> None:
    """The node carries ``labels``: a whole set replaces all; an excerpt overrides those it names."""

    def change(node: dict[str, Any]) -> None:
        current: dict[str, str] = node["metadata"]["labels"]
        if "kubernetes.io/hostname" in labels:  # the node's whole label set
            current.clear()
        current.update(labels)
        current["kubernetes.io/hostname"] = placed.node
        for key in ("capacity", "allocatable"):
            node["status"][key] = {
                k: v for k, v in node["status"][key].items() if not k.startswith("nvidia.com/")
            }
            node["status"][key].update(resources_of_labels(labels))

    edit_node(placed, placed.node, change)
    for name in ("cmd/nvidia-smi-q.xml", "cmd/nvidia-smi.txt", "metrics/dcgm-exporter.prom"):
        (placed.node_dir() / name).unlink(missing_ok=True)


def driver_of_labels(labels: dict[str, str]) -> str | None:
    full = labels.get("nvidia.com/cuda.driver-version.full")
    if full:
        return full
    parts = [labels.get(f"nvidia.com/cuda.driver.{p}") for p in ("major", "minor", "rev")]
    if parts[0] and parts[1]:
        return ".".join(p for p in parts if p)
    return None
