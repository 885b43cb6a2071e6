"""Write a World as a bundle directory (format v1), or a .tar.gz of one."""

from __future__ import annotations

import gzip
import os
import shutil
import tarfile
import tempfile
from pathlib import Path

import msgspec

from gpunode.errors import BundleError
from gpunode.sim import cluster_objects, host, ids, links
from gpunode.sim.k8s import Obj, object_list
from gpunode.sim.metrics import GpuUse, dcgm_scrape, node_exporter_scrape
from gpunode.sim.smi import GpuLoad, smi_table, smi_xml
from gpunode.sim.world import NodeState, World

_ENCODER = msgspec.json.Encoder(order="sorted")


def to_json(obj: object) -> bytes:
    """kubectl-style JSON: sorted keys, 4-space indent, trailing newline."""
    return msgspec.json.format(_ENCODER.encode(obj), indent=4) + b"\n"


def write(world: World, out: Path) -> Path:
    """Write the bundle to `out` (a directory, or a file ending in .tar.gz)."""
    if out.name.endswith((".tar.gz", ".tgz")):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / out.name.removesuffix(".tar.gz").removesuffix(".tgz")
            _write_dir(world, root)
            _prepare_target(out, is_dir=False)
            _write_tarball(root, out)
        return out
    _prepare_target(out, is_dir=True)
    _write_dir(world, out)
    return out


def _write_tarball(root: Path, out: Path) -> None:
    """Gzip with a fixed header timestamp and sorted, owner-less entries (reproducible)."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with (
            out.open("wb") as raw,
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz,
            tarfile.open(fileobj=gz, mode="w") as tar,
        ):
            tar.add(root, arcname=root.name, filter=_deterministic)
    except OSError as exc:
        raise BundleError(f"{out}: cannot write bundle: {exc.strerror}") from exc


def _deterministic(info: tarfile.TarInfo) -> tarfile.TarInfo:
    """Fixed owner and mtime so the archive is reproducible."""
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    info.mtime = 0
    return info


def _prepare_target(out: Path, is_dir: bool) -> None:
    """Refuse to overwrite anything but an earlier simulated bundle."""
    if not out.exists():
        return
    if is_dir and out.is_dir():
        if not any(out.iterdir()):
            return
        if _is_sim_bundle(out):
            shutil.rmtree(out)
            return
    if not is_dir and out.is_file():
        out.unlink()
        return
    raise BundleError(f"{out}: already exists and is not a simulated bundle; choose another path")


def _is_sim_bundle(path: Path) -> bool:
    try:
        manifest = msgspec.json.decode((path / "manifest.json").read_bytes())
    except (OSError, msgspec.DecodeError):
        return False
    return isinstance(manifest, dict) and manifest.get("source") == "sim"


class _Files:
    """Writes a bundle's files under one root, making each folder once: a bundle is
    thousands of small files in a few hundred folders, and a `mkdir -p` and a `Path` per
    file were a fifth of the CPU of writing one."""

    def __init__(self, root: Path) -> None:
        self.root = str(root)
        self.made: set[str] = {self.root}  # the caller made it

    def put(self, rel: str, data: bytes | str) -> None:
        """Write `data` to `rel` (a POSIX path under the root)."""
        path = f"{self.root}/{rel}"
        self._folder(path.rpartition("/")[0])
        with open(path, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)

    def _folder(self, folder: str) -> None:
        """Make `folder` and those above it not made yet, one `mkdir` each."""
        if folder in self.made:
            return
        self._folder(folder.rpartition("/")[0])
        try:
            os.mkdir(folder)
        except FileExistsError:
            if not os.path.isdir(folder):
                raise
        self.made.add(folder)


def _write_dir(world: World, root: Path) -> None:
    try:
        root.mkdir(parents=True, exist_ok=True)
        files = _Files(root)
        files.put("manifest.json", to_json(manifest(world)))
        _write_cluster(world, files)
        _write_logs(world, files)
        for node in world.gpu_nodes():
            if node.data and node.host.reachable:
                for rel, data in node_files(world, node).items():
                    files.put(f"nodes/{node.name}/{rel}", data)
    except OSError as exc:
        raise BundleError(f"{root}: cannot write bundle: {exc.strerror}") from exc


def manifest(world: World) -> Obj:
    """manifest.json: format, provenance and what could not be collected."""
    s = world.scenario
    return {
        "format": "gpunode-bundle/v1",
        "collected_at": ids.rfc3339(world.collected_at),
        "source": "sim",
        "cluster_name": s.cluster.name,
        "api_server": s.cluster.api_server,
        "scenario": s.name,
        "partial": bool(world.warnings),
        "warnings": list(world.warnings),
    }


def _sorted_items(objs: list[Obj]) -> list[Obj]:
    """API list order: by namespace, then name."""
    return sorted(objs, key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))


def _write_cluster(world: World, files: _Files) -> None:
    lists: dict[str, list[Obj]] = {
        "nodes": [n.obj for n in world.nodes.values()],
        "pods": list(world.pods.values()),
        "daemonsets": list(world.daemonsets.values()),
        "deployments": list(world.deployments.values()),
        "events": world.events,
    } | world.resources
    for name, items in lists.items():
        files.put(f"cluster/{name}.json", to_json(object_list(_sorted_items(items))))
    files.put("cluster/version.json", to_json(cluster_objects.version(world)))


def _write_logs(world: World, files: _Files) -> None:
    for key, text in world.logs.items():
        ns, pod, container = key.split("/", 2)
        if f"{ns}/{pod}" in world.pods:
            files.put(f"logs/{ns}/{pod}/{container}.log", text)


def node_files(world: World, node: NodeState) -> dict[str, str]:
    """Everything a node probe would have collected on `node`."""
    h = node.host
    out: dict[str, str] = {"cmd/dmesg.txt": host.dmesg(world, node), "cmd/lsmod.txt": host.lsmod(node)}
    out |= _smi_files(world, node)
    out |= {f"cmd/{name}": text for name, text in h.links.items()}
    if h.fabric_gpus and "cmd/nvidia-smi-q.xml" in out:
        out["cmd/nvidia-smi-q.xml"] = links.patch_fabric(out["cmd/nvidia-smi-q.xml"], h.fabric_gpus)
    if h.driver_loaded or h.nvml_error:
        out["files/proc/driver/nvidia/version"] = host.proc_version(h.module_version)
    if world.scenario.has("gpu-operator"):
        out |= host.runtime_files(world.scenario, h.runtime_patched)
    out |= {f"{host.VALIDATIONS}/{name}": text for name, text in sorted(h.validations.items())}
    out |= _metric_files(world, node)
    return out


def _uses(world: World, node: NodeState) -> list[GpuUse]:
    return world.gpu_use.get(node.name) or [GpuUse() for _ in node.gpus]


def _smi_files(world: World, node: NodeState) -> dict[str, str]:
    """nvidia-smi outputs, or the error it prints when NVML cannot start."""
    h = node.host
    if h.nvml_error:
        return {"cmd/nvidia-smi.txt": h.nvml_error}
    if not (h.driver_loaded and h.nvidia_smi) or node.model is None:
        return {}
    visible = [g for g in node.gpus if not g.lost]
    uses = dict(zip([g.index for g in node.gpus], _uses(world, node), strict=True))
    loads = [GpuLoad(uses[g.index].busy, 2458311 + 97 * g.index) for g in visible]
    at = world.collected_at - ids.jitter("smi" + node.name, 50)
    table = smi_table(visible, node.model, loads, at)
    lost = [g for g in node.gpus if g.lost]
    prefix = "".join(
        f"Unable to determine the device handle for GPU{g.bus_id[4:]}: Unknown Error\n" for g in lost
    )
    return {
        "cmd/nvidia-smi-q.xml": smi_xml(
            visible, node.model, loads, (h.fabric_state, h.fabric_status), at, mig_profiles=h.mig_profiles
        ),
        "cmd/nvidia-smi.txt": prefix + table,
    }


def _metric_files(world: World, node: NodeState) -> dict[str, str]:
    """Exporter scrapes, present only where the exporter pod is up."""
    out: dict[str, str] = {}
    dcgm = world.ds_pod_key("dcgm-exporter", node.name)
    if dcgm and node.host.dcgm_scrape and _all_running(world, dcgm):
        out["metrics/dcgm-exporter.prom"] = dcgm_scrape(node, _uses(world, node))
    exporter = world.ds_pod_key("node-exporter", node.name)
    if exporter and _all_running(world, exporter):
        boot = int(host.boot_time(world, node).timestamp())
        out["metrics/node-exporter.prom"] = node_exporter_scrape(node, boot)
    return out


def _all_running(world: World, key: str) -> bool:
    return all(c.state == "running" for c in world.ctrs[key] if not c.init)
