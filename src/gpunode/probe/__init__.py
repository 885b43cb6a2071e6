"""``gpunode probe``: read what a GPU node is really running, on the node itself.

The probe collects facts (NVML, /proc, /sys, kernel log, runtime configs) without
changing anything, records every failure as a fact, and can write what it read in
the bundle layout so the same checks run on it. The JSON shape is in docs/probe.md.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

import msgspec

from gpunode import __version__
from gpunode.bounded import Ran, run_capped
from gpunode.errors import BundleError
from gpunode.probe.host import collect_host
from gpunode.probe.host_facts import HostFacts
from gpunode.probe.hostfs import HostFS
from gpunode.probe.interconnect import collect_interconnect
from gpunode.probe.journal import read_journals
from gpunode.probe.nvml import NvmlFacts, NvmlLib, collect_nvml
from gpunode.probe.result import PROBE_FORMAT, InterconnectFacts, ProbeResult, load_probe_json, probe_json

BUNDLE_FORMAT = "gpunode-bundle/v1"
NVIDIA_SMI_TIMEOUT_S = 60.0
MAX_NVIDIA_SMI_BYTES = 8 * 1024 * 1024

__all__ = [
    "HostFacts",
    "InterconnectFacts",
    "NvmlFacts",
    "ProbeResult",
    "load_probe_json",
    "probe_json",
    "run_probe",
    "write_probe_bundle",
]


T = TypeVar("T")


def run_probe(
    host_root: str = "/",
    node_name: str | None = None,
    *,
    run_nvidia_smi: bool = False,
    kernel_log: bool = True,
    nvml_lib: NvmlLib | None = None,
) -> ProbeResult:
    """Probe this node read-only; never raises for a broken driver or host."""
    started = time.perf_counter()
    fs = HostFS(host_root)
    errors: list[str] = []
    timings: dict[str, float] = {}
    nvml = _step("nvml", lambda: collect_nvml(fs.root, nvml_lib), _no_nvml, errors, timings)
    timings["nvml_init"] = nvml.init_seconds
    host, log_text = _step(
        "host", lambda: collect_host(fs, kernel_log), lambda: (HostFacts(), None), errors, timings
    )
    links = _step(
        "interconnect", lambda: collect_interconnect(fs, nvml, host), InterconnectFacts, errors, timings
    )
    raw = {f"files{path}": text for path, text in fs.texts.items()}
    if log_text is not None:
        raw["cmd/dmesg.txt"] = log_text
    journals: dict[str, str] = _step("journal", lambda: read_journals(fs.root), dict, errors, timings)
    raw.update({f"cmd/{name}": text for name, text in journals.items()})
    smi_state = _nvidia_smi(raw, errors, timings) if run_nvidia_smi else "not_run"
    return ProbeResult(
        format=PROBE_FORMAT,
        node_name=node_name or _node_name(fs),
        host_root=fs.root,
        collected_at=datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        gpunode_version=__version__,
        duration_seconds=time.perf_counter() - started,
        timings=timings,
        nvml=nvml,
        host=host,
        nvidia_smi=smi_state,
        errors=tuple(errors),
        interconnect=links,
        raw=raw,
    )


def _step(
    name: str,
    action: Callable[[], T],
    fallback: Callable[[], T],
    errors: list[str],
    timings: dict[str, float],
) -> T:
    """Run one probe step; an unexpected failure is recorded and the probe goes on."""
    started = time.perf_counter()
    try:
        return action()
    except Exception as exc:  # a probe step must never take the whole probe down
        errors.append(f"{name}: {type(exc).__name__}: {exc}")
        return fallback()
    finally:
        timings[name] = time.perf_counter() - started


def _no_nvml() -> NvmlFacts:
    return NvmlFacts(None, False, "probe_error", "NVML step failed; see errors", 0.0, 0.0)


def _node_name(fs: HostFS) -> str:
    """NODE_NAME (downward API in the agent), else the host's hostname."""
    from_env = os.environ.get("NODE_NAME")
    if from_env:
        return from_env
    hostname = fs.read("/proc/sys/kernel/hostname", keep=False)
    return (hostname or "").strip() or socket.gethostname()


def _nvidia_smi(raw: dict[str, str], errors: list[str], timings: dict[str, float]) -> str:
    """Run ``nvidia-smi -q -x`` and ``nvidia-smi`` (read-only queries) when asked to."""
    binary = shutil.which("nvidia-smi")
    if binary is None:
        return "not_found"
    started = time.perf_counter()
    try:
        xml = _run([binary, "-q", "-x"])
        table = _run([binary])
    except (OSError, subprocess.SubprocessError) as exc:
        errors.append(f"nvidia-smi: {exc}")
        return "failed"
    finally:
        timings["nvidia_smi"] = time.perf_counter() - started
    raw["cmd/nvidia-smi.txt"] = table.stdout[:MAX_NVIDIA_SMI_BYTES].decode(errors="replace")
    if xml.returncode != 0:
        return f"exit {xml.returncode}"
    raw["cmd/nvidia-smi-q.xml"] = xml.stdout[:MAX_NVIDIA_SMI_BYTES].decode(errors="replace")
    return "ok"


def _run(argv: list[str]) -> Ran:
    """nvidia-smi's output, read no further than MAX_NVIDIA_SMI_BYTES (bounded.run_capped):
    a cut XML fails to parse, so the GPUs are unknown, never judged from a part."""
    return run_capped(argv, timeout=NVIDIA_SMI_TIMEOUT_S, max_bytes=MAX_NVIDIA_SMI_BYTES + 1)


def write_probe_bundle(result: ProbeResult, bundle_dir: Path) -> None:
    """Write the probe in the bundle layout: facts, raw command output and host files."""
    node = result.node_name.replace("/", "_") or "unknown-node"
    node_dir = Path(bundle_dir) / "nodes" / node
    _write(node_dir / "cmd" / "gpunode-probe.json", probe_json(result))
    for rel, text in result.raw.items():
        _write(node_dir / _safe_relative(rel), text.encode())
    manifest = Path(bundle_dir) / "manifest.json"
    if not manifest.exists():
        _write(manifest, msgspec.json.format(msgspec.json.encode(_manifest(result))) + b"\n")


def _safe_relative(rel: str) -> str:
    """Only ``cmd/...`` and ``files/...`` paths without ``..`` may be written."""
    parts = PurePosixPath(rel).parts
    if not parts or parts[0] not in ("cmd", "files") or ".." in parts or len(parts) < 2:
        raise BundleError(f"refusing to write probe output to {rel!r}")
    return str(PurePosixPath(*parts))


def _manifest(result: ProbeResult) -> dict[str, Any]:
    return {
        "format": BUNDLE_FORMAT,
        "collected_at": result.collected_at,
        "source": "probe",
        "partial": bool(result.errors),
        "warnings": list(result.errors),
        "node": result.node_name,
    }


def _write(path: Path, data: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    except OSError as exc:
        raise BundleError(f"{path}: cannot write: {exc.strerror or exc}") from None
